"""The typed stores as a DuckDB projection of the event log, caught up by replaying new segments.

Tables (every row carries its namespace; every read filters on it): ``store_block``
and ``store_item``, declared once in ``poimen.index.stores`` with the fold that
fills them (the index build uses the same fold over the whole log), and
``store_applied`` — how much of the log index has been replayed, and its last
entry hash.

Each process keeps one in-memory replica per log (``StoreProjection.for_log``):
built by replaying the log's store writes on first use, then caught up from
the index before every read and after every write, so a write is read back at
once and writes from other processes (the CLI beside an MCP server) show up
on the next call. The log is the only thing processes share; no database file
is ever opened by two of them. ``rebuild`` replays the log into a DuckDB file
(``<root>/projections/stores.duckdb`` by default) for SQL readers and compares
it with what that file held before. Replay is one fold in index order, so an
incrementally kept replica and a rebuilt one hold the same rows; ``dump``
spells each store's rows as canonical JSON lines, the bytes a rebuild must
reproduce.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from poimen.agent.stores import CORE_BLOCKS, RUN_PREFIX
from poimen.domain import EventKind, TYPED_STORES, canonical_json, sha256_text
from poimen.log.events import Event
from poimen.log.forgotten import FORGET_PREFIX, forgotten
from poimen.index.schema import create_table_sql
from poimen.index.stores import BLOCK_FIELDS, ITEM_FIELDS, STORE_PROJECTIONS, fold_write
from poimen.log.payloads import StoreWrite
from poimen.log.storage.base import INDEX
from poimen.log.store import EventLog

SCHEMA = [create_table_sql(p.name, p.schema(0), p.key) for p in STORE_PROJECTIONS] + [
    "CREATE TABLE store_applied (id INTEGER PRIMARY KEY, entries BIGINT NOT NULL, head VARCHAR NOT NULL)",
]
TABLES = ("store_block", "store_item", "store_applied")


def default_db(root: str | Path) -> Path:
    return Path(root) / "projections" / "stores.duckdb"


def connect(db_path: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection with the store tables: in memory, or the given DuckDB file."""
    if db_path:
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db_path) if db_path else ":memory:")
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    for name, statement in zip(TABLES, SCHEMA):
        if name not in have:
            con.execute(statement)
    return con


