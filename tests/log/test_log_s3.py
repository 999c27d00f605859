"""The event log on S3: a real S3 API (moto's server on 127.0.0.1, s3fs as the client) through every test of the
object-store contract (``object_store_contract.py``). Versions are ETags: ``If-None-Match: *`` creates,
``If-Match: <etag>`` replaces."""

from __future__ import annotations

from object_store_contract import ObjectStoreContract

from poimen.testing.s3_server import LocalS3


class TestS3(ObjectStoreContract):
    server_type = LocalS3
