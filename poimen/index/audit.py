"""Does the index hold what the log gives, and does the log still hold every run that was recorded?

``poimen.log.verify`` checks the log's own chains; a chain checks only what is
still there, so a log cut after its last good run, or emptied, still chains.
What notices is a head recorded elsewhere: the manifest beside the log
(``manifest.json``: the head of the last audited build, and a hash per
projection row) and the ``index_head`` table inside ``index.duckdb`` (the head
the index reflects; ``mem run`` moves it on).

The log only grows, so each recorded head must be a prefix of the log: a head
past the log's end is a dropped tail (or an emptied log), a head that is not a
prefix is a rewritten log, and a head behind the log is runs sealed since —
not an error. The index's tables are then hashed row by row, exactly as a
build hashes them (``schema.row_hashes``), and compared with the build of the
log at the head the index records: the manifest's rows when that head is the
manifest's, else a build of the log up to that head in a scratch folder (the
manifest cannot vouch for rows of runs sealed after it, and a run sealed later
may change older rows).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from poimen.errors import PoimenError
from poimen.index import default_db, project
from poimen.index.build import MANIFEST, HEAD_TABLE, build_projections, connect, log_head, read_head, read_manifest, read_table
from poimen.index.schema import NEW_ROW, RowHash, compare_rows, row_hashes
from poimen.settings import local_folder
from poimen.log.store import EventLog

NAMED_RUNS = 5  # missing runs named in one line; the rest are counted
RowsByTable = dict[str, dict[str, RowHash]]


@dataclass
class IndexAudit:
    """One line per problem (each names the file, and the table, row and column or the runs) and per note."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _head(recorded: dict) -> dict:
    return {"sealed_runs": int(recorded.get("sealed_runs") or 0), "index_hash": recorded.get("index_hash") or ""}


def head_problem(name: str, recorded: dict, log_root: Path, entries: list[dict], known_runs: Callable[[], set[str]]) -> str | None:
    """Why the log is not ``recorded`` plus runs sealed after it, or None. ``known_runs``: the run ids the records
    know of, to name the runs a dropped tail took."""
    n, have = _head(recorded)["sealed_runs"], len(entries)
    if n > have:
        present = {e.get("run_id") for e in entries}
        gone = sorted(known_runs() - present)
        names = ", ".join(r[:16] for r in gone[:NAMED_RUNS]) + (f" and {len(gone) - NAMED_RUNS} more" if len(gone) > NAMED_RUNS else "")
        which = f"; missing runs include {names}" if gone else ""
        if not have:
            return f"the log is empty, but {name} records {n} sealed run{'s' if n != 1 else ''}{which}"
        where = f"log position {have} is" if n - have == 1 else f"log positions {have}–{n - 1} are"
        return f"the log ends after {have} sealed runs, but {name} records {n}: {where} missing (a dropped tail){which}"
    if log_head(log_root, n) != _head(recorded):
        return (f"the log's first {n} runs are not the ones {name} records (index hash "
                f"{_head(recorded)['index_hash'][:16]}): the log was rewritten")
    return None


def index_rows(db_path: Path, dim_hint: int = 0) -> tuple[dict[str, list[RowHash]], list[str]]:
    """Row hashes of every projection table in the index, and a problem line per table that is missing or whose
    columns are not the projection's."""
    rows: dict[str, list[RowHash]] = {}
    problems = []
    con = connect(db_path, read_only=True)
    try:
        try:  # the index's own dimension: a vector of another size is then a changed row, not an unreadable table
            vector = con.sql("SELECT vector FROM memory_vector LIMIT 0").to_arrow_table().schema.field("vector").type
            dim = vector.list_size if pa.types.is_fixed_size_list(vector) else dim_hint
        except duckdb.Error:  # no memory_vector table: named below with the other missing tables
            dim = dim_hint
        for p in project.PROJECTIONS:
            try:
                table = read_table(con, p.name, dim)
            except duckdb.CatalogException:
                problems.append(f"{db_path}: table {p.name} is missing")
                continue
            except (duckdb.Error, pa.ArrowException, ValueError) as exc:
                problems.append(f"{db_path}: table {p.name} does not have the projection's columns "
                                f"({str(exc).splitlines()[0][:120]})")
                continue
            rows[p.name] = row_hashes(table, p.key)
    finally:
        con.close()
    return rows, problems


