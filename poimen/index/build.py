"""Build every projection from the sealed log into DuckDB and byte-stable Parquet, and record their hashes.

Beside the log (so a rebuild on another machine compares against them)::

    projections/<table>.parquet   each table, rows sorted by key, uncompressed, no dictionaries
    manifest.json                 per table: rows, content hash, Parquet sha256; the model ids; the log head
    manifest.rows.jsonl           per row: table, key, row hash and short column hashes
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from poimen.domain import canonical_json
from poimen.errors import PoimenError
from poimen.index import project
from poimen.index.schema import BuildContext
from poimen.index.schema import RowHash, content_hash, create_table_sql, row_hashes, to_table
from poimen.log.store import EventLog, file_sha256

MANIFEST = "manifest.json"
ROW_HASHES = "manifest.rows.jsonl"
PROJECTION_DIR = "projections"


def default_db(root: Path) -> Path:
    """Where the DuckDB projection lives by default: ``root / "index.duckdb"``."""
    return Path(root) / "index.duckdb"


@dataclass
class ProjectionStats:
    rows: dict[str, int]
    content_hash: dict[str, str]
    model_ids: dict
    parquet_sha256: dict[str, str] = field(default_factory=dict)
    row_hashes: dict[str, list[RowHash]] = field(default_factory=dict, repr=False)
    log_head: dict = field(default_factory=dict)


def log_head(log_root: Path) -> dict:
    """Which state of the log a build read: the number of sealed runs and the last index hash."""
    entries = EventLog(log_root).index()
    return {"sealed_runs": len(entries), "index_hash": entries[-1]["hash"] if entries else ""}


def connect(db_path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db_path), read_only=read_only)
    except duckdb.IOException as exc:
        raise PoimenError(f"{db_path}: cannot open the index ({str(exc).splitlines()[0]})") from None


def _write_parquet(table, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp, compression="NONE", use_dictionary=False, write_statistics=False)
    tmp.replace(path)


def build_projections(log_root: Path, db_path: Path, embedder, projections: Sequence = (),
                      out_dir: Path | None = None) -> ProjectionStats:
    """Drop every projection table and rebuild it from the sealed events of the log.

    Rows are sorted by each table's key; each table is also written as Parquet
    under ``out_dir`` (default ``log_root/projections``; a check passes a scratch
    folder so it never rewrites what it checks). Tables that are not projections are left alone.
    Only sealed runs are read: an unfinished run is invisible until it seals.
    """
    log_root, db_path = Path(log_root), Path(db_path)
    projections = list(projections or project.PROJECTIONS)  # read at call time: the list may have grown
    ctx = BuildContext.from_log(log_root, embedder)
    out_dir = Path(out_dir) if out_dir is not None else log_root / PROJECTION_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    stats = ProjectionStats({}, {}, {
        "embedder": embedder.model_id, "embedding_dim": ctx.dim,
        "llm": sorted({r.events[0].model_id for r in ctx.runs if r.is_loop_run and r.events[0].model_id}),
    }, log_head=log_head(log_root))
    con = connect(db_path)
    try:
        con.execute("BEGIN TRANSACTION")
        for p in reversed(projections):
            con.execute(f'DROP TABLE IF EXISTS "{p.name}"')
        for p in projections:
            schema = p.schema(ctx.dim)
            table = to_table(p.build(ctx), schema, p.key, p.name)
            ctx.built[p.name] = table
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
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.close()
    return stats


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
