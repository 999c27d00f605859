"""The DuckDB index: every projection table rebuilt from the log in one transaction, one asset per group of tables."""


from collections import Counter
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from assets.incidents import incidents
from assets.memories import l1_memories, l2_memories
from assets.reference import reference_docs
from assets.tool_context import symptom_projections
from assets.typed_stores import typed_stores
from poimen.domain import sha256_json
from poimen.index import PROJECTIONS, build_projections, write_manifest
from poimen.index.build import PROJECTION_DIR
from resources import WRITER_POOL, EmbedderResource, EventLogResource, IndexDatabaseResource, writer_step

# Which asset each projection table belongs to; a table not named here (a projection added later) joins memory_index.
TABLE_GROUPS = {
    "failure_signatures": ("failure_signature",),
    "context_units": ("memory_line", "unit", "unit_vector"),
    "typed_store_index": ("store_block", "store_item"),
    "incident_index": ("incident", "incident_line", "incident_member"),
}
INDEX_SPECS = [
    dg.AssetSpec("memory_index", group_name="index", kinds={"duckdb", "parquet"},
                 deps=[l1_memories, l2_memories, incidents, reference_docs, symptom_projections],
                 description="DuckDB tables evidence, memory, edge, run, gate, memory_vector (text and symptom "
                             "vectors) and symptom, dropped and rebuilt from the event log, with the manifest of hashes."),
    dg.AssetSpec("failure_signatures", group_name="tool_context", kinds={"duckdb"},
                 deps=[l1_memories, l2_memories, incidents],
                 description="Failure signatures (HTTP status, exception + frames, exit code, errno, Kubernetes reason, "
                             "log template) found in the L0 evidence, pointing at the current memory whose lineage "
                             "holds them: the next occurrence is an exact tier-1 hit."),
    dg.AssetSpec("context_units", group_name="index", kinds={"duckdb"},
                 deps=[l1_memories, l2_memories, incidents, reference_docs],
                 description="What the context builder ranks: every memory line with its evidence span, L0 and R units, "
                             "and one vector per distinct unit text."),
    dg.AssetSpec("incident_index", group_name="index", kinds={"duckdb"}, deps=[incidents, symptom_projections],
                 description="Every current incident card (title, summary, time span) and its lines by role (symptom, "
                             "cause, fix, verification), each with the evidence chunk and span it was copied from."),
    dg.AssetSpec("typed_store_index", group_name="typed_memory", kinds={"duckdb"}, deps=[typed_stores],
                 description="The typed stores' core blocks and items per namespace, replayed from store_write events."),
]


def tables_of(asset: str) -> list[str]:
    """The projection tables an index asset reports, in build order."""
    names = [p.name for p in PROJECTIONS]
    if asset in TABLE_GROUPS:
        return [t for t in names if t in TABLE_GROUPS[asset]]
    grouped = {t for tables in TABLE_GROUPS.values() for t in tables}
    return [t for t in names if t not in grouped]


def signature_summary(path: Path) -> dict:
    """What the failure_signature table holds, for the UI: kinds, tools, distinct keys and memories."""
    rows = pq.read_table(path, columns=["kind", "tool", "key", "memory_sha"]).to_pylist() if path.exists() else []
    return {"keys": len({r["key"] for r in rows}), "memories": len({r["memory_sha"] for r in rows}),
            "kinds": dg.MetadataValue.json(dict(sorted(Counter(r["kind"] for r in rows).items()))),
            "tools": dg.MetadataValue.json(dict(sorted(Counter(r["tool"] for r in rows).items())))}


@dg.multi_asset(specs=INDEX_SPECS, pool=WRITER_POOL, can_subset=False)
@writer_step
def projection_tables(event_log: EventLogResource, embedder: EmbedderResource, duckdb: IndexDatabaseResource):
    """Every projection, dropped and rebuilt from the log in one transaction; each asset reports its own tables."""
    stats = build_projections(event_log.log_root, duckdb.path, embedder.get_embedder(),
                              out_dir=event_log.path / PROJECTION_DIR)
    manifest = write_manifest(event_log.path, stats, stats.row_hashes)
    for spec in INDEX_SPECS:
        tables = tables_of(spec.key.path[-1])
        extra = signature_summary(event_log.path / PROJECTION_DIR / "failure_signature.parquet") \
            if spec.key.path[-1] == "failure_signatures" else {}
        yield dg.MaterializeResult(asset_key=spec.key, metadata={
            "rows": sum(stats.rows[t] for t in tables),
            **{f"rows_{t}": stats.rows[t] for t in tables},
            "content_hash": sha256_json(sorted((t, stats.content_hash[t]) for t in tables)),
            "table_hashes": dg.MetadataValue.json({t: stats.content_hash[t] for t in tables}),
            "model_id": dg.MetadataValue.json(stats.model_ids),
            "database": dg.MetadataValue.path(str(duckdb.path)),
            "manifest": dg.MetadataValue.path(str(manifest)),
            **extra,
        })
