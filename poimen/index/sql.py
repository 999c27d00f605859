"""Read-only ad hoc SQL over the projection: only queries run, on a read-only connection, within bounds.

A query gets ``memory_limit`` of memory (DuckDB's own accounting; spilling to disk is off, so the bound holds)
and ``timeout`` seconds in all: a timer thread interrupts the connection when they run out. Either ends the
command with one line naming the option that bounds it. The limits are set before the first statement and the
configuration is then locked, so no ``SET`` or ``PRAGMA`` in the query could lift them (``SET`` is refused anyway).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from poimen.errors import PoimenError

# COPY ... TO and EXPORT write files even on a read-only database; SET could lift limits.
ALLOWED = {"SELECT", "EXPLAIN", "PRAGMA"}
DEFAULT_MEMORY_LIMIT = "256MB"
DEFAULT_TIMEOUT = 30.0
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)


def check_memory_limit(value: str) -> str:
    """``value`` as DuckDB spells it (``256MB``, ``1.5GiB``); anything else (DuckDB reads ``-5MB`` as no limit at
    all) raises, naming the option."""
    m = _MEMORY.match(value)
    if not m or float(m.group(1)) <= 0:
        raise PoimenError(f"--memory-limit {value!r}: expected a positive size such as 256MB, 2GB or 512MiB")
    unit = m.group(2)
    return f"{m.group(1)}{unit.upper() if unit[1:].upper() == 'B' else unit[0].upper() + 'iB'}"


def run_sql(db_path: Path, query: str, allow_files: bool = False, memory_limit: str = DEFAULT_MEMORY_LIMIT,
            timeout: float = DEFAULT_TIMEOUT) -> list[tuple[list[str], list[tuple]]]:
    """Run each statement of ``query``; returns (column names, rows) per statement. Writes are refused.

    The index is all it reads: DuckDB's access to other files and URLs is off unless ``allow_files`` (a query
    could otherwise ``SELECT * FROM read_text('/any/path')`` on the machine it runs on)."""
    import duckdb  # here, not at the top: the CLI reads this module's defaults for its options at every start

    from poimen.index.read import connect_read_only

    limit = check_memory_limit(memory_limit)
    if not timeout > 0:
        raise PoimenError(f"--timeout {timeout!r}: expected a number of seconds above 0")
    # No spilling: DuckDB would otherwise go past the limit into temp files beside the index.
    con = connect_read_only(Path(db_path), files=allow_files, config={"max_temp_directory_size": "0KB"})
    guard = threading.Lock()
    expired = threading.Event()

    def interrupt() -> None:
        with guard:  # never on a connection being closed: the finally below takes the same lock first
            if con is not None:
                expired.set()
                con.interrupt()

    timer = threading.Timer(timeout, interrupt)
    timer.daemon = True
    try:
        try:
            con.execute(f"SET memory_limit = '{limit}'")  # checked above: digits and a unit only
            # DuckDB draws a progress bar on stdout for a query over 2 s, into the table or CSV printed there.
            con.execute("SET enable_progress_bar = false")
            con.execute("SET lock_configuration = true")
        except duckdb.Error as exc:
            raise PoimenError(f"--memory-limit {memory_limit!r}: {str(exc).splitlines()[0]}") from None
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
        timer.start()
        stopped = PoimenError(f"sql: stopped after --timeout {timeout:g} s; narrow the query or raise --timeout")
        for s in statements:
            if expired.is_set():  # the interrupt fell between two statements: the next must not run unbounded
                raise stopped
            try:
                cur = con.execute(s.query)
                cols = [d[0] for d in cur.description] if cur.description else []
                results.append((cols, cur.fetchall() if cols else []))
            except duckdb.InterruptException:
                raise stopped from None
            except duckdb.OutOfMemoryException:
                raise PoimenError(f"sql: the query needs more than --memory-limit {limit}; narrow it or raise "
                                  "--memory-limit") from None
            except duckdb.Error as exc:
                raise PoimenError(f"sql: {str(exc).splitlines()[0]}") from None
        return results
    finally:
        timer.cancel()
        with guard:
            con.close()
            con = None
