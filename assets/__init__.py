"""The Dagster assets of poimen, one module per stage; bodies stay thin and call the framework-free core."""

from assets.audit import rebuild_audit
from assets.checks import CHECKS
from assets.chunks import chunks
from assets.index import INDEX_SPECS, projection_tables
from assets.memories import l1_memories, l2_memories
from assets.reference import reference_docs
from assets.tool_context import symptom_projections
from assets.typed_stores import typed_stores

ASSETS = [chunks, reference_docs, l1_memories, l2_memories, symptom_projections, typed_stores, projection_tables,
          rebuild_audit]

__all__ = ["ASSETS", "CHECKS", "INDEX_SPECS", "chunks", "l1_memories", "l2_memories", "projection_tables",
           "rebuild_audit", "reference_docs", "symptom_projections", "typed_stores"]
