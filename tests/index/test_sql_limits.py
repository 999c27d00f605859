"""``mem sql`` runs within a memory limit and a timeout: a query past either stops with one line naming the
option, the same query runs when the bound allows it, and no statement in the query can lift the bounds."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.errors import PoimenError
from poimen.index.sql import check_memory_limit, run_sql

# ~100 MB of hash table: past 32MB, well within 1GB.
HUNGRY = "SELECT count(DISTINCT range::VARCHAR || 'x') AS n FROM range(3000000)"
# 10^12 rows: hours unbounded, so only the timer can end it in the time the test allows.
ENDLESS = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b"


def sql(*args: str):
    return CliRunner().invoke(app, ["sql", *args])


def test_a_query_past_the_memory_limit_stops_with_one_line(db):
    res = sql("--db", str(db), "--memory-limit", "32MB", HUNGRY)
    assert res.exit_code == 1 and res.output.strip().count("\n") == 0, res.output
    assert "--memory-limit 32MB" in res.output and "Traceback" not in res.output
    res = sql("--db", str(db), "--memory-limit", "1GB", "--csv", HUNGRY)  # the same query, allowed the memory
    assert res.exit_code == 0 and res.output.splitlines() == ["n", "3000000"], res.output


def test_a_long_query_is_interrupted_at_the_timeout(db):
    start = time.monotonic()
    res = sql("--db", str(db), "--timeout", "0.5", ENDLESS)
    took = time.monotonic() - start
    assert res.exit_code == 1 and res.output.strip().count("\n") == 0, res.output
    assert "stopped after --timeout 0.5 s" in res.output
    assert took < 60, took  # a failure bound on a loaded machine; unbounded, the query runs for hours


def test_the_default_bounds_apply_and_the_query_cannot_lift_them(db):
    [(cols, rows)] = run_sql(db, "SELECT current_setting('memory_limit'), current_setting('max_temp_directory_size'), "
                                 "current_setting('enable_progress_bar')")
    # 256MB, no spilling past it into files beside the index, and no progress bar drawn into the printed rows
    assert rows == [("244.1 MiB", "0 bytes", False)]
    for stmt in ("PRAGMA memory_limit='64GB'", "SET memory_limit='64GB'", "RESET memory_limit",
                 "SET lock_configuration = false", "PRAGMA threads=1"):
        with pytest.raises(PoimenError, match="refused"):
            run_sql(db, stmt)
    with pytest.raises(PoimenError, match="--memory-limit"):
        run_sql(db, f"SELECT 1; {HUNGRY}", memory_limit="32MB")


@pytest.mark.parametrize("bad", ["-5MB", "0MB", "lots", "5", "1e9B", ""])
def test_a_bad_memory_limit_is_one_line_naming_it(db, bad):
    with pytest.raises(PoimenError, match="--memory-limit"):
        check_memory_limit(bad)  # DuckDB itself would read "-5MB" as no limit at all
    res = sql("--db", str(db), "--memory-limit", bad, "SELECT 1")
    assert res.exit_code == 1 and "--memory-limit" in res.output and res.output.strip().count("\n") == 0


def test_sizes_are_spelled_as_duckdb_reads_them():
    assert [check_memory_limit(v) for v in ("256mb", "1.5GB", "512mib", " 2 GiB ")] == \
        ["256MB", "1.5GB", "512MiB", "2GiB"]