class StoreProjection:
    """The in-memory store replica of one log in this process; ``session()`` serialises threads."""

    _shared: dict[Path | str, "StoreProjection"] = {}
    _shared_lock = threading.Lock()

    def __init__(self, log: EventLog):
        self.log = log
        self.con = connect()
        self.lock = threading.RLock()
        self._stamp: tuple[int, int] | None = None

    @classmethod
    def for_log(cls, root: str | Path) -> "StoreProjection":
        log = EventLog(root)
        key = log.root.resolve() if isinstance(log.root, Path) else log.root  # a folder, or an object store URI
        with cls._shared_lock:
            if key not in cls._shared:
                cls._shared[key] = cls(log)
            return cls._shared[key]

    def refresh(self, log: EventLog | None = None) -> int:
        """Catch up with the log unless its index is unchanged since the last look (a store that cannot tell
        without a request, an object store, is read: catching up with an unchanged index applies nothing).
        ``log``: the writer's own handle of this log, inside its exclusive session (whose reads of the index on an
        object store are the session's copy, not a request each)."""
        log = log or self.log
        stamp = log.store.stamp(INDEX)
        if stamp is not None and stamp == self._stamp:
            return 0
        applied = catch_up(self.con, log)
        self._stamp = stamp
        return applied

    @contextmanager
    def session(self, log: EventLog | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self.refresh(log)
            yield self.con


def _state(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    row = con.execute("SELECT entries, head FROM store_applied WHERE id = 1").fetchone()
    return (int(row[0]), row[1]) if row else (0, "")


def apply(con: duckdb.DuckDBPyConnection, event: Event, pos: int) -> None:
    """Fold one ``store_write`` event into the replica with the index's own fold (the only place rows change)."""
    a = StoreWrite.from_event(event)
    row = con.execute("SELECT version FROM store_block WHERE namespace = ? AND block = ?", [a.namespace, a.block]).fetchone()
    table, values = fold_write(event, pos, row[0] if row else 0)
    if table == "store_block":
        con.execute("DELETE FROM store_block WHERE namespace = ? AND block = ?", [a.namespace, a.block])
    names = [f for f, _ in (BLOCK_FIELDS if table == "store_block" else ITEM_FIELDS)]
    # Table and column names come from code constants (index.stores), never from data.
    con.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                [values[n] for n in names])


def catch_up(con: duckdb.DuckDBPyConnection, log: EventLog) -> int:
    """Replay the sealed store writes the projection has not seen; returns how many events were applied.

    If the log no longer starts with what was applied (another log, or a rewritten one), start over.
    """
    entries = log.index()
    applied, head = _state(con)
    forgot = any(e["run_id"].startswith(FORGET_PREFIX) for e in entries[applied:])
    if applied > len(entries) or (applied and entries[applied - 1]["hash"] != head) or (applied and forgot):
        reset(con)  # a forget retires writes already applied: replay without them
        applied = 0
    if applied == len(entries):
        return 0
    count = 0
    retired = forgotten(log, entries).runs if forgot else frozenset()
    writes = [e for e in entries[applied:] if e["run_id"].startswith(RUN_PREFIX) and e["run_id"] not in retired]
    con.execute("BEGIN TRANSACTION")
    try:
        for pos, event in _read_writes(con, log, writes):
            if event.kind == EventKind.STORE_WRITE:
                apply(con, event, pos)
                count += 1
        con.execute("DELETE FROM store_applied")
        con.execute("INSERT INTO store_applied VALUES (1, ?, ?)", [len(entries), entries[-1]["hash"]])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return count


def _read_writes(con: duckdb.DuckDBPyConnection, log: EventLog, entries: list[dict]) -> Iterator[tuple[int, Event]]:
    """The events of the given index entries in index order; many segments are read in one parquet scan."""
    if len(entries) < 16 or not isinstance(log.root, Path):  # a scan reads local files; an object is read whole
        for entry in entries:
            for event in log.run_events(entry["run_id"]):
                yield int(entry["n"]), event
        return
    pos = {str((log.root / e["file"]).resolve()): int(e["n"]) for e in entries}
    cur = con.execute("SELECT * FROM read_parquet(?, filename = true)", [list(pos)])
    cols = [d[0] for d in cur.description]
    rows = sorted((dict(zip(cols, r)) for r in cur.fetchall()), key=lambda r: (pos[str(Path(r["filename"]).resolve())], r["seq"]))
    for row in rows:
        yield pos[str(Path(row["filename"]).resolve())], Event.from_row(row)


def reset(con: duckdb.DuckDBPyConnection) -> None:
    for table in TABLES:
        con.execute(f"DELETE FROM {table}")  # table names are constants, not input


def dump(con: duckdb.DuckDBPyConnection, namespace: str | None = None) -> dict[str, bytes]:
    """Each store's rows as canonical JSON lines (namespace, then block or position order)."""
    where, params = ("WHERE namespace = ?", [namespace]) if namespace else ("", [])
    out: dict[str, list[str]] = {s: [] for s in TYPED_STORES}
    cols = [f for f, _ in BLOCK_FIELDS]
    for row in con.execute(f"SELECT {', '.join(cols)} FROM store_block {where} ORDER BY namespace, block", params).fetchall():
        out[row[2]].append(canonical_json(dict(zip(cols, row))))
    cols = [f for f, _ in ITEM_FIELDS]
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
    """Replay the log into the DuckDB file at ``db_path`` from empty; report stores whose content changed."""
    log = EventLog(log_root)
    con = connect(db_path)
    try:
        before = {s: sha256_text(b.decode()) for s, b in dump(con).items()}
        reset(con)
        events = catch_up(con, log)
        after = {s: sha256_text(b.decode()) for s, b in dump(con).items()}
    finally:
        con.close()
    return RebuildReport(events, before, after)


def replay(log_root: str | Path) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory projection of the log (for checks: compare its ``dump`` with a live one)."""
    con = connect()
    catch_up(con, EventLog(log_root))
    return con


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
