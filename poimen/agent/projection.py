"""The typed stores as a DuckDB projection of the event log, kept current by replaying new segments.

Tables (every row carries its namespace; every read filters on it)::

    store_block    namespace, block, store, text, sha, version, ts, event_hash   (current core blocks)
    store_item     namespace, store, pos, sha, text, ts, source, event_hash      (facts, events, rules)
    store_applied  entries, head    how much of the log index has been replayed, and its last entry hash

``catch_up`` replays the index entries not yet applied, in index order; a full
rebuild is the same replay from an empty database, so an incrementally kept
projection and a rebuilt one hold the same rows. ``dump`` spells each store's
rows as canonical JSON lines: the bytes a rebuild must reproduce.

DuckDB lets one process at a time open a file for writing, so the projection
is opened per operation under an advisory file lock (``<db>.lock``); the CLI,
an MCP server and a Python agent can share one store folder.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from poimen.agent.stores import CORE_BLOCKS, RUN_PREFIX
from poimen.domain import EventKind, TYPED_STORES, canonical_json, sha256_text
from poimen.log.events import Event
from poimen.log.store import EventLog

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS store_block (
        namespace VARCHAR NOT NULL, block VARCHAR NOT NULL, store VARCHAR NOT NULL, text VARCHAR NOT NULL,
        sha VARCHAR NOT NULL, version INTEGER NOT NULL, ts VARCHAR NOT NULL, event_hash VARCHAR NOT NULL,
        PRIMARY KEY (namespace, block))""",
    """CREATE TABLE IF NOT EXISTS store_item (
        namespace VARCHAR NOT NULL, store VARCHAR NOT NULL, pos BIGINT NOT NULL, sha VARCHAR NOT NULL,
        text VARCHAR NOT NULL, ts VARCHAR NOT NULL, source VARCHAR NOT NULL, event_hash VARCHAR NOT NULL,
        PRIMARY KEY (namespace, store, pos))""",
    "CREATE TABLE IF NOT EXISTS store_applied (id INTEGER PRIMARY KEY, entries BIGINT NOT NULL, head VARCHAR NOT NULL)",
]
TABLES = ("store_block", "store_item", "store_applied")


def default_db(root: str | Path) -> Path:
    return Path(root) / "projections" / "stores.duckdb"


