"""What one ``mem forget`` removes: the target's own events, then everything derived from them, in log order.

Derivation flows forward through the log (a stream is recorded before a loop
reads it, L1 before L2, a memory before its symptom projection or its import
into a typed store), so one pass in index order finds it all:

- a gate or parse_failed reply is derived from its chunk and from the memory
  the loop held when it asked; an accepted memory from both too, so once a
  loop's memory has taken in forgotten text every later reply and memory of
  that run has (and its ``run_end``);
- at L2 the chunks are L1 memories, so a forgotten L1 memory taints its L2 run
  from the turn that read it;
- a symptom projection is derived from its memory; a store write from its
  parents (an imported memory, the block version it extended).

Every loop, symptom or store-write run with a forgotten event is retired; a
recorded stream (L0) or document (R) stays, without its forgotten chunks,
unless the target is that very source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from poimen.domain import EventKind
from poimen.errors import PoimenError
from poimen.forget.scrub import scrubbed
from poimen.log.events import Event
from poimen.log.forgotten import FORGET_PREFIX
from poimen.log.payloads import RunStart, StoreWrite
from poimen.log.store import EventLog
from poimen.settings import local_dir

CONTENT_KINDS = (EventKind.EVIDENCE, EventKind.MEMORY, EventKind.STORE_WRITE, EventKind.SYMPTOM)


class NothingToForget(PoimenError):
    """The target names nothing in the log (no such source, namespace or sha)."""


@dataclass(frozen=True)
class Target:
    """Exactly one of: a source (as given on the command line), a namespace, a content sha (or unique prefix)."""

    source: str = ""
    namespace: str = ""
    sha: str = ""

    def __post_init__(self) -> None:
        if sum(bool(x) for x in (self.source, self.namespace, self.sha)) != 1:
            raise PoimenError("mem forget: give exactly one of --source PATH, --ns NAMESPACE or --sha SHA")

    def __str__(self) -> str:
        return f"source:{self.source}" if self.source else f"ns:{self.namespace}" if self.namespace else f"sha:{self.sha}"


@dataclass
class Plan:
    target: Target
    sha: str = ""  # --sha resolved to a full sha
    streams: set[str] = field(default_factory=set)  # --source resolved to stream ids (what the forget event records)
    own: set[str] | None = None  # --source of a file on disk: the runs that read that very file (None: by stream id)
    kept: set[str] = field(default_factory=set)  # runs of the same stream id that another file on disk holds
    shas: set[str] = field(default_factory=set)  # content shas forgotten
    scrub: dict[str, set[int]] = field(default_factory=dict)  # run id -> seqs of events to tombstone
    retire: set[str] = field(default_factory=set)
    journals: list[str] = field(default_factory=list)  # run ids of unsealed runs whose journal read the text

    def mark(self, run_id: str, e: Event) -> None:
        self.scrub.setdefault(run_id, set()).add(e.seq)


def _stream_ids(runs: list[tuple[str, list[Event]]], source: str) -> set[str]:
    """The stream ids a ``--source`` names: exactly, else as the one stream whose id ends the given path."""
    ids = {RunStart.from_event(ev[0]).stream_id for _, ev in runs if ev and ev[0].kind == EventKind.RUN_START}
    given = PurePosixPath(Path(source).as_posix())
    exact = {s for s in ids if s in (source, str(given))}
    if exact:
        return exact
    tail = {s for s in ids if s and not s.startswith("L1-memories:") and
            (given.as_posix().endswith("/" + s) or PurePosixPath(s).parts[-len(given.parts):] == given.parts)}
    if len(tail) > 1:
        raise PoimenError(f"--source {source}: names {len(tail)} streams ({', '.join(sorted(tail))}); give one exactly")
    return tail


def _file_runs(plan: Plan, runs: list[tuple[str, list[Event]]], source: str, log_root) -> None:
    """Scope a ``--source`` that is a file on disk to the runs that read that file, not every run of its name.

    A stream id is a path relative to its run's sources root, so ``a/chan.txt`` and ``b/chan.txt`` run one at a
    time are both ``chan.txt``. What tells them apart is content: a run's ``stream_sha`` names the chunks it read,
    so the file is chunked again at every bound the log recorded for that id (with the format noted for it) and a
    run is the file's when its stream sha is one of those. A run no file on disk claims (an older version of the
    file) goes with it, unless another file of the same id is under a noted sources root: then which file it came
    from is unknown, and it stays (named in the report; ``--sha`` removes it)."""
    from poimen.domain import sha256_json
    from poimen.inputs.chunking import DEFAULT_MAX_TOKENS, iter_chunks
    from poimen.inputs.reading import noted_readings
    from poimen.inputs.source_lines import default_roots

    path = Path(source)
    if not path.is_file() or local_dir(log_root) is None:
        return
    starts = {rid: RunStart.from_event(ev[0]) for rid, ev in runs if ev and ev[0].kind == EventKind.RUN_START}
    starts = {rid: s for rid, s in starts.items() if s.stream_id in plan.streams}
    bounds = {DEFAULT_MAX_TOKENS} | {s.max_tokens for s in starts.values() if s.max_tokens}
    bounds |= {t for s in starts.values() if (t := getattr(s, "chunk_tokens", None))}
    readings = noted_readings(log_root)

    def stream_shas(file: Path, sid: str) -> set[str]:
        fmt, fields = readings.get(sid, (None, None))
        out = set()
        for bound in sorted(bounds):
            try:
                out.add(sha256_json([c.sha for c in iter_chunks(file, bound, None, fmt, fields)]))
            except PoimenError:
                continue
        return out

    mine: set[str] = set()
    others: set[str] = set()
    rivals = False
    for sid in plan.streams:
        own_shas = stream_shas(path, sid)
        mine |= {rid for rid, s in starts.items() if s.stream_id == sid and s.stream_sha in own_shas}
        for root in default_roots(log_root):
            other = Path(root) / sid
            if other.is_file() and other.resolve() != path.resolve():
                rivals = True
                theirs = stream_shas(other, sid) - own_shas
                others |= {rid for rid, s in starts.items() if s.stream_id == sid and s.stream_sha in theirs}
    unclaimed = set(starts) - mine - others
    if rivals:
        plan.kept = others | unclaimed
        # the forget event names no stream: the other file keeps its name, and this file's chunks go by their shas
        plan.own, plan.streams = mine, set()
    else:
        plan.own = mine | unclaimed


def _resolve_sha(runs: list[tuple[str, list[Event]]], prefix: str) -> str:
    found = {e.sha for _, events in runs for e in events if e.kind in CONTENT_KINDS and e.sha.startswith(prefix)}
    if len(found) > 1:
        raise PoimenError(f"--sha {prefix}: matches {len(found)} shas; give more of it")
    return found.pop() if found else ""


def _taint_loop(plan: Plan, run_id: str, events: list[Event], whole: bool) -> bool:
    """Mark the events of one run derived from forgotten text (all of them when ``whole``); True if any."""
    memory_bad = False
    gates: dict[int, Event] = {}
    bad_turns: set[int] = set()
    hit = False
    for e in events:
        kind = e.kind
        if kind in (EventKind.GATE, EventKind.PARSE_FAILED):
            gates[e.turn] = e
            if whole or memory_bad or e.sha in plan.shas:
                bad_turns.add(e.turn)
                plan.mark(run_id, e)
                hit = True
        elif kind == EventKind.EVIDENCE and (whole or e.sha in plan.shas):
            plan.shas.add(e.sha)
            plan.mark(run_id, e)
            hit = True
        elif kind == EventKind.MEMORY:
            if whole or e.turn in bad_turns or e.sha in plan.shas or any(p in plan.shas for p in e.parents):
                memory_bad = True
                plan.shas.add(e.sha)
                plan.mark(run_id, e)
                if e.turn in gates:
                    plan.mark(run_id, gates[e.turn])  # the reply that proposed this memory holds its text
                hit = True
        elif kind == EventKind.RUN_END and e.text and (memory_bad or e.sha in plan.shas):
            plan.mark(run_id, e)
            hit = True
    return hit


def _taint_other(plan: Plan, run_id: str, events: list[Event]) -> bool:
    """Symptom projections and store writes: forgotten when their memory, parents or namespace are."""
    hit = False
    for e in events:
        if e.kind == EventKind.SYMPTOM:
            bad = not plan.target.namespace and e.sha in plan.shas
        elif e.kind == EventKind.STORE_WRITE:
            a = StoreWrite.from_event(e)
            if plan.target.namespace:  # shas are content: another namespace may hold the same words, and keeps them
                bad = a.namespace == plan.target.namespace
            else:
                bad = e.sha in plan.shas or any(p in plan.shas for p in e.parents) or a.source_run_id in plan.retire
        else:
            continue
        if bad:
            plan.shas.add(e.sha)
            plan.mark(run_id, e)
            hit = True
    return hit


def _taint(plan: Plan, run_id: str, events: list[Event]) -> bool:
    if not events or run_id.startswith(FORGET_PREFIX):
        return False
    if events[0].kind != EventKind.RUN_START or plan.target.namespace:
        return _taint_other(plan, run_id, events)
    start = RunStart.from_event(events[0])
    own = run_id in plan.own if plan.own is not None else start.stream_id in plan.streams
    hit = _taint_loop(plan, run_id, events, whole=own)
    return hit and (own or start.kind is None)  # a recorded stream or document stays, without the forgotten chunks


def make_plan(log: EventLog, target: Target) -> Plan:
    """Find every event to tombstone, the runs to retire and the journals to drop (the caller holds the writer)."""
    runs = [(entry["run_id"], log.run_events(entry["run_id"])) for entry in log.index()]
    plan = Plan(target)
    if target.source:
        plan.streams = _stream_ids(runs, target.source)
        if not plan.streams:
            raise NothingToForget(f"--source {target.source}: no stream of that name in {log.root}")
        _file_runs(plan, runs, target.source, log.root)
        if plan.own is not None and not plan.own:
            raise NothingToForget(f"--source {target.source}: no run in {log.root} read this file (its stream name "
                                  f"is another file's); forget by --sha")
    elif target.sha:
        plan.sha = _resolve_sha(runs, target.sha)
        if not plan.sha:
            raise NothingToForget(f"--sha {target.sha}: no evidence, memory, symptom or store write has it in {log.root}")
        plan.shas.add(plan.sha)
    for run_id, events in runs:
        if _taint(plan, run_id, events):
            plan.retire.add(run_id)
    if target.namespace and not plan.scrub:
        raise NothingToForget(f"--ns {target.namespace}: no store write of that namespace in {log.root}")
    sealed = {run_id for run_id, _ in runs}
    for run_id in log.store.journal_ids():
        if run_id not in sealed:
            events = log.journal_events(run_id)
            probe = Plan(target, shas=set(plan.shas), streams=plan.streams, retire=set(plan.retire))
            if _taint_loop(probe, run_id, events, False) or _taint_other(probe, run_id, events) or (
                    events and events[0].kind == EventKind.RUN_START
                    and plan.own is None and RunStart.from_event(events[0]).stream_id in plan.streams):
                plan.journals.append(run_id)
    return plan


def pending(plan: Plan, log: EventLog) -> dict[str, list[Event]]:
    """The runs with at least one event still to tombstone (a repeated forget finds none), with their events."""
    out = {}
    for run_id, seqs in plan.scrub.items():
        events = log.run_events(run_id)
        if any(scrubbed(events[s]) != events[s] for s in seqs):
            out[run_id] = events
    return out
