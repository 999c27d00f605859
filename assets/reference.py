"""Tier R: reference documentation (runbooks, READMEs) chunked and recorded directly, never run through the loop."""


import dagster as dg

from assets.metadata import sealed_events
from poimen.domain import sha256_json
from poimen.write.reference import ingest_reference
from resources import CorpusResource, EventLogResource, appender_step


@dg.asset(group_name="evidence", kinds={"parquet"})
@appender_step
def reference_docs(corpus: CorpusResource, event_log: EventLogResource) -> dg.MaterializeResult:
    """Reference docs (tier R) from the reference folder, chunked and recorded in the log for direct indexing."""
    files = corpus.reference_files()
    run_ids = ingest_reference(event_log.log_root, files, corpus.reference_tokens, corpus.reference_dir) if files else []
    runs = sealed_events(event_log.log(), run_ids)
    kinds: dict[str, int] = {}
    for events in runs.values():
        for e in events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
    return dg.MaterializeResult(metadata={
        "documents": len(files), "runs": len(runs), "rows": sum(len(ev) for ev in runs.values()),
        "events_by_kind": dg.MetadataValue.json(kinds), "max_tokens": corpus.reference_tokens,
        "path": dg.MetadataValue.path(str(corpus.reference_dir)),
        "content_hash": sha256_json(sorted([r, ev[-1].hash] for r, ev in runs.items() if ev)),
    })
