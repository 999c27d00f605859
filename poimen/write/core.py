"""The write-path facade: what ``mem run`` and the Dagster L1/L2 assets call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from poimen import settings
from poimen.domain import Level, Query, Stream
from poimen.llm.client import ModelClient, client_for, reply_cache
from poimen.log.store import EventLog
from poimen.write.loop import FINISHED, LoopConfig, RunOutcome
from poimen.inputs.queries import adhoc_query, load_queries
from poimen.inputs.chunking import source_id, sources_root
from poimen.inputs.reading import DETECT, Reading, remember_reading
from poimen.write.incidents import run_incidents, stream_plans
from poimen.write.runner import RunPlan, execute, l2_stream, open_sources
from poimen.write.scratch import chunk_folder
from poimen.inputs.source_lines import remember_root
from poimen.settings import ModelConfig


@dataclass
class RunRequest:
    root: Path | str  # a folder or a log URI (file://, s3://, gs://)
    sources: list[Path] = field(default_factory=list)
    query: str | None = None
    queries: Path | None = None
    level: str = "L1"
    model: ModelConfig = ModelConfig()  # which model, reached how (unset fields: the POIMEN_* settings)
    use_exit_gate: bool = False
    resume: bool = False
    concurrency: int = 4
    chunk_tokens: int = 5000
    memory_budget: int = 1024
    sources_root: Path | None = None
    streams: list[Stream] | None = None  # L1 streams already chunked (the Dagster build reads its chunks Parquet)
    reading: Reading = DETECT  # --format / --fields: how sources are read when detection is not to decide
    cache_replies: bool = False  # keep the model's replies in the log folder's reply cache (``reply_cache_of``)
    # at L1, also the card of every incident of each source (``poimen.write.incidents``); unset: POIMEN_INCIDENTS
    incidents: bool = field(default_factory=settings.incidents)


@dataclass
class RunResult:
    outcomes: list[RunOutcome]
    source_errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.source_errors and all(o.status in FINISHED for o in self.outcomes)


def plan_runs(req: RunRequest, log: EventLog, chunk_dir: Path) -> tuple[list[RunPlan], list[str]]:
    """The runs a request asks for, and one error line per unreadable source; L1 sources are chunked once, into
    chunks files under ``chunk_dir`` that their streams read (``open_sources``)."""
    qs: list[Query] = load_queries(req.queries) if req.queries else [adhoc_query(req.query or "")]
    if req.level == "L2":
        plans = [RunPlan(Level.L2, q, s) for q in qs if (s := l2_stream(log, q)) is not None]
        return plans, []
    if req.streams is not None:  # chunked already (the Dagster build's stored chunks): note where they were read
        streams, errors, root = req.streams, [], req.sources_root
    else:
        root = req.sources_root if req.sources_root is not None else sources_root(req.sources)
        streams, errors = open_sources(req.sources, req.chunk_tokens, root, req.reading, chunk_dir=chunk_dir)
    remember_root(req.root, root)  # so `mem show` finds the files, whichever entry built the runs
    for s in streams:
        remember_reading(req.root, s.id, req.reading)
    return [RunPlan(Level.L1, q, s) for s in streams for q in qs], errors


def reply_cache_of(log: EventLog) -> Path | None:
    """Where ``mem run`` keeps model replies: ``<log>/cache/llm`` for a local log, so a run killed mid-seal resumes
    without asking again for its last turn, a log whose events are deleted is rebuilt without paying for a call, and
    ``mem forget`` (``--work-dir`` defaults to a local log's own folder) scrubs the replies that quote what it removes.

    A log on an object store gets none (None). The command line keeps no local derivative of such a log, neither
    index nor sources hint: the derivatives live in a work folder named where the log is used (the pipeline's
    ``EventLogResource(work_dir=...)``, ``mem forget --work-dir``), and ``mem run`` names none. A cache under
    ``$POIMEN_HOME`` would be a copy of the log's text on whichever machine ran the command, one that no forget of
    that log is pointed at; without it, a resumed run asks again only for the turns that were in flight.
    """
    return reply_cache(log.root) if isinstance(log.root, Path) else None


def run_loops(
    req: RunRequest,
    client: ModelClient | None = None,
    on_start: Callable[[int], None] | None = None,
    on_turn: Callable[[RunPlan, int, bool, int], None] | None = None,
) -> RunResult:
    """Plan and execute runs under the log's writer lock. Bad sources are reported and skipped. With no ``client``,
    one is built from the request, caching replies (``cache_replies``) where ``reply_cache_of`` says."""
    if req.level == "L1" and not req.sources and req.streams is None:
        from poimen.errors import PoimenError

        raise PoimenError("no sources given (L1 reads source files)")
    log = EventLog(req.root)
    cache = reply_cache_of(log) if req.cache_replies else None
    client = client or client_for(replace(req.model, cache_dir=cache))
    cfg = LoopConfig(memory_budget=req.memory_budget, use_exit_gate=req.use_exit_gate)
    # writers of other runs may write beside us; each run is claimed alone. The chunks files last as long as the runs
    # that read them: a derivative of this command's sources, not of the log, so none is left in the log's folder
    # (and one a killed run left is swept by the next: ``poimen.write.scratch``).
    with log.writer(shared=True), chunk_folder() as chunk_dir:
        plans, errors = plan_runs(req, log, chunk_dir)
        if on_start:
            on_start(sum(len(p.stream.chunk_shas) for p in plans))
        outcomes = asyncio.run(execute(log, plans, client, cfg, req.concurrency, req.resume, on_turn))
        if req.level == "L1" and req.incidents:
            found, unread = incident_plans(req, log, [p.stream for p in plans])
            outcomes += asyncio.run(run_incidents(log, found, client, req.concurrency))
            errors += unread
    return RunResult(outcomes, errors)


def incident_plans(req: RunRequest, log: EventLog, streams: list[Stream]) -> tuple[list, list[str]]:
    """The incidents of the L1 streams just read, from their source files (the request's, or the stored streams'
    under the sources root)."""
    from poimen.log.forgotten import forgotten

    unique = list({s.id: s for s in streams}.values())
    if req.sources:
        root = req.sources_root if req.sources_root is not None else sources_root(req.sources)
        paths = {source_id(Path(p), root): Path(p) for p in req.sources if Path(p).is_file()}
    else:
        paths = {s.id: Path(req.sources_root) / s.id for s in unique} if req.sources_root is not None else {}
    gone = forgotten(log)
    return stream_plans(unique, paths, req.reading, gone.streams, gone.shas)
