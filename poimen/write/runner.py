"""Plan and execute many loop runs (queries × streams) against one event log, concurrently with a limit.

Runs are independent, so they go concurrently under a semaphore; one run's
turns stay in order because each run is one coroutine. A sealed run with the
same ``run_id`` is skipped (idempotent); an unfinished one continues only when
``resume`` is set; a run whose model stops answering is left resumable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from poimen.inputs.reading import DETECT, Reading
from poimen.inputs.chunk_store import file_stream, write_chunks
from poimen.inputs.chunking import DEFAULT_MAX_TOKENS, iter_chunks, source_id, sources_root
from poimen.domain import Chunk, Level, Query, Stream, sha256_text
from poimen.errors import ModelUnavailable, RunBusy, RunForgotten, RunInterrupted, SourceError
from poimen.llm.client import ModelClient
from poimen.log.payloads import RunEnd
from poimen.log.forgotten import forgotten
from poimen.log.runs import l1_memories, read_runs
from poimen.log.store import EventLog
from poimen.write.reference import record_stream
from poimen.write.loop import LoopConfig, RunOutcome, gate_format, run_id_for, run_loop
from poimen.text.tokens import count_tokens


def source_stream(path: str | Path, max_tokens: int = DEFAULT_MAX_TOKENS, root: Path | None = None,
                  reading: Reading = DETECT) -> Stream:
    """One source as a stream read lazily, holding no chunk in memory: a first pass validates it whole and records
    chunk shas, and each reading cuts it again (a test or a bench over one source; `mem run` uses ``open_sources``)."""
    path = Path(path)
    sid = source_id(path, root)
    fmt = reading.format_for(sid)
    shas = tuple(c.sha for c in iter_chunks(path, max_tokens, root, fmt, reading.fields))
    return Stream(sid, shas, lambda: iter_chunks(path, max_tokens, root, fmt, reading.fields), max_tokens)


def open_sources(paths: Sequence[str | Path], max_tokens: int = DEFAULT_MAX_TOKENS, root: Path | None = None,
                 reading: Reading = DETECT, *, chunk_dir: Path) -> tuple[list[Stream], list[str]]:
    """Streams for the readable sources and one error line for each unreadable one; one bad file stops nothing.

    Each source is chunked once, into a chunks file under ``chunk_dir`` (``write_chunks``, as the build's `chunks`
    step does), and its stream reads that file: the L0 record and every query's loop read the chunks, none cuts
    the source again. Each stream is named by its path relative to ``root``, by default the folder the sources
    share; its file by the sha of that name (a name can be an absolute path).
    """
    root = root if root is not None else sources_root(paths)
    streams, errors = [], []
    for p in paths:
        try:
            sid = source_id(Path(p), root)
            path = Path(chunk_dir) / f"{sha256_text(sid)}.parquet"
            write_chunks(path, Path(p), root, max_tokens, reading=reading)
            streams.append(file_stream(path, sid))
        except SourceError as exc:
            errors.append(str(exc))
    return streams, errors


def l2_stream(log: EventLog, query: Query) -> Stream | None:
    """The L1 memories of one query as a stream of L1 chunks: the latest sealed run per source, by source."""
    latest = l1_memories(read_runs(log), query.id)
    if not latest:
        return None
    chunks = [
        Chunk(text=s.final_memory, source=f"L1:{s.stream_id}", position=i, tokens=count_tokens(s.final_memory),
              level=Level.L1)
        for i, s in enumerate(latest[k] for k in sorted(latest))
    ]
    return Stream.of(f"L1-memories:{query.id}", chunks)


@dataclass(frozen=True)
class RunPlan:
    level: Level
    query: Query
    stream: Stream


def without_forgotten(plans: Sequence[RunPlan], gone: frozenset[str]) -> list[RunPlan]:
    """Plans whose streams skip the chunks ``mem forget`` removed (a stream left with none is not read at all;
    ``execute`` drops the streams of forgotten sources before).

    The stream's sha changes with its chunks, so a run that read forgotten text gets a new run id: the next build
    re-derives it without that text instead of finding the old run sealed.
    """
    if not gone:
        return list(plans)
    out = []
    for p in plans:
        shas = tuple(s for s in p.stream.chunk_shas if s not in gone)
        if not shas:
            continue
        if shas == p.stream.chunk_shas:
            out.append(p)
        else:
            opened = p.stream.open
            out.append(RunPlan(p.level, p.query, Stream(p.stream.id, shas,
                                                         lambda opened=opened: (c for c in opened() if c.sha not in gone),
                                                         p.stream.chunk_tokens)))
    return out


async def execute(
    log: EventLog,
    plans: Sequence[RunPlan],
    client: ModelClient,
    cfg: LoopConfig = LoopConfig(),
    concurrency: int = 4,
    resume: bool = False,
    on_turn: Callable[[RunPlan, int, bool, int], None] | None = None,
) -> list[RunOutcome]:
    """Run every plan; the caller must hold ``log.writer()``."""
    sem = asyncio.Semaphore(max(1, concurrency))
    gone = forgotten(log)
    plans = without_forgotten([p for p in plans if p.stream.id not in gone.streams], gone.shas)
    # What the log held when the batch began, and the runs this batch seals: a run is looked up here, not in the
    # index (on object storage each look is a round trip). A run another writer seals meanwhile is found sealed
    # once this writer holds it, below.
    sealed = set(log.sealed_run_ids())
    journals = log.journals_at_start
    streams = list({p.stream.id: p.stream for p in plans if p.level == Level.L1}.values())
    # The L0 stream records are runs of their own that no loop run waits for: one worker thread seals them while
    # the loops ask the model (on object storage they were ~5 round trips each, in a row, before the first call).
    recording = asyncio.ensure_future(asyncio.to_thread(record_streams, log, streams, frozenset(sealed)))

    locks: dict[str, asyncio.Lock] = {}

    async def one(plan: RunPlan) -> RunOutcome:
        run_id = run_id_for(plan.level, plan.query, plan.stream, cfg, client.model_id, gate_format(client))
        # Two sources with the same content name the same run: run it once, never two writers on one journal.
        async with locks.setdefault(run_id, asyncio.Lock()):
            outcome = await once(plan, run_id)
            if outcome.status in ("sealed", "skipped"):
                sealed.add(run_id)
            return outcome

    async def once(plan: RunPlan, run_id: str) -> RunOutcome:
        outcome = RunOutcome(run_id, plan.level, plan.query.id, plan.stream.id, "skipped")
        if run_id in sealed:
            end = log.run_events(run_id)[-1]
            done = RunEnd.from_event(end)
            outcome.chunks_seen, outcome.chunks_used = done.chunks_seen, done.chunks_used
            outcome.final_memory, outcome.final_memory_sha = end.text, end.sha
            return outcome
        if run_id in journals and not resume:
            outcome.status, outcome.problem = "unfinished", RunInterrupted(run_id, plan.query.id, plan.stream.id)
            return outcome
        async with sem:
            try:  # another local writer of this very run: wait for it (off the event loop), then look again
                journal = await asyncio.to_thread(log.open_run, run_id, True)
            except RunBusy as exc:  # on object storage: another writer (or a dead one) wrote its next turn first
                outcome.status, outcome.problem = "unfinished", exc
                return outcome
            hook = (lambda t, u, m: on_turn(plan, t, u, m)) if on_turn else None
            try:
                if await asyncio.to_thread(log.is_sealed, run_id):  # sealed by another writer since we looked
                    journal.discard()
                    sealed.add(run_id)
                    return await once(plan, run_id)
                if journal.resumed and not resume:  # left unfinished by the writer we waited for
                    outcome.status = "unfinished"
                    outcome.problem = RunInterrupted(run_id, plan.query.id, plan.stream.id, len(journal.events))
                    return outcome
                return await run_loop(plan.level, plan.query, plan.stream, client, journal, cfg, on_turn=hook)
            except ModelUnavailable as exc:
                outcome.status = "interrupted"
                outcome.problem = RunInterrupted(run_id, plan.query.id, plan.stream.id, len(journal.events), str(exc))
                return outcome
            except RunBusy as exc:  # on object storage: another writer put one of this run's turns first; it is theirs
                outcome.status, outcome.problem = "unfinished", exc
                return outcome
            except RunForgotten as exc:  # a forget on another machine overtook it: dropped, as the forget wants
                outcome.status, outcome.problem = "forgotten", exc
                return outcome
            finally:
                journal.close()

    try:
        return list(await asyncio.gather(*(one(p) for p in plans)))
    finally:
        await recording


def record_streams(log: EventLog, streams: Sequence[Stream], sealed: frozenset[str]) -> list[str]:
    """Record each L0 stream as its own sealed run (``record_stream``), one after another; their run ids (less any
    a forget committed meanwhile dropped)."""
    recorded = []
    for s in streams:
        try:
            recorded.append(record_stream(log, s.id, list(s.open()), sealed, s.chunk_tokens))
        except RunForgotten:  # forgotten on another machine while this batch ran: the record is dropped, as it should be
            continue
    return recorded
