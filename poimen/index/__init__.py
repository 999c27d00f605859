"""The DuckDB projection of the event log, its rebuild check, and lookup.

``build_projections`` replays the sealed log into tables (see ``project.PROJECTIONS``
for the list and how to add one); ``rebuild`` does it again and compares with the
manifest beside the log; ``MemoryIndex`` / ``lookup`` search what was built.
"""

from poimen.index.build import ProjectionStats, build_projections, default_db, read_manifest, write_manifest
from poimen.index.lookup import Hit, MemoryIndex, Provenance, lookup
from poimen.index.project import PROJECTIONS, BuildContext, table_names
from poimen.index.rebuild import RebuildReport, rebuild
from poimen.index.schema import Projection

__all__ = [
    "PROJECTIONS", "TABLES", "BuildContext", "Hit", "MemoryIndex", "Projection", "ProjectionStats", "Provenance",
    "RebuildReport", "build_projections", "default_db", "lookup", "read_manifest", "rebuild",
    "write_manifest",
]


def __getattr__(name: str):
    # TABLES follows PROJECTIONS, so a projection registered later still shows up in it.
    if name == "TABLES":
        return table_names()
    raise AttributeError(name)
