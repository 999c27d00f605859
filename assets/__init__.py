"""The Dagster assets of poimen, one module per stage; bodies stay thin and call the framework-free core."""

from assets.audit import rebuild_audit
from assets.checks import CHECKS
from assets.chunks import chunks, chunks_asset
from assets.incidents import incidents
from assets.index import INDEX_SPECS, projection_tables
from assets.memories import l1_asset, l1_memories, l2_memories
from assets.reference import reference_docs
from assets.shards import DEFAULT_SHARDS
from assets.tool_context import symptom_projections
from assets.typed_stores import typed_stores


def assets_for(shards: int = DEFAULT_SHARDS) -> list:
    """Every asset, with ``chunks`` and ``l1_memories`` fanned out over ``shards`` steps each."""
    sharded = [chunks, l1_memories] if shards == DEFAULT_SHARDS else [chunks_asset(shards), l1_asset(shards)]
    return [*sharded, incidents, reference_docs, l2_memories, symptom_projections, typed_stores, projection_tables,
            rebuild_audit]


ASSETS = assets_for()

__all__ = ["ASSETS", "CHECKS", "INDEX_SPECS", "assets_for", "chunks", "incidents", "l1_memories", "l2_memories",
           "projection_tables", "rebuild_audit", "reference_docs", "symptom_projections", "typed_stores"]
