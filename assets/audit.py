"""The nightly full rebuild, recorded as its own asset so the live assets keep their metadata."""

import tempfile
from pathlib import Path

import dagster as dg

from assets.index import INDEX_SPECS
from poimen.forget.rematerialize import Inputs, rematerialize
from resources import WRITER_POOL, CorpusResource, EmbedderResource, EventLogResource, writer_step


@dg.asset(group_name="audit", kinds={"parquet", "duckdb"}, deps=[spec.key for spec in INDEX_SPECS], pool=WRITER_POOL)
@writer_step
def rebuild_audit(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource,
                  embedder: EmbedderResource) -> dg.MaterializeResult:
    """Every stage done again from the raw sources in a scratch folder: chunks compared by sha, every loop replayed
    against its recorded model replies (no model call) and compared byte for byte with the log, every projection
    compared with the manifest. Fails naming the first differing chunk, event or row; writes nothing it checks."""
    inputs = Inputs(corpus.source_files(), corpus.sources_dir, corpus.chunk_bound,
                    corpus.reference_files(), corpus.reference_dir, corpus.reading)
    with tempfile.TemporaryDirectory(prefix="poimen-rebuild-") as scratch:
        report = rematerialize(event_log.log_root, Path(scratch), inputs, embedder.get_embedder(),
                               work=event_log.path)
    context.log.info(str(report))
    metadata = {"chunks_compared": report.chunks_compared, "runs_carried_over": report.carried,
                "replies_replayed": report.replayed_calls, "report": dg.MetadataValue.md(f"```\n{report}\n```"),
                **{f"runs_rederived_{kind}": n for kind, n in sorted(report.rederived.items())}}
    if not report.ok:
        raise dg.Failure(description=f"the full rebuild differs from what is stored: {report.first_difference}"
                                     f"\n\n{report}", metadata=metadata)
    return dg.MaterializeResult(metadata=metadata)
