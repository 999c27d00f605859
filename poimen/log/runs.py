"""Runs read back from the log, and the rules about them that every reader shares.

- ``read_runs(log)``: every sealed run, in the log's index order, but for runs that
  ``mem forget`` retired (``poimen.log.forgotten``): no reader sees them as current.
- ``current(runs)``: the latest sealed run per (level, query, stream) — a newer
  run of the same pair (a changed source, model or prompt) supersedes the older.
- ``l1_memories(runs, query_id)``: per source, the latest L1 run of a query that
  kept a memory (what an L2 run reads).
- ``final_runs(runs)``: what answers a query — its latest L2 run if it has one,
  else the latest L1 run of each of its sources.
- ``acceptance(runs)``: gates opened over chunks seen, over the gated runs.

These are the only places the rules are computed: the index, the Dagster checks
and materialization metadata, `mem run` and `mem ask` all call them
(``tests/test_runs.py`` says so).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, Protocol

from poimen.domain import EventKind, Level
from poimen.log.events import Event, is_forgotten
from poimen.log.forgotten import forgotten
from poimen.log.payloads import RunEnd, RunStart
from poimen.log.store import EventLog

UNGATED_LEVELS = (Level.L0.value, Level.R.value)
INCIDENT_KIND = "incident"  # a run that carded one incident of a stream (``poimen.write.incidents``)  # stream and reference runs record every chunk: no gate


@dataclass(frozen=True)
class Run:
    """One sealed run: its place in the log's index, its id and its events."""

    n: int  # position in the log's index: later runs supersede earlier ones
    run_id: str
    events: tuple[Event, ...]

    @property
    def is_loop_run(self) -> bool:
        """A run with run_start/run_end (L0 streams, L1, L2, R); symptom and store writes are not."""
        return bool(self.events) and self.events[0].kind == EventKind.RUN_START

    @cached_property
    def start(self) -> RunStart:
        return RunStart.from_event(self.events[0]) if self.is_loop_run else RunStart()

    @cached_property
    def end(self) -> RunEnd:
        last = self.events[-1] if self.events else None
        return RunEnd.from_event(last) if last is not None and last.kind == EventKind.RUN_END else RunEnd()

    @property
    def level(self) -> str:
        return self.events[0].level if self.events else ""

    @property
    def kind(self) -> str:
        """'loop' for a gated run; 'incident' for an incident's card; 'stream' (L0) or 'reference' (R) for a recorded
        source."""
        return self.start.run_kind

    @property
    def query_id(self) -> str:
        return self.start.query_id

    @property
    def query_text(self) -> str:
        return self.start.query_text

    @property
    def store(self) -> str:
        return self.start.store

    @property
    def stream_id(self) -> str:
        return self.start.stream_id

    @property
    def model_id(self) -> str:
        return self.events[0].model_id if self.events else ""

    @property
    def chunks_seen(self) -> int:
        return self.end.chunks_seen

    @property
    def chunks_used(self) -> int:
        return self.end.chunks_used

    @property
    def final_memory_sha(self) -> str:
        return self.end.final_memory_sha

    @property
    def final_memory(self) -> str:
        return self.events[-1].text if self.end.final_memory_sha else ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.level, self.query_id, self.stream_id)

    @property
    def acceptance_rate(self) -> float | None:
        """Gates opened over chunks seen (``acceptance``); None for a run with no gate (L0, R)."""
        return None if self.level in UNGATED_LEVELS else acceptance([self]).rate


def read_runs(log: EventLog, run_ids: Iterable[str] | None = None, retired: bool = False) -> list[Run]:
    """Sealed runs in index order (only ``run_ids`` when given); runs a forget retired only with ``retired``."""
    wanted = set(run_ids) if run_ids is not None else None
    entries = log.index()
    skip = frozenset() if retired else forgotten(log, entries).runs
    # An event whose text was forgotten (a chunk of a recorded stream that stays) is not there for any reader.
    return [Run(int(e["n"]), e["run_id"], tuple(ev for ev in log.run_events(e["run_id"]) if not is_forgotten(ev.text)))
            for e in entries if (wanted is None or e["run_id"] in wanted) and e["run_id"] not in skip]


