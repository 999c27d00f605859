"""L1 and L2 memories: the same gated loop, at level L1 over the sources and at level L2 over the L1 memories."""


import dagster as dg

from assets.chunks import chunks
from assets.metadata import gate_timeline, outcome_counts, run_stats, sealed_events
from poimen.core import RunRequest, RunResult, run_loops
from resources import CorpusResource, EventLogResource, LLMResource


def run_level(level: str, corpus: CorpusResource, event_log: EventLogResource, llm: LLMResource) -> RunResult:
    """Every standing query over its streams at ``level``; sealed runs are skipped and interrupted ones resumed."""
    return run_loops(RunRequest(
        root=event_log.path, level=level, sources=corpus.source_files() if level == "L1" else [],
        queries=corpus.queries_file, resume=True, concurrency=llm.concurrency, chunk_tokens=corpus.chunk_tokens,
        memory_budget=corpus.memory_budget, sources_root=corpus.sources_dir,
    ), client=llm.get_client())


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


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[chunks])
def l1_memories(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                llm: LLMResource) -> dg.MaterializeResult:
    """L1 memories: the gated loop runs every standing query over every source; runs already sealed are skipped."""
    return loop_result(context, run_level("L1", corpus, event_log, llm), event_log)


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[l1_memories])
def l2_memories(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                llm: LLMResource) -> dg.MaterializeResult:
    """L2 memories: per standing query, the same gated loop reads that query's L1 memories (one per source)."""
    return loop_result(context, run_level("L2", corpus, event_log, llm), event_log)
