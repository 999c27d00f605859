"""L1 and L2 memories: the same gated loop, at level L1 over the stored chunks and at level L2 over the L1 memories."""


from types import SimpleNamespace

import dagster as dg

from assets.metadata import (build_settings, gate_timeline, last_build_settings, outcome_counts, run_stats,
                             sealed_events, settings_change)
from poimen.inputs.chunk_store import CHUNK_DIR, stored_stream
from poimen.inputs.chunking import source_id
from poimen.write.core import RunRequest, RunResult, run_loops
from poimen.write.loop import FINISHED
from poimen.errors import SourceError
from poimen.log.forgotten import forgotten
from poimen.write.progress import RunProgress
from assets.shards import DEFAULT_SHARDS, fan_out, shard_body, shard_sources
from resources import CorpusResource, EventLogResource, LLMResource, appender_step


def l1_streams(corpus: CorpusResource, event_log: EventLogResource, sources: list | None = None) -> tuple[list, list[str]]:
    """Each source's stream from its chunks Parquet (written by `chunks`): no source is chunked again."""
    streams, errors = [], []
    gone = forgotten(event_log.log())  # sources `mem forget` removed have no chunks and are not read
    for source in corpus.source_files() if sources is None else sources:
        if source_id(source, corpus.sources_dir) in gone.streams:
            continue
        try:
            streams.append(stored_stream(event_log.path / CHUNK_DIR, source, corpus.sources_dir))
        except SourceError as exc:
            errors.append(str(exc))
    return streams, errors


def run_level(context, level: str, corpus: CorpusResource, event_log: EventLogResource, llm: LLMResource,
              sources: list | None = None) -> RunResult:
    """Every standing query over its streams at ``level``; sealed runs are skipped and interrupted ones resumed."""
    streams, errors = l1_streams(corpus, event_log, sources) if level == "L1" else (None, [])
    progress = RunProgress(context.log.info, level)
    result = run_loops(RunRequest(
        root=event_log.log_root, level=level, streams=streams, queries=corpus.queries_file, resume=True,
        concurrency=llm.concurrency, chunk_tokens=corpus.chunk_bound, memory_budget=corpus.memory_budget,
        sources_root=corpus.sources_dir, reading=corpus.reading, incidents=False,  # the `incidents` asset cards them
    ), client=llm.get_client(event_log.path), on_start=progress.on_start, on_turn=progress.on_turn)
    progress.finish(result.outcomes)
    return RunResult(result.outcomes, errors + result.source_errors)


def require_finished(result: RunResult) -> None:
    """Fail loudly on runs that did not finish (a re-materialization resumes them)."""
    unfinished = [o for o in result.outcomes if o.status not in FINISHED]
    if unfinished:
        raise dg.Failure(
            description=f"{len(unfinished)} runs did not finish (re-materialize to resume them): " + "; ".join(o.error for o in unfinished[:5]),
            metadata={"unfinished": len(unfinished), **outcome_counts(result.outcomes)},
        )


def level_metadata(outcomes: list, source_errors: int, event_log: EventLogResource) -> dict:
    """What the runs of a level hold, for the materialization."""
    log = event_log.log()
    runs = sealed_events(log, [o.run_id for o in outcomes])
    settings = build_settings(runs)
    level = next((events[0].level for events in runs.values() if events), "")
    changed = settings_change(last_build_settings(log, level, runs), settings) if runs else ""
    if changed:  # said, never failed: each run records its own settings and the rebuild replays it with them
        dg.get_dagster_logger().warning(f"{level} settings differ from the last build's: {changed}")
    return {
        **run_stats(runs).as_metadata(), **outcome_counts(outcomes), "source_errors": source_errors,
        "settings": dg.MetadataValue.json(settings), "settings_changed": changed or "no",
        "gate_timeline": dg.MetadataValue.md(gate_timeline(runs)),
    }


def loop_result(context, result: RunResult, event_log: EventLogResource) -> dg.MaterializeResult:
    """Fail loudly on runs that did not finish; otherwise report what the runs of this level hold."""
    for error in result.source_errors:
        context.log.warning(error)
    require_finished(result)
    return dg.MaterializeResult(metadata=level_metadata(result.outcomes, len(result.source_errors), event_log))


@shard_body("corpus", "event_log", "llm")
def l1_shard(context: dg.OpExecutionContext, shard: int, shards: int, corpus: CorpusResource,
             event_log: EventLogResource, llm: LLMResource) -> dict:
    """One shard's L1 runs: every standing query over the shard's sources (plain data, so any executor can pass it)."""
    result = run_level(context, "L1", corpus, event_log, llm, shard_sources(corpus, shard, shards))
    for error in result.source_errors:
        context.log.warning(error)
    require_finished(result)
    return {"outcomes": [(o.run_id, o.status) for o in result.outcomes], "source_errors": result.source_errors}


@dg.op(description="Every shard's L1 runs together: what the runs hold, for the materialization.")
def l1_collect(shards: list[dict], event_log: EventLogResource) -> dg.Output:
    outcomes = [SimpleNamespace(run_id=r, status=s) for shard in shards for r, s in shard["outcomes"]]
    metadata = level_metadata(outcomes, sum(len(s["source_errors"]) for s in shards), event_log)
    return dg.Output(metadata["content_hash"], metadata={**metadata, "shards": len(shards)})


def l1_asset(shards: int = DEFAULT_SHARDS) -> dg.AssetsDefinition:
    @dg.graph_asset(name="l1_memories", group_name="memory", kinds={"litellm", "parquet"},
                    ins={"chunks": dg.AssetIn(dagster_type=dg.Nothing)})
    def l1_memories(chunks):
        """L1 memories: the gated loop runs every standing query over every source's stored chunks, shard by shard;
        sealed runs are skipped."""
        return fan_out("l1_memories", shards, l1_shard, l1_collect, start=chunks)

    return l1_memories


l1_memories = l1_asset()


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[l1_memories])
@appender_step
def l2_memories(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                llm: LLMResource) -> dg.MaterializeResult:
    """L2 memories: per standing query, the same gated loop reads that query's L1 memories (one per source)."""
    return loop_result(context, run_level(context, "L2", corpus, event_log, llm), event_log)
