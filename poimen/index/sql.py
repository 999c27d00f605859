"""Read-only ad hoc SQL over the projection: only queries run, on a read-only connection."""

from __future__ import annotations

from pathlib import Path

import duckdb

from poimen.errors import PoimenError
from poimen.index.read import connect_read_only

# COPY ... TO and EXPORT write files even on a read-only database; SET could lift limits.
ALLOWED = {"SELECT", "EXPLAIN", "PRAGMA"}


def run_sql(db_path: Path, query: str, allow_files: bool = False) -> list[tuple[list[str], list[tuple]]]:
    """Run each statement of ``query``; returns (column names, rows) per statement. Writes are refused.

    The index is all it reads: DuckDB's access to other files and URLs is off unless ``allow_files`` (a query
    could otherwise ``SELECT * FROM read_text('/any/path')`` on the machine it runs on)."""
    con = connect_read_only(Path(db_path), files=allow_files)
    try:
        try:
            statements = con.extract_statements(query)
        except duckdb.Error as exc:
            raise PoimenError(f"sql: {str(exc).splitlines()[0]}") from None
        if not statements:
            raise PoimenError("sql: no statement given")
        for s in statements:
            kind = s.type.name
            if kind not in ALLOWED:
                raise PoimenError(f"sql: {kind} statements are refused; `mem sql` is read-only (SELECT, EXPLAIN, PRAGMA)")
        results = []
        for s in statements:
            try:
                cur = con.execute(s.query)
                cols = [d[0] for d in cur.description] if cur.description else []
                results.append((cols, cur.fetchall() if cols else []))
            except duckdb.Error as exc:
                raise PoimenError(f"sql: {str(exc).splitlines()[0]}") from None
        return results
    finally:
        con.close()
