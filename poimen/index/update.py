"""The index follows the log: after runs are sealed, project them into the index with no rebuild step.

The index records the log head it reflects (``index_head``: sealed runs, last
index hash, embedder). An update reads the log, finds the runs sealed since
that head, and rebuilds only the tables those runs can change: each
projection declares the event kinds it ignores (``Projection.ignores``), so a
typed-store write rebuilds the two store tables and a loop run the others. A
rebuilt table is computed whole by the same function a full build uses,
because most tables are not append-only (a newer run of a stream clears
``current`` on the older, a shared signature's ``streams`` count grows, a
memory that stops being final loses its vectors); rebuilding a table whole is
what makes an update give the same bytes as ``mem rebuild --from-log``.

Anything an update cannot extend — no index yet, an index from before the
head was recorded, a log that is no longer the head plus new runs — gets a
full build instead. The update never writes the manifest: that stays the
record of the last audited build, which ``mem rebuild --from-log`` checks and extends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from poimen.index import default_db, project
from poimen.index.build import (HEAD_TABLE, PROJECTION_DIR, ProjectionStats, build_projections, extends,
                                log_head, read_head, read_manifest, read_table, write_tables)
from poimen.index.schema import BuildContext


@dataclass
class IndexUpdate:
    """What an update did: ``built`` (a full build), the runs it projected, and the tables it rewrote."""

    db_path: Path
    new_runs: int
    tables: list[str] = field(default_factory=list)
    built: bool = False

    def __str__(self) -> str:
        if self.built:
            return f"index: built from {self.new_runs} sealed runs ({self.db_path})"
        if not self.new_runs:
            return f"index: up to date ({self.db_path})"
        return (f"index: {self.new_runs} new run{'s' if self.new_runs != 1 else ''} projected, "
                f"{len(self.tables)} tables updated ({self.db_path})")


def index_embedder(log_root: Path, name: str | None = None, db_path: Path | None = None):
    """The embedder for this index: ``name`` if given, else the one the index (then the manifest) records,
    else ``$POIMEN_EMBEDDER`` or all-MiniLM-L6-v2. Vectors are cached under ``<log>/cache/embeddings``."""
    from poimen.embedding.embedders import configured_embedder_id, embedder_for

    log_root = Path(log_root)
    if not name:
        head = read_head(Path(db_path) if db_path else default_db(log_root))
        stored = read_manifest(log_root)
        name = (head or {}).get("embedder") or (stored[0].get("model_ids", {}).get("embedder") if stored else None)
    return embedder_for(name or configured_embedder_id(), cache_dir=log_root / "cache" / "embeddings")


def _loader(con, dim: int):
    """Read a table this update does not rebuild, as the build made it (key order, exact schema)."""
    return lambda name: read_table(con, name, dim)


def update_index(log_root: Path, db_path: Path | None = None, embedder=None) -> IndexUpdate:
    """Project the runs sealed since the index's head; a full build when there is nothing to extend.

    The caller should hold the log's writer lock, so no other writer updates the index at the same time.
    """
    log_root = Path(log_root)
    db_path = Path(db_path) if db_path else default_db(log_root)
    known = read_head(db_path)
    embedder = embedder or index_embedder(log_root, db_path=db_path)
    if known is None or not extends(log_root, known) or known.get("embedder") != embedder.model_id:
        stats = build_projections(log_root, db_path, embedder)
        return IndexUpdate(db_path, stats.log_head["sealed_runs"], list(stats.rows), built=True)
    head = log_head(log_root)
    n = int(known["sealed_runs"])
    if head["sealed_runs"] == n:
        return IndexUpdate(db_path, 0)
    ctx = BuildContext.from_log(log_root, embedder, upto=head["sealed_runs"])
    kinds = {str(e.kind) for run in ctx.runs[n:] for e in run.events}
    out_dir = log_root / PROJECTION_DIR
    out_dir.mkdir(parents=True, exist_ok=True)

    def stale(con) -> list:
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        ctx.load = _loader(con, ctx.dim)
        return [p for p in project.PROJECTIONS if p.reads_any(kinds) or p.name not in have]

    done = write_tables(db_path, ctx, out_dir, ProjectionStats({}, {}, {}, log_head=head), embedder, stale)
    return IndexUpdate(db_path, head["sealed_runs"] - n, [p.name for p in done])


__all__ = ["HEAD_TABLE", "IndexUpdate", "index_embedder", "update_index"]
