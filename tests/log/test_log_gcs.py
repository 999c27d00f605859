"""The event log on Google Cloud Storage: a real GCS JSON API (gcp-storage-emulator on 127.0.0.1 with generation
preconditions, gcsfs as the client) through every test of the object-store contract (``object_store_contract.py``).
Versions are generations: ``ifGenerationMatch=0`` creates, ``ifGenerationMatch=<generation>`` replaces."""

from __future__ import annotations

from object_store_contract import ObjectStoreContract

from poimen.testing.gcs_server import LocalGCS


class TestGCS(ObjectStoreContract):
    server_type = LocalGCS
