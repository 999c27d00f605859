"""Rebuild every projection from the log and check it against the hashes stored beside the log.

A difference is never silent drift: a changed embedder or model id or a
changed projection shows up as rows that differ, each named by table and key,
with the columns that changed. A log that grew since the manifest is not
drift: when the log is the manifest's plus runs sealed since, and the log *as
the manifest saw it* (its first runs) still projects to exactly the manifest,
every difference comes from the new runs — new rows, and old rows those runs
changed (a superseded run is no longer ``current``) — and the manifest is
extended to this build. Only a row that differs in that earlier log is drift.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from poimen.index.audit import audit_index
from poimen.index.build import ProjectionStats, build_projections, extends, read_manifest, write_manifest
from poimen.index.schema import NEW_ROW, RowHash, compare_rows
from poimen.settings import local_folder

MAX_LISTED = 20  # differing rows printed per table; the report keeps them all


@dataclass
class RebuildReport:
    ok: bool
    tables: dict[str, tuple[str, str]]  # table -> (stored content hash, rebuilt content hash)
    differing_rows: list[tuple[str, str, str]]  # (table, key, what)
    notes: list[str] = field(default_factory=list)
    parquet: dict[str, tuple[str, str]] = field(default_factory=dict)  # table -> (stored sha256, rebuilt sha256)
    manifest_written: bool = False
    new_runs: int = 0  # runs sealed since the manifest whose rows explain every difference (the log grew)
    replaced: list[str] = field(default_factory=list)  # how the index this rebuild overwrote differed (audit lines)

    @property
    def new_rows(self) -> int:
        return sum(1 for _, _, what in self.differing_rows if what == NEW_ROW)

    @property
    def grew(self) -> bool:
        return self.ok and self.new_runs > 0

    def __str__(self) -> str:
        lines = []
        for table, (stored, new) in self.tables.items():
            mark = "new " if not stored else "ok  " if stored == new else "grew" if self.grew else "DIFF"
            lines.append(f"{mark} {table:<18} stored {stored[:12] or '-':<12}  rebuilt {new[:12]}")
            ps, pn = self.parquet.get(table, ("", ""))
            if stored == new and ps and ps != pn:
                lines.append(f"DIFF {table:<18} same rows, but Parquet bytes differ ({ps[:12]} → {pn[:12]})")
        by_table: dict[str, list[tuple[str, str]]] = {}
        for table, key, what in self.differing_rows:
            by_table.setdefault(table, []).append((key, what))
        for table, rows in by_table.items():
            if self.grew:  # the rows of new runs are not news one by one: count them
                added = sum(1 for _, what in rows if what == NEW_ROW)
                moved = f", {len(rows) - added} updated by them" if len(rows) > added else ""
                lines.append(f"{table}: {added} new from the new runs{moved}")
                continue
            lines.append(f"{table}: {len(rows)} rows differ")
            lines.extend(f"  {key}: {what}" for key, what in rows[:MAX_LISTED])
            if len(rows) > MAX_LISTED:
                lines.append(f"  … and {len(rows) - MAX_LISTED} more")
        lines.extend(f"note: {n}" for n in self.notes)
        if self.grew:
            updated = len(self.differing_rows) - self.new_rows
            lines.append(f"{self.new_rows} new rows from {self.new_runs} new run{'s' if self.new_runs != 1 else ''}"
                         + (f" ({updated} rows updated by them)" if updated else "")
                         + ("; the manifest now records them" if self.manifest_written else ""))
        else:
            lines.append("rebuild matches the manifest" if self.ok else "rebuild DIFFERS from the manifest")
        if self.replaced:
            lines.append(f"the index this rebuild replaced did not hold what the log gives ({len(self.replaced)} "
                         f"problem{'s' if len(self.replaced) != 1 else ''}, listed before the rebuild)")
        return "\n".join(lines)


def rebuild(log_root: Path, db_path: Path, embedder, accept: bool = False,
            on_drift: Callable[[list[str]], None] | None = None) -> RebuildReport:
    """Audit the index there is, drop every projection, rebuild it from the log, and compare table and row hashes
    with the manifest.

    The audit (``audit.audit_index``: the heads, then the index's rows) runs before anything is overwritten, and
    ``on_drift`` gets its problem lines then, so an edited index is reported rather than silently replaced.
    With no manifest yet (a first build), or with ``accept``, the new hashes are
    written as the manifest; otherwise the manifest is left as it was, so a
    difference keeps being reported until someone accepts it.
    """
    log_root = Path(log_root)
    stored = read_manifest(log_root)
    replaced = audit_index(log_root, db_path).problems if Path(db_path).exists() else []
    if replaced and on_drift is not None:
        on_drift(replaced)
    stats = build_projections(log_root, db_path, embedder)
    if stored is None:
        write_manifest(log_root, stats)
        tables = {t: ("", h) for t, h in stats.content_hash.items()}
        return RebuildReport(True, tables, [], ["no manifest beside the log: this build was recorded as the first one"],
                             manifest_written=True, replaced=replaced)
    report = growth_or_drift(compare_with_manifest(stored, stats), stored, stats, log_root, embedder)
    report.replaced = replaced
    if report.grew or (accept and not report.ok):
        write_manifest(log_root, stats)
        report.manifest_written = True
        if not report.grew:
            report.notes.append("--accept: the manifest now records this build")
    return report


def rebuild_into(log_root: Path | str, scratch: Path, embedder, manifest_root: Path | None = None) -> RebuildReport:
    """Build every projection of the log at ``log_root`` into ``scratch`` (a DuckDB file and Parquet there) and
    compare with the manifest beside ``manifest_root`` (default: the same log). Writes nothing outside ``scratch``:
    the index, its Parquet copies and the manifest that are checked stay as they are."""
    scratch = Path(scratch)
    stored = read_manifest(Path(manifest_root) if manifest_root else local_folder(log_root, "the manifest"))
    if stored is None:
        return RebuildReport(False, {}, [], [f"no manifest beside {manifest_root or log_root}: build the index first"])
    stats = build_projections(log_root, scratch / "index.duckdb", embedder, out_dir=scratch / "projections")
    return growth_or_drift(compare_with_manifest(stored, stats), stored, stats, log_root, embedder)


def growth_or_drift(report: RebuildReport, stored: tuple[dict, dict[str, dict[str, RowHash]]],
                    stats: ProjectionStats, log_root: Path | str, embedder) -> RebuildReport:
    """A failed comparison, told apart: rows of runs sealed since the manifest (ok, ``new_runs`` set) or drift.

    Drift is judged on the log the manifest recorded (its first ``sealed_runs`` runs), rebuilt in a scratch
    folder when a row the manifest knows changed or vanished; rows with new keys alone need no second build.
    """
    old = stored[0].get("log_head") or {}
    grown = stats.log_head["sealed_runs"] - int(old.get("sealed_runs", 0))
    if report.ok or not old or grown <= 0:
        return report
    if not extends(log_root, old):
        report.notes.append("the log is not the one the manifest recorded plus new runs: every difference is drift")
        return report
    known_rows_moved = any(what != NEW_ROW for _, _, what in report.differing_rows)
    tables_moved = any(not s for s, _ in report.tables.values()) or len(report.tables) != len(stored[0].get("tables", {}))
    bytes_moved = any(report.tables[t][0] == report.tables[t][1] and ps != pn for t, (ps, pn) in report.parquet.items())
    if known_rows_moved or tables_moved or bytes_moved:
        with tempfile.TemporaryDirectory(prefix="poimen-manifest-log-") as tmp:
            then = build_projections(log_root, Path(tmp) / "index.duckdb", embedder,
                                     out_dir=Path(tmp) / "projections", upto=int(old["sealed_runs"]))
        drift = compare_with_manifest(stored, then)
        if not drift.ok:
            drift.notes.append(f"the first {old['sealed_runs']} runs (the log the manifest recorded) no longer give "
                               f"the manifest: the rows above drifted; the {grown} runs sealed since were not judged")
            return drift
    report.ok, report.new_runs = True, grown
    return report


def compare_with_manifest(stored: tuple[dict, dict[str, dict[str, RowHash]]], stats: ProjectionStats) -> RebuildReport:
    """Table hashes, Parquet shas and row hashes of a build against a stored manifest; rows that differ are named."""
    manifest, stored_rows = stored
    report = RebuildReport(True, {}, [])
    stored_tables = manifest.get("tables", {})
    for table in stats.rows:
        s = stored_tables.get(table, {})
        report.tables[table] = (s.get("content_hash", ""), stats.content_hash[table])
        report.parquet[table] = (s.get("parquet_sha256", ""), stats.parquet_sha256[table])
        if s.get("content_hash") != stats.content_hash[table] or table in stored_rows:
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
    report.ok = (not report.differing_rows and all(s == n for s, n in report.tables.values())
                 and all(s == n for s, n in report.parquet.values()) and set(stored_tables) == set(stats.rows))
    return report
