"""Where a log's files live: a local folder or an object store, behind one small interface (``base.LogStore``).

The log needs five things of its storage: whole-object reads, atomic whole-object
puts (a reader sees the old bytes or the new, never half), put-if-absent, a
listing, and one *commit*: an append to ``index.jsonl`` that concurrent writers
of different runs can all make without losing each other's lines.

- ``local.LocalStore`` (a folder, or ``file://``): the commit is an exclusive ``flock`` on ``index.jsonl``.
- ``object_store.ObjectStore``, an object store with conditional puts: ``s3.S3Store`` (``s3://``, through s3fs)
  and ``gcs.GCSStore`` (``gs://``, through gcsfs). The commit is optimistic: a put only if the index is still at
  the version read, retried on a lost race.

Whole-log writers (typed-store writes, ``mem forget``) read the log and append
after what they read, so they need no other commit between their read and
theirs: an *exclusive session*. Locally it is ``LOCK`` held exclusive: no
other writer gets in. On an object store nothing can keep other machines out,
so the session is optimistic: it records the index's version when it begins,
and its index commits (and segment replacements) are conditional on nothing
else having moved since; otherwise ``SessionConflict``, and
``EventLog.exclusive`` redoes the caller's whole read-modify-write.

Names are ``/``-separated and relative to the root. ``docs/scale.md`` has the
protocol and its failure cases. This package's own face is the chooser: ``open_store`` opens the store a log root
names, ``local_folder`` the folder of a local one (both by ``poimen.settings``' one rule for what a root names).
"""

from __future__ import annotations

from pathlib import Path

from poimen.log.storage.base import LogStore
from poimen.log.storage.gcs import GCSStore
from poimen.log.storage.local import LocalStore
from poimen.log.storage.s3 import S3Store
from poimen.settings import local_folder, log_root

__all__ = ["local_folder", "open_store"]


def open_store(root: str | Path, **storage_options) -> LogStore:
    """The store for a log root: a path or ``file://`` folder, ``s3://bucket/prefix`` or ``gs://bucket/prefix``
    (``poimen.settings.log_root`` is the one rule for what a root names, and refuses any other in one line)."""
    where = log_root(str(root))
    if isinstance(where, Path):
        return LocalStore(where.expanduser())
    return (S3Store if where.startswith(f"{S3Store.scheme}://") else GCSStore)(where, **storage_options)