def loop_runs(runs: Iterable[Run], level: str | None = None) -> list[Run]:
    """The runs with a run_start, of one level when given, in the order given."""
    return [r for r in runs if r.is_loop_run and (level is None or r.level == str(level))]


def current(runs: Iterable[Run]) -> dict[tuple[str, ...], Run]:
    """The latest loop run per (level, query, stream): the ones lookup and the checks read.

    A stream has one incident run per incident, so its incident runs are current together: those of the stream as it
    was read last (the latest incident run's stream sha and cut version), one per incident key. A stream read again
    after it changed, or cut again by a new version of the code, supersedes all of its old incidents at once, an
    incident it no longer holds included.
    """
    runs = loop_runs(runs)
    read_last = {run.key: (run.start.stream_sha, run.start.cut) for run in runs if run.kind == INCIDENT_KIND}
    latest: dict[tuple[str, ...], Run] = {}
    for run in runs:
        if run.kind != INCIDENT_KIND:
            latest[run.key] = run
        elif (run.start.stream_sha, run.start.cut) == read_last[run.key]:
            latest[(*run.key, run.start.incident or "")] = run
    return latest


def _latest_per_stream(runs: Iterable[Run]) -> dict[str, Run]:
    """The last of ``runs`` (in log order) per stream, streams in the order they first appear."""
    return {r.stream_id: r for r in runs}


def l1_memories(runs: Iterable[Run], query_id: str) -> dict[str, Run]:
    """Per stream, the latest L1 run of ``query_id`` that kept a memory: what an L2 run of the query reads."""
    return _latest_per_stream(r for r in loop_runs(runs, Level.L1) if r.query_id == query_id and r.final_memory)


def final_runs(runs: Iterable[Run]) -> list[Run]:
    """Per query: its latest L2 run if any, else the latest L1 run of each source; only runs with a memory."""
    runs = list(runs)
    cards_now = {r.run_id for r in current(runs).values() if r.kind == INCIDENT_KIND}
    by_query: dict[str, list[Run]] = {}
    for run in loop_runs(runs):
        if run.kind == INCIDENT_KIND and run.run_id not in cards_now:
            continue  # an incident of a stream as it was before it changed
        if run.final_memory and run.level in (Level.L1.value, Level.L2.value):
            by_query.setdefault(run.query_id, []).append(run)
    out = []
    for chosen in by_query.values():
        l2 = [r for r in chosen if r.level == Level.L2.value]
        # a stream's incidents are one run each: latest per (stream, incident), the stream's own query once
        out.extend(l2[-1:] if l2 else list({(r.stream_id, r.start.incident): r for r in chosen}.values()))
    return out


class Gated(Protocol):
    """What acceptance reads of a run: a sealed ``Run``, or a ``RunOutcome`` as `mem run` returns it."""

    level: str
    kind: str  # 'loop', or 'incident' (one call per incident: no gate over a stream's chunks)
    chunks_used: int
    chunks_seen: int


class Acceptance(NamedTuple):
    """Gates opened over chunks seen, over the gated runs counted."""

    opened: int
    seen: int

    @property
    def rate(self) -> float:
        return self.opened / self.seen if self.seen else 0.0


def acceptance(runs: Iterable[Gated]) -> Acceptance:
    """(gates opened, chunks seen) over the gated runs (L1, L2; an L0 stream or R document opens no gate, and an
    incident run's one call is no gate over a stream's chunks)."""
    gated = [r for r in runs if r.level not in UNGATED_LEVELS and r.kind != INCIDENT_KIND]
    return Acceptance(sum(r.chunks_used for r in gated), sum(r.chunks_seen for r in gated))
