"""Where events live: a per-run journal while a run is live, an immutable Parquet segment once sealed.

Layout under the log root::

    LOCK                        writer sessions (flock): shared by writers of runs, exclusive for whole-log writers
    journal/<run_id>.jsonl      one line per resolved turn but the last (sealed with run_end), appended with fsync
                                (on S3: one object per turn)
    segments/<run_id>.parquet   sealed runs: written to a temp name, fsynced, renamed (on S3: one put)
    index.jsonl                 the sealed segments, in order, hash-chained; appended by one committer at a time

``EventLog`` is the log: it opens a run's journal (``journal``: whole turns; a torn last line, left by a kill, is
cut off by ``open_run``), seals it into a segment and commits that to the index (``segments``). Readers look only
at the index and the segments it names, so they never see unsealed data. A sealed segment is replaced only by
``mem forget`` (``rewrite_segment``: the same events, text tombstoned, bytes vouched for by the forget event), inside
an exclusive session (on an object store: conditional on the version it read).

The root is a folder or a URI (``file://``, ``s3://``, ``gs://``): every byte goes through
a ``LogStore`` (``poimen/log/storage/``), so writers of different runs, in
different processes or machines, seal and commit without a shared lock.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from poimen.settings import default_root  # noqa: F401  (re-exported: the log's folder)
from poimen.domain import canonical_json
from poimen.errors import LogConflict, LogCorrupt, RunForgotten, SessionConflict
from poimen.log.events import SCHEME, Event, EventDraft
from poimen.log.journal import RunJournal, parse_journal
from poimen.log.segments import (FORGET_PREFIX, NO_SCAN, IndexScan, forget_runs, index_entry_hash, parquet_bytes,
                                 parse_segment, put_segment, scan_index)
from poimen.log.storage import open_store
from poimen.log.storage.base import INDEX, JOURNAL, LogStore
from poimen.log.storage.local import LocalStore

# A whole-log write redone this many times, each after another writer's commit, gives up: the log is that busy.
SESSION_ATTEMPTS = 8
T = TypeVar("T")


@dataclass
class _Pending:
    """One sealed segment's index line, waiting for a group commit."""

    run_id: str
    name: str
    digest: str
    events: int
    last_hash: str
    # What the run read, for the forget fence (``EventLog._forgets_since``): None for a run not fenced (one carried
    # as it stands by a rebuild, a forget's own run).
    read: "_Read | None" = None
    done: bool = False
    error: BaseException | None = None


@dataclass(frozen=True)
class _Read:
    """What a run took in: the shas of its events and their parents, and the stream it read."""

    shas: frozenset[str]
    stream: str

    @classmethod
    def of(cls, events: list[Event]) -> "_Read":
        shas = {e.sha for e in events if e.sha} | {p for e in events for p in e.parents}
        start = next((json.loads(e.attrs) for e in events if e.kind == "run_start" and e.attrs), {})
        return cls(frozenset(shas), start.get("stream_id", ""))


@dataclass(frozen=True)
class _ForgetFence:
    """What one forget removed, as a run's commit checks it: the journals it dropped, the shas and streams it forgot."""

    run_id: str
    journals: frozenset[str]
    shas: frozenset[str]
    streams: frozenset[str]

    @classmethod
    def of(cls, run_id: str, events: list[Event]) -> "_ForgetFence":
        records = [json.loads(e.attrs) for e in events if e.kind == "forget"]
        return cls(run_id, *(frozenset(x for r in records for x in r.get(key, ())) for key in ("journals", "shas", "streams")))

    def names(self, run_id: str, read: _Read) -> bool:
        return run_id in self.journals or bool(read.shas & self.shas) or read.stream in self.streams