def differences(db_path: Path, have: dict[str, list[RowHash]], want: RowsByTable, against: str) -> list[str]:
    """One line per row of the index that is not the row of ``want`` (``against`` says whose rows those are)."""
    out = []
    for table, rows in have.items():
        for _, key, what in compare_rows(table, want.get(table, {}), rows):
            if what == NEW_ROW:
                what = f"a row {against} does not have"
            elif what.startswith("missing"):
                what = f"missing (in {against})"
            elif what.startswith("changed: "):
                cols = what[len("changed: "):].split(", ")
                what = f"column{'s' if len(cols) > 1 else ''} {', '.join(cols)} differ{'s' if len(cols) == 1 else ''} from {against}"
            out.append(f"{db_path}: table {table}, row {key}: {what}")
    return out


def audit_index(log_root: Path | str, db_path: Path | None = None, embedder=None) -> IndexAudit:
    """Check the log's head against the heads the manifest and the index record, then the index's rows against
    the build at the head it records. ``embedder``: for the scratch build (default: the index's own)."""
    audit = IndexAudit()
    try:
        root = local_folder(log_root, "checking the index")
    except PoimenError as exc:
        audit.notes.append(f"index not checked: {exc}")
        return audit
    db_path = Path(db_path) if db_path else default_db(root)
    entries = EventLog(root).index()
    stored = read_manifest(root)
    head = read_head(db_path) if db_path.exists() else None
    manifest_head = _head(stored[0].get("log_head") or {}) if stored else None

    def known_runs() -> set[str]:
        ids = set(stored[1].get("run", {})) if stored else set()
        if db_path.exists():
            con = connect(db_path, read_only=True)
            try:
                ids |= {r[0] for r in con.execute("SELECT run_id FROM run").fetchall()}
            except duckdb.Error:
                pass  # no run table: the table check below names it
            finally:
                con.close()
        return ids

    for name, recorded in ((f"{root / MANIFEST}", manifest_head), (f"{db_path}'s {HEAD_TABLE}", head)):
        problem = head_problem(name, recorded, root, entries, known_runs) if recorded is not None else None
        if problem:
            audit.problems.append(problem)
    if stored is None:
        audit.notes.append(f"no {MANIFEST} beside the log: no audited build to check against "
                           "(`mem rebuild --from-log` records one)")
    elif manifest_head["sealed_runs"] < len(entries) and not audit.problems:
        grown = len(entries) - manifest_head["sealed_runs"]
        audit.notes.append(f"{grown} run{'s' if grown != 1 else ''} sealed since the manifest; "
                           "`mem rebuild --from-log` audits them and records them in it")
    if not db_path.exists():
        audit.notes.append(f"no index ({db_path}): only the log was checked")
        return audit
    if head is None:
        audit.problems.append(f"{db_path}: no {HEAD_TABLE} table, so it cannot say which log it reflects; "
                              "`mem rebuild --from-log` rebuilds it")
        return audit
    if audit.problems:
        return audit  # the tables of a log that lost runs are judged once the heads agree
    behind = len(entries) - _head(head)["sealed_runs"]
    if behind:
        audit.notes.append(f"the index is {behind} run{'s' if behind != 1 else ''} behind the log; the next "
                           "`mem run` or `mem rebuild --from-log` projects them")
    dim = int((stored[0].get("model_ids") or {}).get("embedding_dim") or 0) if stored else 0
    have, problems = index_rows(db_path, dim)
    audit.problems.extend(problems)
    if stored is not None and _head(head) == manifest_head:
        audit.problems.extend(differences(db_path, have, stored[1], "the manifest"))
        return audit
    audit.problems.extend(differences(db_path, have, scratch_rows(root, db_path, _head(head), embedder),
                                      f"the log's first {_head(head)['sealed_runs']} runs"))
    return audit


def scratch_rows(root: Path, db_path: Path, head: dict, embedder=None) -> RowsByTable:
    """Row hashes of the log's first ``head`` runs built in a scratch folder with the index's embedder."""
    from poimen.index.update import index_embedder

    embedder = embedder or index_embedder(root, db_path=db_path)
    with tempfile.TemporaryDirectory(prefix="poimen-audit-") as tmp:
        stats = build_projections(root, Path(tmp) / "index.duckdb", embedder, out_dir=Path(tmp) / "projections",
                                  upto=head["sealed_runs"])
    return {t: {h.key: h for h in hashes} for t, hashes in stats.row_hashes.items()}


def verify_all(log_root: Path | str, db_path: Path | None = None):
    """``mem verify``: the log's chains (``poimen.log.verify``), then, on a log that passes, its head and the index."""
    from poimen.log.verify import Problem, verify

    report = verify(log_root)
    if report.ok:
        audit = audit_index(log_root, db_path)
        report.problems.extend(Problem("", "", None, line) for line in audit.problems)
        report.notes.extend(audit.notes)
    return report
