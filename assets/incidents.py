"""Incident cards: every incident of every source, carded (symptom, cause, fix, verification) into the log."""


import asyncio

import dagster as dg

from assets.chunks import chunks
from assets.memories import l1_streams
from assets.metadata import card_preview, incident_counts
from poimen.domain import sha256_json
from poimen.llm.prompts import load
from poimen.log.forgotten import forgotten
from poimen.write.incidents import run_incidents, stream_plans
from resources import CorpusResource, EventLogResource, LLMResource, appender_step


@dg.asset(group_name="memory", kinds={"litellm", "parquet"}, deps=[chunks])
@appender_step
def incidents(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
              llm: LLMResource) -> dg.MaterializeResult:
    """Incident cards: each source's records cut into incidents, each incident carded by the model (symptom, cause,
    fix, verification, every line with its evidence chunk), one sealed run per incident; sealed ones are skipped."""
    if not corpus.incidents_on:
        return dg.MaterializeResult(metadata={"incidents": 0, "cards": 0, "off": "POIMEN_INCIDENTS (or the corpus's "
                                                                                "incidents) is off"})
    log = event_log.log()
    streams, errors = l1_streams(corpus, event_log)
    gone = forgotten(log)
    paths = {s.id: corpus.sources_dir / s.id for s in streams}
    plans, unread = stream_plans(streams, paths, corpus.reading, gone.streams, gone.shas)
    for error in errors + unread:
        context.log.warning(error)
    with log.writer(shared=True):
        outcomes = asyncio.run(run_incidents(log, plans, llm.get_client(event_log.path), llm.concurrency))
    unfinished = [o for o in outcomes if o.status not in ("sealed", "skipped", "forgotten")]
    if unfinished:
        raise dg.Failure(description=f"{len(unfinished)} incident runs did not finish (re-materialize to ask again): "
                                     + "; ".join(o.error for o in unfinished[:5]))
    per_source = incident_counts(outcomes)
    return dg.MaterializeResult(metadata={
        "incidents": sum(n for n, _ in per_source.values()),
        "cards": sum(c for _, c in per_source.values()),
        "runs_new": sum(o.status == "sealed" for o in outcomes),
        "runs_skipped": sum(o.status == "skipped" for o in outcomes),
        "source_errors": len(errors + unread),
        "per_source": dg.MetadataValue.md(
            "| source | incidents | cards |\n|---|---|---|\n"
            + "\n".join(f"| {s} | {n} | {c} |" for s, (n, c) in sorted(per_source.items())) or "none"),
        # Titles and roles only, never a line's text: Dagster's run storage keeps metadata for good, out of reach of
        # `mem forget` (the card's text stays in the log, behind its sha).
        "preview": dg.MetadataValue.md(card_preview(log, outcomes)),
        "prompt_template_sha": load("incident").sha,
        "content_hash": sha256_json(sorted([o.run_id, o.final_memory_sha] for o in outcomes)),
    })