class EventLog:
    """The log under one root (a folder, ``file://``, ``s3://`` or ``gs://``). Reading needs no lock; writing happens
    inside ``writer()``: an exclusive session by default, or a shared one for writers of runs (each run claimed alone).
    A read-modify-write of the whole log goes through ``exclusive()``, which redoes it when an object store's
    optimistic session loses to another writer."""

    def __init__(self, root: str | Path, store: LogStore | None = None):
        self.store = store or open_store(root)
        self.root = self.store.root if isinstance(self.store, LocalStore) else self.store.uri
        self.journal_dir = self.store.where(JOURNAL)
        self.segment_dir = self.store.where("segments")
        self.index_path = self.store.where(INDEX)
        self._writing = 0
        self._index_lock = threading.Lock()  # runs seal from worker threads; the index cache is theirs in turn
        self._queue_lock = threading.Lock()
        self._queued: list[_Pending] = []  # index lines waiting for the next commit (``_commit``)
        self._scanned: IndexScan = NO_SCAN
        self._seen_lock = threading.Lock()
        self._seen: IndexScan = NO_SCAN  # ``is_sealed``'s own scan
        self._forgets_at_start: frozenset[str] | None = None  # forget runs indexed when the writer session began
        self._fences: dict[str, _ForgetFence] = {}
        self._journals: frozenset[str] | None = None  # the journals the writer session listed when it began
        # The hash scheme a new run is written in; a full rebuild sets it to each stored run's own scheme.
        self.scheme_for: Callable[[str], int] = lambda _run_id: SCHEME

    # -- writing -----------------------------------------------------------
    def exclusive(self, body: Callable[["EventLog"], T],
                  session: Callable[[], AbstractContextManager] | None = None) -> T:
        """Run ``body``, a read-modify-write of the whole log, in an exclusive session (``session``: how to enter one,
        default ``writer()``), and redo it whole while it loses to other writers.

        Locally the session is ``LOCK`` held exclusive, so ``body`` runs once. On an object store the session is
        optimistic: another writer's commit after it began makes its own commit fail (``SessionConflict``); its
        unindexed segment and journal are dropped by then, and ``body`` runs again from a fresh read, after a
        jittered pause, up to ``SESSION_ATTEMPTS`` times."""
        enter = session or self.writer
        for attempt in range(SESSION_ATTEMPTS):
            try:
                with enter():
                    return body(self)
            except SessionConflict:
                time.sleep(random.uniform(0, 0.05 * 2 ** min(attempt, 4)))
        raise LogConflict(f"{self.root}: a whole-log write lost to other writers' commits {SESSION_ATTEMPTS} times "
                          "in a row; run it again when fewer writers are at work")

    def confirm_exclusive(self) -> None:
        """``SessionConflict`` unless no other writer has committed since this exclusive session began."""
        self._require_lock()
        self.store.confirm_session()

    def _drop_unindexed(self, run_id: str, lines: int | None) -> None:
        """A session lost its commit: remove the run's segment and journal unless another writer indexed that run."""
        with self._index_lock:
            indexed = run_id in self._scan(self.store.read(INDEX) or b"")[3]
        if not indexed:
            self.store.delete(f"segments/{run_id}.parquet")
            self.store.journal_drop(run_id, lines)

    @contextmanager
    def writer(self, shared: bool = False) -> Iterator["EventLog"]:
        with self.store.session(shared):
            self._drop_sealed_journals()
            self._writing += 1
            try:
                yield self
            finally:
                self._writing -= 1

    def _drop_sealed_journals(self) -> None:
        """A writer killed after committing a segment but before removing its journal left it behind: remove it.
        The journals of unsealed runs are remembered (``journals_at_start``)."""
        scan = scan_index(self.store.read(INDEX) or b"")
        if not self._writing:  # the outermost session: forgets committed from here on are fenced (``_forgets_since``)
            self._forgets_at_start = forget_runs(scan[3])
        sealed = set(scan[3])
        journals = set(self.store.journal_ids())
        for run_id in journals & sealed:
            self.store.journal_drop(run_id)
        self._journals = frozenset(journals - sealed)

    @property
    def journals_at_start(self) -> frozenset[str]:
        """The unsealed runs with a journal when this writer session began (a writer may start more since)."""
        self._require_lock()
        return self._journals or frozenset()

    def _require_lock(self) -> None:
        if not self._writing:
            raise RuntimeError("event log: write outside EventLog.writer()")

    def open_run(self, run_id: str, wait: bool = False) -> RunJournal:
        """Claim a run's journal: empty for a new run, its whole turns for an interrupted one (``RunBusy`` if
        another writer has it, unless ``wait``). Close it (or seal it) to give the claim up."""
        self._require_lock()
        claim = ExitStack()
        claim.enter_context(self.store.claim(run_id, wait))
        try:
            if self.store.exclusive_turns and run_id not in self.journals_at_start:
                raw = b""  # none when the session began; one begun since makes our first turn's put fail (RunBusy)
            else:
                raw = self.store.journal_read(run_id) or b""
            events, good, torn = parse_journal(raw, self.store.where(f"{JOURNAL}/{run_id}.jsonl"))
            if torn:
                self.store.journal_cut(run_id, good)
        except BaseException:
            claim.close()
            raise
        return RunJournal(self, run_id, events, raw[:good].count(b"\n"), claim, self.scheme_for(run_id))

    def journal_events(self, run_id: str) -> list[Event]:
        """The whole turns of an unsealed run (empty if it has no journal)."""
        raw = self.store.journal_read(run_id) or b""
        return parse_journal(raw, self.store.where(f"{JOURNAL}/{run_id}.jsonl"))[0]

    def _seal(self, run_id: str, events: list[Event], fenced: bool = False) -> None:
        """Put the run's segment and commit it; ``fenced``: not if a forget committed since this writer session began
        names what the run read (``RunForgotten``)."""
        self._require_lock()
        name = f"segments/{run_id}.parquet"
        digest, created = put_segment(self.store, name, events)
        if not created and run_id not in self._scan(self.store.read(INDEX) or b"")[3]:
            # Left by a writer killed before its commit, so nobody reads it: this seal's bytes replace it.
            self.store.put(name, parquet_bytes(events))
        self._commit(run_id, name, digest, events, fenced)

    def _scan(self, raw: bytes) -> IndexScan:
        """The committers' scan of the index bytes ``raw`` (under the index lock), reading only what is new."""
        self._scanned = scan_index(raw, self._scanned)
        return self._scanned

    def _commit(self, run_id: str, name: str, digest: str, events: list[Event], fenced: bool = False) -> None:
        """Append the segment's index line as the one committer of the moment; a run already indexed is not again.

        Seals that finish together commit together (group commit): each queues its line, and whichever takes the
        index lock appends every queued line in one write, one fsync locally and one conditional put on an object
        store; the others find theirs done when they get the lock. Loops started together end together, and their
        seals used to queue for one fsync each. A failed commit fails every seal in it: none of their lines is in.
        """
        read = _Read.of(events) if fenced and not run_id.startswith(FORGET_PREFIX) else None
        mine = _Pending(run_id, name, digest, len(events), events[-1].hash, read)
        with self._queue_lock:
            self._queued.append(mine)
        with self._index_lock:
            if not mine.done:
                with self._queue_lock:
                    batch, self._queued = self._queued, []
                try:
                    self.store.commit(INDEX, lambda raw: self._index_lines(raw, batch))
                except BaseException as exc:
                    for pending in batch:
                        pending.error = exc
                finally:
                    for pending in batch:
                        pending.done = True
        if mine.error is not None:
            raise mine.error

    def _index_lines(self, raw: bytes, batch: list["_Pending"]) -> bytes | None:
        """The index lines ``batch`` appends to the index bytes ``raw``: each chained to the one before it, none for a
        run the index already holds."""
        _, n, prev, ids = self._scan(raw)
        forgets = self._forgets_since(ids)
        lines = []
        for p in batch:
            p.error = None  # an object store retries the commit on newer bytes: judge each run again on those
            if p.run_id in ids:
                continue
            overtaken = next((f for f in forgets if p.read is not None and f.names(p.run_id, p.read)), None)
            if overtaken is not None:
                p.error = RunForgotten(p.run_id, str(self.root), overtaken.run_id)
                continue
            entry = {"n": n, "run_id": p.run_id, "file": p.name, "file_sha256": p.digest, "events": p.events,
                     "last_hash": p.last_hash, "prev": prev}
            entry["hash"] = prev = index_entry_hash(entry)
            lines.append(canonical_json(entry) + "\n")
            n, ids = n + 1, ids | {p.run_id}
        return "".join(lines).encode() or None

    def _forgets_since(self, ids: frozenset[str]) -> list["_ForgetFence"]:
        """The forgets among the indexed runs ``ids`` committed since this writer session began (the fence).

        A forget on another machine cannot hold off a run in flight there: an object store has no lease to wait on.
        So the run's own commit checks: a forget committed after its writer session began that names what the run
        read (its journal, which the forget dropped; a sha it took in; its stream) means the run read text that is
        now forgotten, and it is dropped instead of sealed. The commit is conditional on the index bytes it read, so
        a forget committed after this check makes the commit retry and check again; one committed before the run's
        writer session began is the runner's to honour (it skips forgotten streams and chunks). ``ids`` is the
        committers' incremental scan, so the check parses no index line of its own."""
        if self._forgets_at_start is None:
            return []
        found = []
        for run_id in sorted(forget_runs(ids) - self._forgets_at_start):
            if run_id not in self._fences:
                self._fences[run_id] = _ForgetFence.of(run_id, self.run_events(run_id))
            found.append(self._fences[run_id])
        return found

    def carry(self, run_id: str, events: list[Event]) -> None:
        """Seal another log's run as it stands, hashes and all (a full rebuild copying what it cannot re-derive)."""
        self._seal(run_id, events)

    def rewrite_segment(self, run_id: str, data: bytes) -> str:
        """Replace a sealed segment's bytes (forgetting: the same events, text tombstoned); returns their sha256.

        The one deliberate replacement of a sealed segment (sealing only ever puts one if absent): the store's
        ``replace``, which a local log does atomically (temp file, fsync, rename), so a crash leaves the old segment
        or the new one, never half of each. An object store puts it only if still at the version this exclusive
        session read (``SessionConflict`` otherwise).
        """
        self._require_lock()
        self.store.replace(f"segments/{run_id}.parquet", data)
        return hashlib.sha256(data).hexdigest()

    def append_run(self, run_id: str, drafts: list[EventDraft]) -> list[Event]:
        """Write a whole short run (e.g. one derived projection or one store write) and seal it at once."""
        journal = self.open_run(run_id, wait=True)
        if self.is_sealed(run_id):  # another writer sealed it while we waited: the same run id, the same run
            journal.discard()
            return self.run_events(run_id)[-len(drafts):]
        if journal.resumed and journal.events[-1].kind != "run_end":
            journal.close()
            raise LogCorrupt(f"{self.root}: run {run_id} already has a journal")
        # A journal that ends in run_end was killed while sealing (its whole run is one append): finish that seal.
        try:
            return journal.seal(drafts)
        except BaseException:
            journal.close()  # the journal stays for a resume; the claim must not outlive the failed seal
            raise

    # -- reading -----------------------------------------------------------
    def index(self) -> list[dict]:
        """Sealed segments in order. A last line without its newline is a write still in progress: not yet there."""
        raw = self.store.read(INDEX) or b""
        complete = raw[: raw.rfind(b"\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()]

    def sealed_run_ids(self) -> list[str]:
        return [e["run_id"] for e in self.index()]

    def is_sealed(self, run_id: str) -> bool:
        """Whether ``run_id`` is indexed and its segment there. The index is read whole (another writer may have
        committed since) but parsed only past what this log parsed before: a build asks once per run, and parsing
        the whole index each time made a build of n runs cost n² line parses."""
        with self._seen_lock:  # not the index lock: a look must not wait for a commit (a round trip on S3)
            self._seen = scan_index(self.store.read(INDEX) or b"", self._seen)
            ids = self._seen[3]
        return run_id in ids and self.store.exists(f"segments/{run_id}.parquet")

    def run_events(self, run_id: str) -> list[Event]:
        return self.read_segment(f"segments/{run_id}.parquet")

    def read_segment(self, name: str) -> list[Event]:
        data = self.store.read(name)
        if data is None:
            raise FileNotFoundError(self.store.where(name))
        return parse_segment(data)

    def events(self) -> Iterator[Event]:
        """Every sealed event, segment by segment in index order."""
        for entry in self.index():
            yield from self.read_segment(entry["file"])

    def journals(self) -> list[Path]:
        """The journals of unsealed runs (``.stem`` is the run id)."""
        return [Path(str(self.store.where(f"{JOURNAL}/{run_id}.jsonl"))) for run_id in self.store.journal_ids()]

