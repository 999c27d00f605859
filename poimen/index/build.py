"""Build every projection from the sealed log into DuckDB and byte-stable Parquet, and record their hashes.

Beside the log (so a rebuild on another machine compares against them)::

    projections/<table>.parquet   each table, rows sorted by key, uncompressed, no dictionaries
    manifest.json                 per table: rows, content hash, Parquet sha256; the model ids; the log head
    manifest.rows.jsonl           per row: table, key, row hash and short column hashes
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from poimen.domain import canonical_json
from poimen.errors import PoimenError
from poimen.index import project
from poimen.index.schema import BuildContext
from poimen.index.schema import RowHash, content_hash, create_table_sql, row_hashes, to_table
from poimen.log.segments import file_sha256
from poimen.log.store import EventLog
from poimen.settings import local_folder

MANIFEST = "manifest.json"
ROW_HASHES = "manifest.rows.jsonl"
PROJECTION_DIR = "projections"
HEAD_TABLE = "index_head"


@dataclass
class ProjectionStats:
    rows: dict[str, int]
    content_hash: dict[str, str]
    model_ids: dict
    parquet_sha256: dict[str, str] = field(default_factory=dict)
    row_hashes: dict[str, list[RowHash]] = field(default_factory=dict, repr=False)
    log_head: dict = field(default_factory=dict)


def log_head(log_root: Path | str, upto: int | None = None) -> dict:
    """Which state of the log a build read: the number of sealed runs and the last index hash (of the first
    ``upto`` runs when given)."""
    entries = EventLog(log_root).index()
    entries = entries if upto is None else entries[:upto]
    return {"sealed_runs": len(entries), "index_hash": entries[-1]["hash"] if entries else ""}


def extends(log_root: Path | str, head: dict) -> bool:
    """Whether the log is ``head`` plus runs sealed after it (the log only grows; anything else rewrote it)."""
    n = int(head.get("sealed_runs", 0))
    return log_head(log_root, n) == {"sealed_runs": n, "index_hash": head.get("index_hash", "")}


def connect(db_path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db_path), read_only=read_only)
    except duckdb.IOException as exc:
        raise PoimenError(f"{db_path}: cannot open the index ({str(exc).splitlines()[0]})") from None


def _write_parquet(table, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp, compression="NONE", use_dictionary=False, write_statistics=False)
    tmp.replace(path)


def fill(con: duckdb.DuckDBPyConnection, ctx: BuildContext, p, out_dir: Path, stats: ProjectionStats) -> None:
    """(Re)create one projection table from the log, write its Parquet copy and record its hashes in ``stats``."""
    schema = p.schema(ctx.dim)
    table = to_table(p.build(ctx), schema, p.key, p.name)
    ctx.built[p.name] = table
    con.execute(f'DROP TABLE IF EXISTS "{p.name}"')
    con.execute(create_table_sql(p.name, schema, p.key))
    con.register("_projection_rows", table)
    con.execute(f'INSERT INTO "{p.name}" SELECT * FROM _projection_rows')
    con.unregister("_projection_rows")
    path = out_dir / f"{p.name}.parquet"
    _write_parquet(table, path)
    hashes = row_hashes(table, p.key)
    stats.rows[p.name] = table.num_rows
    stats.content_hash[p.name] = content_hash(hashes)
    stats.parquet_sha256[p.name] = file_sha256(path)
    stats.row_hashes[p.name] = hashes


def read_table(con: duckdb.DuckDBPyConnection, name: str, dim: int):
    """A projection table as the index holds it, in the order and exact schema a build gives it (so its row
    hashes are comparable with a build's)."""
    p = project.projection(name)
    order = ", ".join(f'"{k}" NULLS FIRST' for k in p.key)
    return con.sql(f'SELECT * FROM "{name}" ORDER BY {order}').to_arrow_table().cast(p.schema(dim))


def write_head(con: duckdb.DuckDBPyConnection, head: dict, embedder) -> None:
    """Record in the index which log head (and embedder) its tables reflect; not a projection, never hashed."""
    con.execute(f'CREATE OR REPLACE TABLE "{HEAD_TABLE}" (sealed_runs BIGINT, index_hash VARCHAR, embedder VARCHAR)')
    con.execute(f'INSERT INTO "{HEAD_TABLE}" VALUES (?, ?, ?)',
                [head["sealed_runs"], head["index_hash"], embedder.model_id])


def read_head(db_path: Path) -> dict | None:
    """The log head an index reflects, or None (no index, or one built before the head was recorded)."""
    if not Path(db_path).exists():
        return None
    con = connect(db_path, read_only=True)
    try:
        row = con.execute(f'SELECT sealed_runs, index_hash, embedder FROM "{HEAD_TABLE}"').fetchone()
    except duckdb.CatalogException:
        return None
    finally:
        con.close()
    return dict(zip(("sealed_runs", "index_hash", "embedder"), row)) if row else None


def build_projections(log_root: Path | str, db_path: Path, embedder, projections: Sequence = (),
                      out_dir: Path | None = None, upto: int | None = None) -> ProjectionStats:
    """Drop every projection table and rebuild it from the sealed events of the log.

    Rows are sorted by each table's key; each table is also written as Parquet
    under ``out_dir`` (default ``log_root/projections``; a check passes a scratch
    folder so it never rewrites what it checks; a log on an object store names a local one). Tables that are not projections are left alone.
    Only sealed runs are read (only the first ``upto`` when given): an unfinished run is invisible until it seals.
    """
    db_path = Path(db_path)
    projections = list(projections or project.PROJECTIONS)  # read at call time: the list may have grown
    head = log_head(log_root, upto)
    ctx = BuildContext.from_log(log_root, embedder, upto=head["sealed_runs"])
    out_dir = Path(out_dir) if out_dir is not None else local_folder(log_root, "the projections' Parquet") / PROJECTION_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    stats = ProjectionStats({}, {}, {
        "embedder": embedder.model_id, "embedding_dim": ctx.dim,
        "llm": sorted({r.events[0].model_id for r in ctx.runs if r.is_loop_run and r.events[0].model_id}),
    }, log_head=head)

    def everything(con) -> list:
        for p in reversed(projections):
            con.execute(f'DROP TABLE IF EXISTS "{p.name}"')
        return projections

    write_tables(db_path, ctx, out_dir, stats, embedder, everything)
    return stats


def write_tables(db_path: Path, ctx: BuildContext, out_dir: Path, stats: ProjectionStats, embedder,
                 pick: Callable[[duckdb.DuckDBPyConnection], Sequence]) -> list:
    """Fill the projections ``pick`` chooses, and the head ``stats`` names, in one transaction: a reader sees
    the index before or after, never half of it. Returns the projections filled."""
    con = connect(db_path)
    try:
        con.execute("BEGIN TRANSACTION")
        chosen = list(pick(con))
        for p in chosen:
            fill(con, ctx, p, out_dir, stats)
        write_head(con, stats.log_head, embedder)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.close()
    return chosen


def write_manifest(log_root: Path, stats: ProjectionStats, row_hashes: dict[str, list[RowHash]] | None = None) -> Path:
    """Record what a build produced beside the log: ``manifest.json`` and ``manifest.rows.jsonl``."""
    log_root = Path(log_root)
    row_hashes = stats.row_hashes if row_hashes is None else row_hashes
    rows_path = log_root / ROW_HASHES
    tmp = rows_path.with_name(f".{rows_path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for table in stats.rows:
            for h in row_hashes.get(table, []):
                fh.write(canonical_json({"table": table, "key": h.key, "hash": h.hash, "columns": h.columns}) + "\n")
    tmp.replace(rows_path)
    manifest = {
        "version": 1,
        "tables": {t: {"rows": stats.rows[t], "content_hash": stats.content_hash[t],
                       "parquet_sha256": stats.parquet_sha256.get(t, "")} for t in stats.rows},
        "model_ids": stats.model_ids,
        "log_head": stats.log_head,
        "row_hashes": ROW_HASHES,
    }
    path = log_root / MANIFEST
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_manifest(log_root: Path) -> tuple[dict, dict[str, dict[str, RowHash]]] | None:
    """The stored manifest and its row hashes by table and key, or None when no build was recorded."""
    log_root = Path(log_root)
    path = log_root / MANIFEST
    if not path.exists():
        return None
    manifest = json.loads(path.read_text(encoding="utf-8"))
    rows: dict[str, dict[str, RowHash]] = {}
    rows_path = log_root / manifest.get("row_hashes", ROW_HASHES)
    if rows_path.exists():
        with rows_path.open(encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                rows.setdefault(r["table"], {})[r["key"]] = RowHash(r["key"], r["hash"], r["columns"])
    return manifest, rows
