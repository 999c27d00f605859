"""The DuckDB index: every projection table rebuilt from the log, with its hashes recorded beside the log."""


from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.memories import l1_memories, l2_memories
from assets.reference import reference_docs
from assets.tool_context import symptom_projections
from assets.typed_stores import typed_stores
from poimen.domain import sha256_json
from poimen.index import build_projections, write_manifest
from resources import EmbedderResource, EventLogResource


@dg.asset(group_name="index", kinds={"duckdb", "parquet"},
          deps=[l1_memories, l2_memories, reference_docs, symptom_projections, typed_stores])
def memory_index(event_log: EventLogResource, embedder: EmbedderResource, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """DuckDB tables evidence, memory, edge, run, gate, memory_vector (text and symptom vectors), symptom,
    failure_signature and the typed stores, dropped and rebuilt from the event log."""
    stats = build_projections(event_log.path, Path(duckdb.database), embedder.get_embedder())
    manifest = write_manifest(event_log.path, stats, stats.row_hashes)
    return dg.MaterializeResult(metadata={
        "rows": sum(stats.rows.values()),
        **{f"rows_{table}": n for table, n in stats.rows.items()},
        "content_hash": sha256_json(sorted(stats.content_hash.items())),
        "table_hashes": dg.MetadataValue.json(stats.content_hash),
        "model_id": dg.MetadataValue.json(stats.model_ids),
        "database": dg.MetadataValue.path(str(duckdb.database)),
        "manifest": dg.MetadataValue.path(str(manifest)),
    })
