"""L1 and L2 memories: the same gated loop, at level L1 over the stored chunks and at level L2 over the L1 memories."""


import dagster as dg

from assets.chunks import chunks
from assets.metadata import gate_timeline, outcome_counts, run_stats, sealed_events
from poimen.chunk_store import CHUNK_DIR, stored_stream
from poimen.chunking import source_id
from poimen.core import RunRequest, RunResult, run_loops
from poimen.errors import SourceError
from poimen.log.forgotten import forgotten
from poimen.progress import RunProgress
from resources import WRITER_POOL, CorpusResource, EventLogResource, LLMResource, writer_step


def l1_streams(corpus: CorpusResource, event_log: EventLogResource) -> tuple[list, list[str]]:
    """Each current source's stream from its chunks Parquet (written by `chunks`): no source is chunked again."""
    streams, errors = [], []
    gone = forgotten(event_log.log()).streams  # sources `mem forget` removed have no chunks and are not read
    for source in corpus.source_files():
        if source_id(source, corpus.sources_dir) in gone:
            continue
        try:
            streams.append(stored_stream(event_log.path / CHUNK_DIR, source, corpus.sources_dir))
        except SourceError as exc:
            errors.append(str(exc))
    return streams, errors


def run_level(context: dg.AssetExecutionContext, level: str, corpus: CorpusResource, event_log: EventLogResource,
              llm: LLMResource) -> RunResult:
    """Every standing query over its streams at ``level``; sealed runs are skipped and interrupted ones resumed."""
    streams, errors = l1_streams(corpus, event_log) if level == "L1" else (None, [])
    progress = RunProgress(context.log.info, level)
    result = run_loops(RunRequest(
        root=event_log.path, level=level, streams=streams, queries=corpus.queries_file, resume=True,
        concurrency=llm.concurrency, chunk_tokens=corpus.chunk_bound, memory_budget=corpus.memory_budget,
        sources_root=corpus.sources_dir,
    ), client=llm.get_client(), on_start=progress.on_start, on_turn=progress.on_turn)
    progress.finish(result.outcomes)
    return RunResult(result.outcomes, errors + result.source_errors)


def loop_result(context: dg.AssetExecutionContext, result: RunResult, event_log: EventLogResource) -> dg.MaterializeResult:
    """Fail loudly on runs that did not finish; otherwise report what the runs of this level hold."""
    for error in result.source_errors:
        context.log.warning(error)
    unfinished = [o for o in result.outcomes if o.status not in ("sealed", "skipped")]
    if unfinished:
        raise dg.Failure(
            description=f"{len(unfinished)} runs did not finish (re-materialize to resume them): " + "; ".join(o.error for o in unfinished[:5]),
            metadata={"unfinished": len(unfinished), **outcome_counts(result.outcomes)},
        )
    runs = sealed_events(event_log.log(), [o.run_id for o in result.outcomes])
    return dg.MaterializeResult(metadata={
        **run_stats(runs).as_metadata(), **outcome_counts(result.outcomes),
        "source_errors": len(result.source_errors),
        "gate_timeline": dg.MetadataValue.md(gate_timeline(runs)),
    })


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[chunks], pool=WRITER_POOL)
@writer_step
def l1_memories(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                llm: LLMResource) -> dg.MaterializeResult:
    """L1 memories: the gated loop runs every standing query over every source's stored chunks; sealed runs are skipped."""
    return loop_result(context, run_level(context, "L1", corpus, event_log, llm), event_log)


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[l1_memories], pool=WRITER_POOL)
@writer_step
def l2_memories(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                llm: LLMResource) -> dg.MaterializeResult:
    """L2 memories: per standing query, the same gated loop reads that query's L1 memories (one per source)."""
    return loop_result(context, run_level(context, "L2", corpus, event_log, llm), event_log)
