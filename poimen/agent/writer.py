"""How a store write reaches the log: one small sealed run, under a briefly held writer lock.

Each write is its own run (``sw-…``) sealed at once with ``EventLog.append_run``:
a Parquet segment plus an index line, fsynced, so it is durable and visible to
every reader as soon as the call returns. The writer lock is taken only for
that append and the projection catch-up that follows it, so a write reads its
own write immediately.

The same lock is held for the whole of a ``mem run``. A store write waits for
it (``POIMEN_STORE_WAIT`` seconds, 10 by default), then gives up with a clear
refusal naming the holder; nothing is written and the store is unchanged.

On ``s3://`` or ``gs://`` there is no lock to wait for: the writer session is
optimistic (``poimen/log/storage/object_store.py``), and ``Memory._write`` runs its
read-modify-write through ``EventLog.exclusive``, which redoes it when another
writer committed in between.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from poimen.agent.stores import RUN_PREFIX, MemoryRefused, StoreWrite
from poimen.domain import canonical_json, sha256_text
from poimen.errors import LogLocked
from poimen.log.events import Event
from poimen.log.segments import INDEX_GENESIS
from poimen.log.store import EventLog
from poimen.settings import store_wait


@contextmanager
def writer_lock(log: EventLog, timeout: float | None = None) -> Iterator[EventLog]:
    """``log.writer()``, waiting up to ``timeout`` seconds for another writer (e.g. a long ``mem run``)."""
    timeout = store_wait() if timeout is None else timeout
    deadline = time.monotonic() + timeout
    with ExitStack() as stack:
        while True:
            try:
                stack.enter_context(log.writer())
                break
            except LogLocked as exc:
                if time.monotonic() >= deadline:
                    raise MemoryRefused(f"memory is busy: {exc}; waited {timeout:g}s, nothing was written") from None
                time.sleep(0.05)
        yield log


def write_run_id(log: EventLog, write: StoreWrite) -> str:
    """A run id unique to this write at this point of the log: the index head and the write's own body."""
    entries = log.index()
    head = entries[-1]["hash"] if entries else INDEX_GENESIS
    body = {"head": head, "namespace": write.namespace, "draft": write.draft().attrs, "text": write.text,
            "parents": list(write.parents)}
    return RUN_PREFIX + sha256_text(canonical_json(body))[:40]


def append_write(log: EventLog, write: StoreWrite) -> Event:
    """Seal one write as its own run; the caller holds ``writer_lock``."""
    return log.append_run(write_run_id(log, write), [write.draft()])[0]
