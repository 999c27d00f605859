"""The full rebuild: every stage done again from the raw inputs in a scratch folder, and compared with what is stored.

1. Chunks: every source is chunked afresh, at the bound its stored file records,
   and compared, chunk by chunk, by sha with the stored chunks Parquet.
2. The log: every sealed run is re-derived, in the live log's order, into a
   scratch log — L0 stream and R runs from the fresh chunks, L1/L2 loops
   replayed through ``run_loop`` against their *recorded* model replies, incident
   runs from the sources' records cut into incidents again and carded from their
   recorded replies, each
   run at its *recorded* chunk bound (a log may hold builds at several),
   (``ReplayClient``: no model call), symptom projections likewise — and each
   sealed segment is compared byte for byte with the live one. A run that
   cannot come from today's inputs (a superseded source, a store write made
   through the agent tools) is carried over event by event, re-chained, and
   counted as carried.
3. Projections: rebuilt from the scratch log into scratch DuckDB and Parquet,
   compared with the live manifest row by row.

It stops at the first difference and names it (a chunk, an event, or a row).
Nothing outside the scratch folder is written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from poimen.inputs.reading import DETECT, Reading
from poimen.inputs.chunk_store import CHUNK_DIR, chunk_path, chunk_sources, first_chunk_diff, stored_bound
from poimen.inputs.chunking import source_id
from poimen.domain import Chunk, EventKind, Level, Query, Stream, sha256_text
from poimen.incidents.version import cut_version
from poimen.index.rebuild import RebuildReport, rebuild_into
from poimen.llm.replay import ReplayClient, ReplayMiss
from poimen.log import payloads as P
from poimen.log.events import SCHEME, Event, EventDraft
from poimen.log.forgotten import Forgotten, forgotten
from poimen.log.journal import run_scheme
from poimen.log.store import EventLog
from poimen.log.runs import INCIDENT_KIND
from poimen.write.incidents import ask as ask_incident
from poimen.write.incidents import drafts_for, incident_format, incident_run_id, stream_plans
from poimen.settings import local_folder
from poimen.write.loop import LoopConfig, gate_format, run_id_for, run_loop
from poimen.write.reference import REFERENCE_KIND, STREAM_KIND, record_stream, reference_drafts, reference_run_id
from poimen.write.runner import l2_stream
from poimen.write.symptoms import draft, project, projection_run_id


@dataclass
class Inputs:
    """The raw inputs of a build, as the pipeline configures them."""

    sources: list[Path]
    sources_root: Path
    chunk_tokens: int
    reference: list[Path] = field(default_factory=list)
    reference_root: Path | None = None
    reading: Reading = DETECT  # the corpus's --format / formats / fields


@dataclass
class RematerializeReport:
    chunks_compared: int = 0
    rederived: dict[str, int] = field(default_factory=dict)  # by kind of run: stream, reference, loop, symptom
    carried: int = 0
    replayed_calls: int = 0
    first_difference: str = ""
    projections: RebuildReport | None = None

    @property
    def ok(self) -> bool:
        return not self.first_difference

    def __str__(self) -> str:
        runs = ", ".join(f"{n} {kind}" for kind, n in sorted(self.rederived.items())) or "none"
        lines = [f"chunks compared by sha: {self.chunks_compared}",
                 f"runs re-derived and byte-identical: {runs}; carried over: {self.carried}",
                 f"model replies replayed (no model call): {self.replayed_calls}"]
        if self.projections is not None:
            lines.append(str(self.projections))
        lines.append(f"FIRST DIFFERENCE: {self.first_difference}" if self.first_difference
                     else "full rebuild matches: chunks, events and projections")
        return "\n".join(lines)


def rematerialize(live_root: Path | str, scratch: Path, inputs: Inputs, embedder,
                  work: Path | None = None) -> RematerializeReport:
    """Redo every stage from ``inputs`` under ``scratch`` and compare with the log at ``live_root`` (see module doc);
    the stored chunk files and manifest are in ``work`` (default: the log's own folder)."""
    scratch = Path(scratch)
    work = Path(work) if work else local_folder(live_root, "the chunk files and manifest")
    report = RematerializeReport()
    live, replica = EventLog(live_root), EventLog(scratch / "log")
    forgot = forgotten(live)
    fresh = Fresh(inputs, forgot)
    # each stored file is compared with the source cut at the bound the file records (the build's), not today's
    stored = {sid: fresh.at(sid, stored_bound(p) if (p := chunk_path(work / CHUNK_DIR, sid)).exists() else None)
              for sid in fresh.paths}
    report.chunks_compared, diff = first_chunk_diff(work / CHUNK_DIR, stored)
    if diff is not None:
        report.first_difference = str(diff)
        return report
    schemes: dict[str, int] = {}  # each run is re-derived in the hash scheme it was written in
    replica.scheme_for = lambda run_id: schemes.get(run_id, SCHEME)
    rederive = _Rederive(live, replica, fresh, inputs, report, forgot)
    with replica.writer():
        for entry in live.index():
            schemes[entry["run_id"]] = run_scheme(entry["run_id"], live.run_events(entry["run_id"])[:1]) or SCHEME
            problem = rederive.run(entry["run_id"])
            new = replica.index()[-1] if replica.index() else {}
            if not problem and new.get("file_sha256") != entry["file_sha256"]:
                problem = first_event_diff(live.run_events(entry["run_id"]), replica.run_events(new["run_id"]))
            if problem:
                report.first_difference = problem
                return report
    report.projections = rebuild_into(scratch / "log", scratch / "index", embedder, manifest_root=work)
    if not report.projections.ok:
        rows = report.projections.differing_rows
        report.first_difference = (f"row {rows[0][0]} {rows[0][1]}: {rows[0][2]}" if rows
                                   else "; ".join(report.projections.notes) or "projection hashes differ")
    return report


def first_event_diff(stored: list[Event], replayed: list[Event]) -> str:
    """The first event where a replayed run differs from the stored one, with the columns that differ."""
    for old, new in zip(stored, replayed):
        a, b = old.to_row(), new.to_row()
        if a != b:
            cols = [c for c in a if a[c] != b[c] and c not in ("hash", "prev_hash")] or ["hash"]
            return (f"event {old.run_id[:16]} seq {old.seq} ({old.kind}, turn {old.turn}): "
                    f"{', '.join(cols)} differ{_first_values(a, b, cols[0])}")
    if len(stored) != len(replayed):
        return f"run {stored[0].run_id[:16] if stored else '?'}: the log holds {len(stored)} events, the replay {len(replayed)}"
    return ""


def _first_values(a: dict, b: dict, col: str) -> str:
    """The two values, or the sha256 prefixes of text and attrs (source text, quoted here, would reach the audit's
    Dagster metadata and logs, which no `mem forget` scrubs)."""
    if col in ("text", "attrs"):
        return f" (stored sha256 {sha256_text(str(a[col]))[:12]}, replayed sha256 {sha256_text(str(b[col]))[:12]})"
    return f" (stored {str(a[col])[:60]!r}, replayed {str(b[col])[:60]!r})"


def as_draft(e: Event) -> EventDraft:
    return EventDraft(kind=e.kind, level=e.level, turn=e.turn, sha=e.sha, parents=e.parents, text=e.text,
                      update=e.update, exit=e.exit, model_id=e.model_id, prompt_sha=e.prompt_sha, attrs=e.attributes)


class Fresh:
    """The sources chunked afresh, without what was forgotten, once per (source, bound) asked for: a log built at
    several chunk bounds is replayed run by run at each run's recorded bound (``None``: the inputs' bound, as a run
    recorded before the bound was is taken to have been cut)."""

    def __init__(self, inputs: Inputs, forgot: Forgotten = Forgotten()):
        self.inputs, self.forgot = inputs, forgot
        self.paths = {sid: p for p in inputs.sources
                      if (sid := source_id(p, inputs.sources_root)) not in forgot.streams}
        self._cut: dict[tuple[str, int], list[Chunk]] = {}

    def at(self, sid: str, bound: int | None) -> list[Chunk] | None:
        path = self.paths.get(sid)
        if path is None:
            return None
        key = (sid, bound or self.inputs.chunk_tokens)
        if key not in self._cut:
            self._cut[key] = chunk_sources([path], self.inputs.sources_root, key[1], self.forgot.shas,
                                           self.inputs.reading)[sid]
        return self._cut[key]


class _Rederive:
    """Writes one live run's counterpart into the replica; returns a one-line difference, or "" when it could."""

    def __init__(self, live: EventLog, replica: EventLog, fresh: Fresh, inputs: Inputs,
                 report: RematerializeReport, forgot: Forgotten = Forgotten()):
        self.live, self.replica, self.fresh, self.report, self.inputs = live, replica, fresh, report, inputs
        self.forgot = forgot
        self.finals: dict[str, str] = {}  # final memory sha -> text, of the loop runs replayed so far

    def run(self, run_id: str) -> str:
        events = self.live.run_events(run_id)
        first = events[0]
        if run_id in self.forgot.segments:  # tombstoned by a forget: history as it now stands, copied as stored
            self.replica.carry(run_id, events)
            self.report.carried += 1
            return ""
        kind = P.RunStart.from_event(first).kind if first.kind == EventKind.RUN_START else None
        if kind == STREAM_KIND:
            return self._stream(run_id, first)
        if kind == REFERENCE_KIND:
            return self._reference(run_id, first)
        if kind == INCIDENT_KIND:
            return self._incident(run_id, events)
        if first.kind == EventKind.RUN_START and first.level in (Level.L1, Level.L2):
            return self._loop(run_id, events)
        if first.kind == EventKind.SYMPTOM:
            return self._symptom(run_id, events)
        return self._carry(run_id, events)

    def _count(self, kind: str) -> str:
        self.report.rederived[kind] = self.report.rederived.get(kind, 0) + 1
        return ""

    def _carry(self, run_id: str, events: list[Event]) -> str:
        self.replica.append_run(run_id, [as_draft(e) for e in events])
        self.report.carried += 1
        if events[-1].kind == EventKind.RUN_END and events[0].level in (Level.L1, Level.L2):
            self.finals[events[-1].sha] = events[-1].text  # its symptom run projects the memory as it was
        return ""

    def _stream(self, run_id: str, start: Event) -> str:
        a = P.RunStart.from_event(start)
        chunks = self.fresh.at(a.stream_id, a.chunk_tokens)
        if chunks is None or reference_run_id(a.stream_id, chunks, 0, STREAM_KIND) != run_id:
            return self._carry(run_id, self.live.run_events(run_id))  # a source as it was before an edit
        record_stream(self.replica, a.stream_id, chunks, chunk_tokens=a.chunk_tokens)
        return self._count("stream")

    def _reference(self, run_id: str, start: Event) -> str:
        a = P.RunStart.from_event(start)
        path = next((p for p in self.inputs.reference if source_id(p, self.inputs.reference_root) == a.stream_id), None)
        if path is None:
            return self._carry(run_id, self.live.run_events(run_id))
        bound = a.max_tokens or 0
        chunks = chunk_sources([path], self.inputs.reference_root or path.parent, bound)[a.stream_id]
        if reference_run_id(a.stream_id, chunks, bound) != run_id:
            return self._carry(run_id, self.live.run_events(run_id))  # the document as it was before an edit
        self.replica.append_run(run_id, reference_drafts(a.stream_id, chunks, bound))
        return self._count("reference")

    def _loop(self, run_id: str, events: list[Event]) -> str:
        a = P.RunStart.from_event(events[0])
        level = Level(events[0].level)
        query = Query(a.query_id, a.query_text, a.store, bool(a.use_exit_gate))
        cfg = LoopConfig(**(a.config or {}))
        stream = self._l1_stream(a.stream_id, a.chunk_tokens) if level == Level.L1 else l2_stream(self.replica, query)
        if stream is None or stream.sha != a.stream_sha:
            if level == Level.L1:
                return self._carry(run_id, events)  # the source as it was before an edit: history, not drift
            return f"run {run_id[:16]} (L2 {query.id}): its stream of L1 memories differs from the recorded one"
        client = ReplayClient.of_run(events)
        if run_id_for(level, query, stream, cfg, client.model_id, gate_format(client)) != run_id:
            return (f"run {run_id[:16]} ({level} {query.id} × {a.stream_id}): the same inputs now name another "
                    "run (loop config, gate template, gate grammar or model id changed)")
        journal = self.replica.open_run(run_id)
        try:
            asyncio.run(run_loop(level, query, stream, client, journal, cfg))
        except ReplayMiss as miss:
            turn = max((e.turn for e in journal.events), default=0) + 1
            return (f"run {run_id[:16]} ({level} {query.id} × {a.stream_id}) turn {turn}: the gate prompt differs "
                    f"from the recorded one (prompt {miss.prompt_sha[:16]} was never sent)")
        self.report.replayed_calls += client.calls
        self.finals[journal.events[-1].sha] = journal.events[-1].text
        return self._count("loop")

    def _incident(self, run_id: str, events: list[Event]) -> str:
        """An incident run: the stream's records read afresh and cut into incidents again, the card asked of the
        recorded reply; a stream that changed since (another version of the source), or a run cut by another version
        of the code (``poimen.incidents.version``), is carried as history."""
        a = P.RunStart.from_event(events[0])
        stream = self._l1_stream(a.stream_id, a.chunk_tokens)
        path = self.fresh.paths.get(a.stream_id)
        if stream is None or path is None or stream.sha != a.stream_sha or a.cut != cut_version():
            return self._carry(run_id, events)
        streams, paths = [stream], {a.stream_id: path}
        for sid, sha in a.read_with or ():  # the channel's other day files it was cut with, as they were
            other = self._l1_stream(sid, a.chunk_tokens)
            if other is None or other.sha != sha or sid not in self.fresh.paths:
                return self._carry(run_id, events)
            streams.append(other)
            paths[sid] = self.fresh.paths[sid]
        plans, errors = stream_plans(streams, paths, self.inputs.reading)
        plan = next((p for p in plans if p.key == a.incident), None)
        if plan is None:
            return f"incident run {run_id[:16]} ({a.stream_id}): incident {a.incident} is no longer cut from the " \
                   f"stream{': ' + errors[0] if errors else ''}"
        client = ReplayClient.of_run(events)
        fmt = incident_format(client)
        if incident_run_id(plan, client.model_id, fmt) != run_id:
            return (f"incident run {run_id[:16]} ({a.stream_id}): the same incident now names another run (its lines, "
                    "the incident template, its grammar or the model id changed)")
        try:
            prompt_sha, replies, reasons, reply = asyncio.run(ask_incident(client, plan, fmt))
        except ReplayMiss as miss:
            return f"incident run {run_id[:16]} ({a.stream_id}): the incident prompt differs from the recorded one ({miss})"
        query = Query(a.query_id, a.query_text, a.store)
        self.replica.append_run(run_id, drafts_for(plan, query, client.model_id, prompt_sha, replies, reasons, reply,
                                                   fmt))
        self.report.replayed_calls += client.calls
        if events[-1].kind == EventKind.RUN_END and events[-1].sha:
            self.finals[events[-1].sha] = events[-1].text
        return self._count("incident")

    def _l1_stream(self, stream_id: str, chunk_tokens: int | None) -> Stream | None:
        chunks = self.fresh.at(stream_id, chunk_tokens)
        return Stream.of(stream_id, chunks, chunk_tokens) if chunks is not None else None

    def _symptom(self, run_id: str, events: list[Event]) -> str:
        e = events[0]
        memory = self.finals.get(e.sha)
        if memory is None:
            return f"symptom run {run_id[:16]}: memory {e.sha[:16]} is not in the replayed log"
        client = ReplayClient.of_run(events)
        try:
            p = asyncio.run(project(e.sha, e.level, memory, client))
        except ReplayMiss as miss:
            return f"symptom run {run_id[:16]}: the symptom prompt differs from the recorded one ({miss})"
        if projection_run_id(p.memory_sha, p.model_id) != run_id:
            return f"symptom run {run_id[:16]}: the same memory now names another run (symptom template changed)"
        self.replica.append_run(run_id, [draft(p)])
        self.report.replayed_calls += client.calls
        return self._count("symptom")