@contextmanager
def open_projection(db_path: str | Path, timeout: float = 30.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the store projection, held under its file lock for the length of the block."""
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with (db_path.parent / f"{db_path.name}.lock").open("a") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{db_path}: store projection stayed locked for {timeout:.0f}s") from None
                time.sleep(0.02)
        con = duckdb.connect(str(db_path))
        try:
            for statement in SCHEMA:
                con.execute(statement)
            yield con
        finally:
            con.close()


def _state(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    row = con.execute("SELECT entries, head FROM store_applied WHERE id = 1").fetchone()
    return (int(row[0]), row[1]) if row else (0, "")


def apply(con: duckdb.DuckDBPyConnection, event: Event, pos: int) -> None:
    """Fold one ``store_write`` event into the projection (the only place rows change)."""
    a = event.attributes
    ns, store, block = a["namespace"], a["store"], a.get("block", "")
    if block:
        row = con.execute("SELECT version FROM store_block WHERE namespace = ? AND block = ?", [ns, block]).fetchone()
        version = (row[0] if row else 0) + 1
        con.execute("DELETE FROM store_block WHERE namespace = ? AND block = ?", [ns, block])
        con.execute("INSERT INTO store_block VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [ns, block, store, event.text, event.sha, version, a["ts"], event.hash])
    else:
        con.execute("INSERT INTO store_item VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [ns, store, pos, event.sha, event.text, a["ts"], a.get("source_run_id", ""), event.hash])


def catch_up(con: duckdb.DuckDBPyConnection, log: EventLog) -> int:
    """Replay the sealed store writes the projection has not seen; returns how many events were applied.

    If the log no longer starts with what was applied (another log, or a rewritten one), start over.
    """
    entries = log.index()
    applied, head = _state(con)
    if applied > len(entries) or (applied and entries[applied - 1]["hash"] != head):
        reset(con)
        applied = 0
    if applied == len(entries):
        return 0
    count = 0
    con.execute("BEGIN TRANSACTION")
    try:
        for entry in entries[applied:]:
            if entry["run_id"].startswith(RUN_PREFIX):
                for event in log.run_events(entry["run_id"]):
                    if event.kind == EventKind.STORE_WRITE:
                        apply(con, event, int(entry["n"]))
                        count += 1
        con.execute("DELETE FROM store_applied")
        con.execute("INSERT INTO store_applied VALUES (1, ?, ?)", [len(entries), entries[-1]["hash"]])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return count


def reset(con: duckdb.DuckDBPyConnection) -> None:
    for table in TABLES:
        con.execute(f"DELETE FROM {table}")  # table names are constants, not input


def dump(con: duckdb.DuckDBPyConnection, namespace: str | None = None) -> dict[str, bytes]:
    """Each store's rows as canonical JSON lines (namespace, then block or position order)."""
    where, params = ("WHERE namespace = ?", [namespace]) if namespace else ("", [])
    out: dict[str, list[str]] = {s: [] for s in TYPED_STORES}
    cols = ["namespace", "block", "store", "text", "sha", "version", "ts", "event_hash"]
    for row in con.execute(f"SELECT {', '.join(cols)} FROM store_block {where} ORDER BY namespace, block", params).fetchall():
        out[row[2]].append(canonical_json(dict(zip(cols, row))))
    cols = ["namespace", "store", "pos", "sha", "text", "ts", "source", "event_hash"]
    for row in con.execute(f"SELECT {', '.join(cols)} FROM store_item {where} ORDER BY namespace, store, pos", params).fetchall():
        out[row[1]].append(canonical_json(dict(zip(cols, row))))
    return {s: "".join(line + "\n" for line in lines).encode("utf-8") for s, lines in out.items()}


@dataclass(frozen=True)
class RebuildReport:
    events: int
    before: dict[str, str]  # store -> sha256 of its dump before the rebuild
    after: dict[str, str]

    @property
    def differing(self) -> list[str]:
        return [s for s in TYPED_STORES if self.before.get(s) != self.after.get(s)]

    @property
    def ok(self) -> bool:
        return not self.differing


def rebuild(log_root: str | Path, db_path: str | Path) -> RebuildReport:
    """Drop the store projection and replay it from the log; report stores whose content hash changed."""
    log = EventLog(log_root)
    with open_projection(db_path) as con:
        before = {s: sha256_text(b.decode()) for s, b in dump(con).items()}
        reset(con)
        events = catch_up(con, log)
        after = {s: sha256_text(b.decode()) for s, b in dump(con).items()}
    return RebuildReport(events, before, after)


def block_rows(con: duckdb.DuckDBPyConnection, namespace: str) -> dict[str, tuple[str, str, str, int, str]]:
    """Every core block of a namespace: label -> (store, text, sha, version, ts); unwritten blocks are empty."""
    rows = {r[0]: tuple(r[1:]) for r in con.execute(
        "SELECT block, store, text, sha, version, ts FROM store_block WHERE namespace = ?", [namespace]).fetchall()}
    return {b: rows.get(b, (s, "", "", 0, "")) for b, s in CORE_BLOCKS.items()}


def item_rows(con: duckdb.DuckDBPyConnection, namespace: str, store: str, limit: int = -1,
              offset: int = 0) -> list[tuple[str, str, str, int, str]]:
    """Items of one store of a namespace, newest first: (sha, text, ts, pos, source)."""
    sql = ("SELECT sha, text, ts, pos, source FROM store_item WHERE namespace = ? AND store = ? "
           "ORDER BY pos DESC LIMIT ? OFFSET ?")
    return [tuple(r) for r in con.execute(sql, [namespace, store, limit if limit >= 0 else 1 << 62, offset]).fetchall()]
