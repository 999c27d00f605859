"""Where events live: a per-run journal while a run is live, an immutable Parquet segment once sealed.

Layout under the log root::

    LOCK                        one writer at a time (flock), holding the writer's pid
    journal/<run_id>.jsonl      one line per resolved turn, appended with fsync
    segments/<run_id>.parquet   sealed runs: written to a temp name, fsynced, renamed
    index.jsonl                 the sealed segments, in order, hash-chained

A turn's events are written together, only after the turn resolves, so a
killed run leaves a journal of whole turns (at worst a torn last line, which
``open_run`` cuts off and ``verify`` reports as resumable). Readers look only
at the index and the segments it names, so they never see unsealed data.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from poimen._env import default_root  # noqa: F401  (re-exported: the log's folder)
from poimen.domain import canonical_json
from poimen.errors import LogCorrupt, LogLocked
from poimen.log.events import COLUMNS, SCHEME, Event, EventDraft, chain, genesis, scheme_of

SCHEMA = pa.schema([
    ("seq", pa.int64()), ("run_id", pa.string()), ("level", pa.string()), ("kind", pa.string()),
    ("turn", pa.int64()), ("sha", pa.string()), ("parents", pa.list_(pa.string())), ("text", pa.string()),
    ("update", pa.bool_()), ("exit", pa.bool_()), ("model_id", pa.string()), ("prompt_sha", pa.string()),
    ("attrs", pa.string()), ("prev_hash", pa.string()), ("hash", pa.string()),
])
INDEX_GENESIS = hashlib.sha256(b"poimen-index").hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def parquet_bytes(events: list[Event]) -> bytes:
    """Byte-stable Parquet: fixed schema, no compression or dictionaries (so a flipped byte stays locatable)."""
    table = pa.Table.from_pylist([e.to_row() for e in events], schema=SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="NONE", use_dictionary=False, write_statistics=False)
    return sink.getvalue().to_pybytes()


def write_parquet(path: Path, events: list[Event]) -> str:
    """Write a segment's bytes (``parquet_bytes``) atomically; returns their sha256, so sealing need not read back."""
    return write_atomic(path, parquet_bytes(events))


def write_atomic(path: Path, data: bytes) -> str:
    """Write to a temp name, fsync, rename over ``path``, fsync the folder: a reader sees the old file or the new."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    _fsync_dir(path.parent)
    return hashlib.sha256(data).hexdigest()


def read_parquet(path: Path) -> list[Event]:
    table = pq.read_table(path, schema=SCHEMA)
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


def run_scheme(run_id: str, events: list[Event]) -> int | None:
    """The hash scheme of a run's events (None for no events, or a first event on no genesis of the run)."""
    return scheme_of(run_id, events[0].prev_hash) if events else None


def read_journal(path: Path) -> tuple[list[Event], int, str | None]:
    """Whole turns from a journal, the byte length they span, and a note if a torn last line was found.

    A bad line anywhere but at the end is corruption, not an interrupted write.
    """
    events: list[Event] = []
    good = 0
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        last = i == len(lines) - 1  # no newline after it: the write did not finish
        try:
            if last:
                raise ValueError("no newline")
            turn = [Event.from_row(row) for row in json.loads(line)]
        except (ValueError, KeyError, TypeError) as exc:
            if last:
                return events, good, f"torn last line at byte {good} ({len(line)} bytes)"
            raise LogCorrupt(f"{path}: line {i + 1} is not a whole turn ({exc})") from exc
        events.extend(turn)
        good += len(line) + 1
    return events, good, None


class RunJournal:
    """The live journal of one run: append whole turns, then seal."""

    def __init__(self, log: "EventLog", run_id: str, events: list[Event], scheme: int = SCHEME):
        self.log = log
        self.run_id = run_id
        self.events = events
        self.path = log.journal_dir / f"{run_id}.jsonl"
        # A resumed run continues in the scheme it started in; a new one uses the log's.
        self.scheme = run_scheme(run_id, events) or scheme

    @property
    def resumed(self) -> bool:
        return bool(self.events)

    def append(self, drafts: list[EventDraft]) -> list[Event]:
        prev = self.events[-1].hash if self.events else genesis(self.run_id, self.scheme)
        placed = chain(drafts, self.run_id, start_seq=len(self.events), prev_hash=prev, scheme=self.scheme)
        line = json.dumps([e.to_row() for e in placed], ensure_ascii=False, separators=(",", ":")) + "\n"
        with self.path.open("ab") as fh:
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        self.events.extend(placed)
        return placed

    def seal(self, drafts: list[EventDraft]) -> list[Event]:
        """Append the closing events, write the immutable segment, index it, drop the journal."""
        if self.events and self.events[-1].kind == "run_end":
            # Killed while sealing: the journal already holds run_end; finish the seal, never close a run twice.
            closing = [self.events[-1]]
        else:
            closing = self.append(drafts)
        self.log._seal(self.run_id, self.events)
        self.path.unlink()
        return closing


