"""``mem verify``: check the chain, the parents, every sha against its text, and that each run is sealed or resumable.

Checks run from the finest grain up, so a flipped byte is reported as the
event it altered rather than only as a segment whose file hash changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from poimen.errors import LogCorrupt
from poimen.log.events import SCHEME, Event, content_sha, genesis
from poimen.log.forgotten import Forgotten, forgotten
from poimen.log.journal import parse_journal, run_scheme
from poimen.log.segments import INDEX_GENESIS, index_entry_hash, parse_segment
from poimen.log.store import EventLog

CONTENT_KINDS = {"evidence", "memory"}


@dataclass(frozen=True)
class Problem:
    where: str  # file
    run_id: str
    seq: int | None
    what: str

    def __str__(self) -> str:
        at = f" seq {self.seq}" if self.seq is not None else ""
        run = f"run {self.run_id[:16]}{at}: " if self.run_id else ""  # a head or an index row names no run
        return f"{self.where + ': ' if self.where else ''}{run}{self.what}"


@dataclass
class VerifyReport:
    sealed_runs: int = 0
    resumable_runs: int = 0
    events: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> Problem | None:
        return self.problems[0] if self.problems else None


def check_run_events(events: list[Event], run_id: str, where: str, sealed: bool,
                     witnesses: dict[tuple[str, int], str] | None = None) -> list[Problem]:
    """Problems in one run's events, in order; each names the event.

    The run's hash scheme is read off its genesis. A scheme-1 row tombstoned by ``mem forget`` is checked against
    the witness its forget event recorded (its own hash covers the removed text), and still chains by its hash.
    """
    problems: list[Problem] = []
    scheme = run_scheme(run_id, events) or SCHEME
    prev = genesis(run_id, scheme)
    witnesses = witnesses or {}
    known: set[str] = set()
    for i, e in enumerate(events):
        def bad(what: str) -> None:
            problems.append(Problem(where, run_id, e.seq, what))

        if not all(isinstance(v, str) for v in (e.run_id, e.prev_hash, e.hash, e.kind, e.text, e.attrs)):
            bad("a field is null where the log holds text (the row was edited)")
            return problems  # nothing of it can be hashed or compared
        if e.run_id != run_id:
            bad(f"belongs to run {e.run_id[:16]}")
        if e.seq != i:
            bad(f"out of order: expected seq {i}")
        if e.prev_hash != prev:
            bad("prev_hash does not continue the chain (rows reordered, removed or inserted)")
        witness = witnesses.get((run_id, e.seq)) if scheme == 1 else None
        try:
            expected = e.expected_hash(scheme)
        except (TypeError, ValueError):  # attrs that no longer parse as JSON, a null where text was
            bad(f"{e.kind} event altered: its contents no longer read")
            return problems
        if (witness or e.hash) != expected:
            bad(f"{e.kind} event altered: its hash does not match its contents")
        if e.kind in CONTENT_KINDS and e.sha != content_sha(e.text):
            bad(f"{e.kind} sha does not match its text")
        if e.kind == "memory":
            missing = [p for p in e.parents if p not in known]
            if missing:
                bad(f"memory parent {missing[0][:16]} is not an earlier evidence or memory of this run")
        if e.kind in CONTENT_KINDS:
            known.add(e.sha)
        prev = e.hash
        if problems:
            return problems
    if not events:
        problems.append(Problem(where, run_id, None, "no events"))
    elif events[0].kind != "run_start" and events[0].kind not in ("store_write", "symptom", "forget"):
        problems.append(Problem(where, run_id, 0, f"first event is {events[0].kind}, not run_start"))
    elif sealed and events[0].kind == "run_start" and events[-1].kind != "run_end":
        problems.append(Problem(where, run_id, events[-1].seq, "sealed run does not end with run_end"))
    return problems


def verify(root: str | Path) -> VerifyReport:
    log = EventLog(root)
    store = log.store
    report = VerifyReport()
    if not store.exists_root():
        report.problems.append(Problem(str(log.root), "-", None, "no event log here"))
        return report
    prev = INDEX_GENESIS
    indexed: set[str] = set()
    try:
        entries = log.index()
    except ValueError as exc:
        report.problems.append(Problem(str(log.index_path), "-", None, f"index unreadable: {exc}"))
        return report
    try:
        forgot = forgotten(log, entries)
    except Exception:  # a damaged forget segment is reported below, where the index reaches it
        forgot = Forgotten()
    for entry in entries:
        run_id = entry.get("run_id", "?")
        where = str(store.where(entry.get("file", "?")))
        if entry.get("prev") != prev or entry.get("hash") != index_entry_hash(entry):
            report.problems.append(Problem(str(log.index_path), run_id, None, f"index entry {entry.get('n')} breaks the segment chain"))
            return report
        prev = entry["hash"]
        indexed.add(entry["file"])
        data = store.read(entry["file"])
        if data is None:
            report.problems.append(Problem(where, run_id, None, "sealed segment is missing"))
            return report
        try:
            events = parse_segment(data)
        except Exception as exc:  # a damaged file can fail anywhere inside pyarrow
            report.problems.append(Problem(where, run_id, None, f"segment unreadable: {type(exc).__name__}"))
            return report
        problems = check_run_events(events, run_id, where, sealed=True, witnesses=forgot.witnesses)
        if not problems and events and events[-1].hash != entry["last_hash"]:
            problems.append(Problem(where, run_id, events[-1].seq, "segment ends on another event than the index records"))
        if not problems:
            digest = hashlib.sha256(data).hexdigest()
            if digest != entry["file_sha256"] and digest not in forgot.segments.get(run_id, ()):
                problems.append(Problem(where, run_id, None, "segment file bytes differ from the index (metadata altered)"))
            elif digest == entry["file_sha256"] and run_id in forgot.segments:
                report.notes.append(f"run {run_id[:16]}: a forget was interrupted before this segment was rewritten; "
                                    "run the same `mem forget` again")
        if problems:
            report.problems.extend(problems)
            return report
        report.sealed_runs += 1
        report.events += len(events)
    journal_ids = set(store.journal_ids())
    for name in store.names("segments", ".parquet"):
        stem = name[: -len(".parquet")]
        if f"segments/{name}" not in indexed:
            if stem in journal_ids:  # killed between the segment's put and its index commit
                report.notes.append(f"run {stem[:16]} was killed while sealing; its journal is kept: resumable")
                continue
            report.problems.append(Problem(str(store.where(f"segments/{name}")), stem, None, "segment is not in the index"))
            return report
    sealed_ids = {entry.get("run_id") for entry in entries}
    for run_id in sorted(journal_ids):
        path = store.where(f"journal/{run_id}.jsonl")
        if run_id in sealed_ids:  # killed after the index line, before the journal was removed
            report.notes.append(f"run {run_id[:16]} is sealed; its leftover journal is removed by the next writer")
            continue
        try:
            events, _, torn = parse_journal(store.journal_read(run_id) or b"", path)
        except LogCorrupt as exc:
            report.problems.append(Problem(str(path), run_id, None, str(exc).split(": ", 1)[-1]))
            return report
        problems = check_run_events(events, run_id, str(path), sealed=False) if events else []
        if problems:
            report.problems.extend(problems)
            return report
        report.resumable_runs += 1
        report.events += len(events)
        report.notes.append(f"run {run_id[:16]} is unfinished ({len(events)} events){'; ' + torn if torn else ''}: resumable")
    return report
