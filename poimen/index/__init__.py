"""The DuckDB projection of the event log, its rebuild check, and lookup.

``build_projections`` replays the sealed log into tables (see ``project.PROJECTIONS``
for the list and how to add one); ``rebuild`` does it again and compares with the
manifest beside the log; ``MemoryIndex`` / ``lookup`` search what was built.

Names load on first use (DuckDB, pyarrow and the scorer behind them cost half a
second), so a command that only needs ``default_db`` — a `mem lookup` answered by
a warm `mem serve --http` — pays nothing for them. The functions ``lookup`` and
``rebuild`` share their submodules' names, so they are imported from there
(``from poimen.index.lookup import lookup``): a package attribute cannot be both.
"""

from __future__ import annotations

import importlib
from pathlib import Path

_LAZY = {
    "ProjectionStats": "build", "build_projections": "build", "read_manifest": "build", "write_manifest": "build",
    "Hit": "lookup", "MemoryIndex": "lookup", "Provenance": "lookup",
    "PROJECTIONS": "project", "BuildContext": "project", "table_names": "project",
    "RebuildReport": "rebuild",
    "Projection": "schema",
}

__all__ = [
    "PROJECTIONS", "TABLES", "BuildContext", "Hit", "MemoryIndex", "Projection", "ProjectionStats", "Provenance",
    "RebuildReport", "build_projections", "default_db", "read_manifest", "write_manifest",
]


def default_db(root: Path) -> Path:
    """Where the DuckDB projection lives by default: ``root / "index.duckdb"``."""
    return Path(root) / "index.duckdb"


def __getattr__(name: str):
    # TABLES follows PROJECTIONS, so a projection registered later still shows up in it.
    if name == "TABLES":
        return importlib.import_module("poimen.index.project").table_names()
    if name in _LAZY:
        value = getattr(importlib.import_module(f"poimen.index.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'poimen.index' has no attribute {name!r}")