class EventLog:
    """The log under one root folder. Reading needs no lock; writing happens inside ``writer()``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.journal_dir = self.root / "journal"
        self.segment_dir = self.root / "segments"
        self.index_path = self.root / "index.jsonl"
        self._lock_fh = None
        self._index_lock = threading.Lock()  # runs seal from worker threads; the index is appended in order
        self._tail: tuple[int, str] | None = None  # (entries, last hash) of the index while we hold the lock
        # The hash scheme a new run is written in; a full rebuild sets it to each stored run's own scheme.
        self.scheme_for: Callable[[str], int] = lambda _run_id: SCHEME

    # -- writing -----------------------------------------------------------
    @contextmanager
    def writer(self) -> Iterator["EventLog"]:
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        self.segment_dir.mkdir(parents=True, exist_ok=True)
        fh = (self.root / "LOCK").open("a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise LogLocked(f"{self.root}: another writer holds the log lock (pid {holder}); wait for it or stop it") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock_fh = fh
        self._tail = None
        self._cut_torn_index_line()
        self._drop_sealed_journals()
        try:
            yield self
        finally:
            self._lock_fh = None
            self._tail = None
            fh.close()

    def _cut_torn_index_line(self) -> None:
        """A writer killed inside an index append left a line without its newline: cut it before appending after it.

        Its segment then stands unindexed beside its journal, which ``verify`` reports as resumable and a resume seals.
        """
        if not self.index_path.exists():
            return
        raw = self.index_path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            with self.index_path.open("r+b") as fh:
                fh.truncate(raw.rfind(b"\n") + 1)
                os.fsync(fh.fileno())

    def _drop_sealed_journals(self) -> None:
        """A writer killed after indexing a segment but before removing its journal left it behind: remove it."""
        sealed = set(self.sealed_run_ids())
        for path in self.journals():
            if path.stem in sealed:
                path.unlink()

    def _require_lock(self) -> None:
        if self._lock_fh is None:
            raise RuntimeError("event log: write outside EventLog.writer()")

    def open_run(self, run_id: str) -> RunJournal:
        """The journal of a run: empty for a new run, its whole turns for an interrupted one."""
        self._require_lock()
        path = self.journal_dir / f"{run_id}.jsonl"
        events: list[Event] = []
        if path.exists():
            events, good, torn = read_journal(path)
            if torn:
                with path.open("r+b") as fh:
                    fh.truncate(good)
                    os.fsync(fh.fileno())
        return RunJournal(self, run_id, events, self.scheme_for(run_id))

    def has_journal(self, run_id: str) -> bool:
        return (self.journal_dir / f"{run_id}.jsonl").exists()

    def _seal(self, run_id: str, events: list[Event]) -> None:
        self._require_lock()
        path = self.segment_dir / f"{run_id}.parquet"
        digest = write_parquet(path, events)
        with self._index_lock:
            self._append_index(run_id, digest, events)

    def _append_index(self, run_id: str, digest: str, events: list[Event]) -> None:
        if self._tail is None:  # read once per writer session: no one else appends while we hold the lock
            entries = self.index()
            self._tail = (len(entries), entries[-1]["hash"] if entries else INDEX_GENESIS)
        n, prev = self._tail
        entry = {
            "n": n, "run_id": run_id, "file": f"segments/{run_id}.parquet",
            "file_sha256": digest, "events": len(events), "last_hash": events[-1].hash, "prev": prev,
        }
        entry["hash"] = index_entry_hash(entry)
        with self.index_path.open("ab") as fh:
            fh.write((canonical_json(entry) + "\n").encode())
            fh.flush()
            os.fsync(fh.fileno())
        self._tail = (n + 1, entry["hash"])

    def carry(self, run_id: str, events: list[Event]) -> None:
        """Seal another log's run as it stands, hashes and all (a full rebuild copying what it cannot re-derive)."""
        self._seal(run_id, events)

    def rewrite_segment(self, run_id: str, data: bytes) -> str:
        """Replace a sealed segment's bytes (forgetting: the same events, text tombstoned); returns their sha256.

        Atomic (temp file, fsync, rename), so a crash leaves the old segment or the new one, never half of each.
        """
        self._require_lock()
        return write_atomic(self.segment_dir / f"{run_id}.parquet", data)

    def append_run(self, run_id: str, drafts: list[EventDraft]) -> list[Event]:
        """Write a whole short run (e.g. one derived projection or one store write) and seal it at once."""
        journal = self.open_run(run_id)
        if journal.resumed and journal.events[-1].kind != "run_end":
            raise LogCorrupt(f"{self.root}: run {run_id} already has a journal")
        # A journal that ends in run_end was killed while sealing (its whole run is one append): finish that seal.
        return journal.seal(drafts)

    # -- reading -----------------------------------------------------------
    def index(self) -> list[dict]:
        """Sealed segments in order. A last line without its newline is a write still in progress: not yet there."""
        if not self.index_path.exists():
            return []
        raw = self.index_path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()]

    def sealed_run_ids(self) -> list[str]:
        return [e["run_id"] for e in self.index()]

    def is_sealed(self, run_id: str) -> bool:
        return (self.segment_dir / f"{run_id}.parquet").exists() and run_id in set(self.sealed_run_ids())

    def run_events(self, run_id: str) -> list[Event]:
        return read_parquet(self.segment_dir / f"{run_id}.parquet")

    def events(self) -> Iterator[Event]:
        """Every sealed event, segment by segment in index order."""
        for entry in self.index():
            yield from read_parquet(self.root / entry["file"])

    def journals(self) -> list[Path]:
        return sorted(self.journal_dir.glob("*.jsonl")) if self.journal_dir.exists() else []


assert set(SCHEMA.names) == set(COLUMNS)
