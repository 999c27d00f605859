"""Sealed runs: each an immutable Parquet segment, listed in order by the hash-chained ``index.jsonl``.

A segment's bytes are stable (a fixed schema, no compression or dictionaries), so the sha256 its index line
records vouches for every byte. The index only grows, by whole lines, each chained to the one before; a scan of it
reads only the lines added since the last (``scan_index``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from poimen.domain import canonical_json
from poimen.log.events import COLUMNS, Event
from poimen.log.storage.base import LogStore
from poimen.log.storage.local import LocalStore

SCHEMA = pa.schema([
    ("seq", pa.int64()), ("run_id", pa.string()), ("level", pa.string()), ("kind", pa.string()),
    ("turn", pa.int64()), ("sha", pa.string()), ("parents", pa.list_(pa.string())), ("text", pa.string()),
    ("update", pa.bool_()), ("exit", pa.bool_()), ("model_id", pa.string()), ("prompt_sha", pa.string()),
    ("attrs", pa.string()), ("prev_hash", pa.string()), ("hash", pa.string()),
])
INDEX_GENESIS = hashlib.sha256(b"poimen-index").hexdigest()
FORGET_PREFIX = "forget-"  # a forget's run id (``poimen.log.forgotten``)


def parquet_bytes(events: list[Event]) -> bytes:
    """Byte-stable Parquet: fixed schema, no compression or dictionaries (so a flipped byte stays locatable)."""
    table = pa.Table.from_pylist([e.to_row() for e in events], schema=SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="NONE", use_dictionary=False, write_statistics=False)
    return sink.getvalue().to_pybytes()


def put_segment(store: LogStore, name: str, events: list[Event]) -> tuple[str, bool]:
    """Put a sealed segment; returns the sha256 of its bytes (so sealing need not read it back) and whether it
    was created. It is put only if absent, so a segment that is already indexed is never replaced."""
    data = parquet_bytes(events)
    return hashlib.sha256(data).hexdigest(), store.put_if_absent(name, data)


def write_parquet(path: Path, events: list[Event]) -> str:
    """A segment written to a local path (temp name, fsync, rename); returns the sha256 of its bytes."""
    data = parquet_bytes(events)
    LocalStore(path.parent).put(path.name, data)
    return hashlib.sha256(data).hexdigest()


def read_parquet(path: Path) -> list[Event]:
    table = pq.read_table(path, schema=SCHEMA)
    return [Event.from_row(row) for row in table.to_pylist()]


def parse_segment(data: bytes) -> list[Event]:
    table = pq.read_table(pa.BufferReader(data), schema=SCHEMA)
    return [Event.from_row(row) for row in table.to_pylist()]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def index_entry_hash(entry: dict) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256((entry["prev"] + "\n" + canonical_json(body)).encode()).hexdigest()


# (bytes read, entries, last hash, run ids) of an index read so far.
IndexScan = tuple[int, int, str, frozenset[str]]
NO_SCAN: IndexScan = (0, 0, INDEX_GENESIS, frozenset())


def scan_index(raw: bytes, known: IndexScan = NO_SCAN) -> IndexScan:
    """The scan of the index bytes ``raw``, parsing only what ``known`` (an earlier scan of the same index) has not
    read: the index only grows by whole lines, so a scan needs just the lines added since."""
    done, n, last, ids = known
    if len(raw) < done:  # not the index we read before (replaced under us): read it whole
        done, n, last, ids = NO_SCAN
    complete = raw[: raw.rfind(b"\n") + 1]
    new = [json.loads(line) for line in complete[done:].splitlines() if line.strip()]
    if new:
        n, last, ids = n + len(new), new[-1]["hash"], ids | {e["run_id"] for e in new}
    return (len(complete), n, last, ids)


def forget_runs(ids: frozenset[str]) -> frozenset[str]:
    """The forget runs among the run ids ``ids``."""
    return frozenset(i for i in ids if i.startswith(FORGET_PREFIX))


assert set(SCHEMA.names) == set(COLUMNS)
