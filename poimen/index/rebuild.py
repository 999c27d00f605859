"""Rebuild every projection from the log and check it against the hashes stored beside the log.

A difference is never silent drift: a changed embedder or model id, a changed
projection, or a log that grew since the manifest was written all show up as
rows that differ, each named by table and key, with the columns that changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from poimen.index.build import ProjectionStats, build_projections, log_head, read_manifest, write_manifest
from poimen.index.schema import RowHash

MAX_LISTED = 20  # differing rows printed per table; the report keeps them all


@dataclass
class RebuildReport:
    ok: bool
    tables: dict[str, tuple[str, str]]  # table -> (stored content hash, rebuilt content hash)
    differing_rows: list[tuple[str, str, str]]  # (table, key, what)
    notes: list[str] = field(default_factory=list)
    parquet: dict[str, tuple[str, str]] = field(default_factory=dict)  # table -> (stored sha256, rebuilt sha256)
    manifest_written: bool = False

    def __str__(self) -> str:
        lines = []
        for table, (stored, new) in self.tables.items():
            mark = "new " if not stored else "ok  " if stored == new else "DIFF"
            lines.append(f"{mark} {table:<18} stored {stored[:12] or '-':<12}  rebuilt {new[:12]}")
            ps, pn = self.parquet.get(table, ("", ""))
            if stored == new and ps and ps != pn:
                lines.append(f"DIFF {table:<18} same rows, but Parquet bytes differ ({ps[:12]} → {pn[:12]})")
        by_table: dict[str, list[tuple[str, str]]] = {}
        for table, key, what in self.differing_rows:
            by_table.setdefault(table, []).append((key, what))
        for table, rows in by_table.items():
            lines.append(f"{table}: {len(rows)} rows differ")
            lines.extend(f"  {key}: {what}" for key, what in rows[:MAX_LISTED])
            if len(rows) > MAX_LISTED:
                lines.append(f"  … and {len(rows) - MAX_LISTED} more")
        lines.extend(f"note: {n}" for n in self.notes)
        lines.append("rebuild matches the manifest" if self.ok else "rebuild DIFFERS from the manifest")
        return "\n".join(lines)


def compare_rows(table: str, stored: dict[str, RowHash], new: list[RowHash]) -> list[tuple[str, str, str]]:
    out = []
    seen = set()
    for h in new:
        seen.add(h.key)
        old = stored.get(h.key)
        if old is None:
            out.append((table, h.key, "new row (not in the manifest)"))
        elif old.hash != h.hash:
            cols = [c for c in h.columns if old.columns.get(c) != h.columns[c]]
            out.append((table, h.key, "changed: " + ", ".join(cols) if cols else "changed"))
    out.extend((table, key, "missing (in the manifest, not rebuilt)") for key in stored if key not in seen)
    return out


def rebuild(log_root: Path, db_path: Path, embedder, accept: bool = False) -> RebuildReport:
    """Drop every projection, rebuild it from the log, and compare table and row hashes with the manifest.

    With no manifest yet (a first build), or with ``accept``, the new hashes are
    written as the manifest; otherwise the manifest is left as it was, so a
    difference keeps being reported until someone accepts it.
    """
    log_root = Path(log_root)
    stored = read_manifest(log_root)
    stats = build_projections(log_root, db_path, embedder)
    if stored is None:
        write_manifest(log_root, stats)
        tables = {t: ("", h) for t, h in stats.content_hash.items()}
        return RebuildReport(True, tables, [], ["no manifest beside the log: this build was recorded as the first one"],
                             manifest_written=True)
    report = compare_with_manifest(stored, stats, log_head(log_root))
    if accept and not report.ok:
        write_manifest(log_root, stats)
        report.manifest_written = True
        report.notes.append("--accept: the manifest now records this build")
    return report


def rebuild_into(log_root: Path, scratch: Path, embedder, manifest_root: Path | None = None) -> RebuildReport:
    """Build every projection of the log at ``log_root`` into ``scratch`` (a DuckDB file and Parquet there) and
    compare with the manifest beside ``manifest_root`` (default: the same log). Writes nothing outside ``scratch``:
    the index, its Parquet copies and the manifest that are checked stay as they are."""
    log_root, scratch = Path(log_root), Path(scratch)
    stored = read_manifest(Path(manifest_root or log_root))
    if stored is None:
        return RebuildReport(False, {}, [], [f"no manifest beside {manifest_root or log_root}: build the index first"])
    stats = build_projections(log_root, scratch / "index.duckdb", embedder, out_dir=scratch / "projections")
    return compare_with_manifest(stored, stats, log_head(log_root))


def compare_with_manifest(stored: tuple[dict, dict[str, dict[str, RowHash]]], stats: ProjectionStats,
                          head: dict) -> RebuildReport:
    """Table hashes, Parquet shas and row hashes of a build against a stored manifest; rows that differ are named."""
    manifest, stored_rows = stored
    report = RebuildReport(True, {}, [])
    stored_tables = manifest.get("tables", {})
    for table in stats.rows:
        s = stored_tables.get(table, {})
        report.tables[table] = (s.get("content_hash", ""), stats.content_hash[table])
        report.parquet[table] = (s.get("parquet_sha256", ""), stats.parquet_sha256[table])
        if s.get("content_hash") != stats.content_hash[table]:
            report.differing_rows.extend(compare_rows(table, stored_rows.get(table, {}), stats.row_hashes[table]))
        if not s:
            report.notes.append(f"table {table} is not in the manifest")
    for table in stored_tables:
        if table not in stats.rows:
            report.notes.append(f"table {table} is in the manifest but no longer a projection")
    old_models, new_models = manifest.get("model_ids", {}), stats.model_ids
    for name in sorted(set(old_models) | set(new_models)):
        if old_models.get(name) != new_models.get(name):
            report.notes.append(f"{name}: manifest {old_models.get(name)!r}, now {new_models.get(name)!r}")
    old_head = manifest.get("log_head", {})
    if old_head and old_head != head:
        grown = head.get("sealed_runs", 0) - old_head.get("sealed_runs", 0)
        report.notes.append(f"the log changed since the manifest was written ({grown:+d} sealed runs); "
                            "rows from new runs show as new, not drift")
    report.ok = (not report.differing_rows and all(s == n for s, n in report.tables.values())
                 and all(s == n for s, n in report.parquet.values()) and set(stored_tables) == set(stats.rows))
    return report
