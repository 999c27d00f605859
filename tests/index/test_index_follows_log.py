"""The index follows the log: `mem run` projects what it sealed, `--no-index` leaves the index alone, and
`mem rebuild --from-log` tells rows of new runs (exit 0, manifest extended) from drift (exit 1, naming the row)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import pyarrow as pa

from poimen.cli.app import app
from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections, project, table_names
from poimen.index.schema import Projection, fixed

QUERY = "What failed, and how was it fixed?"
DISK = "2026-03-01T02:00:00Z ERROR disk full on node alpha-7\n2026-03-01T02:09:00Z rotated the logs on alpha-7, disk recovered\n"
CERT = "2026-03-02T10:00:00Z ERROR certificate expired on gateway beta-3\n2026-03-02T10:20:00Z renewed the certificate on beta-3\n"
QUEUE = "2026-03-03T08:00:00Z ERROR queue backlog on topic orders-9\n2026-03-03T08:30:00Z scaled consumers, backlog drained on orders-9\n"

runner = CliRunner()


def mem(*args: str, ok: bool = True):
    result = runner.invoke(app, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "sources"
    src.mkdir()
    (src / "disk.log").write_text(DISK)
    (src / "cert.log").write_text(CERT)
    return src, tmp_path / "log"


def run(log: Path, *sources: Path, extra: tuple[str, ...] = ()):
    return mem("run", "--log", log, "--query", QUERY, *extra, *sources)


def hits(log: Path, text: str) -> str:
    return mem("lookup", "--log", log, "--json", "-k", "3", text).output


def index_bytes(log: Path) -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in (log / "projections").glob("*.parquet")}
    files["index.duckdb"] = (log / "index.duckdb").read_bytes()
    return files


def assert_same_as_full_build(log: Path, tmp_path: Path) -> None:
    """Incremental gives the same bytes as a build from scratch: every Parquet file and every table's rows."""
    scratch = tmp_path / "scratch"
    build_projections(log, scratch / "index.duckdb", HashEmbedder(384), out_dir=scratch / "projections")
    for table in table_names():
        assert (log / "projections" / f"{table}.parquet").read_bytes() == \
            (scratch / "projections" / f"{table}.parquet").read_bytes(), table
    with duckdb.connect(str(log / "index.duckdb"), read_only=True) as a, \
            duckdb.connect(str(scratch / "index.duckdb"), read_only=True) as b:
        for table in table_names():
            sql = f'SELECT * FROM "{table}" ORDER BY ALL'
            assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table
        head = "SELECT * FROM index_head"
        assert a.execute(head).fetchall() == b.execute(head).fetchall()


def test_lookup_finds_a_new_source_right_after_run_with_no_rebuild(corpus, tmp_path):
    src, log = corpus
    run(log, src / "disk.log")
    assert "alpha-7" in hits(log, "disk full on node alpha-7")
    (src / "queue.log").write_text(QUEUE)
    result = run(log, src / "queue.log")
    assert "new run" in result.output and "tables updated" in result.output
    assert "orders-9" in hits(log, "queue backlog on topic orders-9")
    assert "alpha-7" in hits(log, "disk full on node alpha-7")  # the first source is still there
    assert_same_as_full_build(log, tmp_path)


def test_a_superseding_run_updates_old_rows_exactly_as_a_rebuild_would(corpus, tmp_path):
    src, log = corpus
    run(log, src / "disk.log", src / "cert.log")
    mem("rebuild", "--from-log", "--log", log)  # the manifest: the audited build
    (src / "disk.log").write_text(DISK + "2026-03-01T03:00:00Z ERROR disk full again on alpha-7, added a volume\n")
    run(log, src / "disk.log")  # a changed source: a new run of the same stream, the old one no longer current
    rows = mem("sql", "--log", log, "--csv", "SELECT stream_id, current FROM run WHERE level = 'L1' ORDER BY stream_id, log_position").output
    assert rows.splitlines()[1:] == ["cert.log,True", "disk.log,False", "disk.log,True"]
    assert_same_as_full_build(log, tmp_path)
    grown = mem("rebuild", "--from-log", "--log", log)
    assert "new rows from 2 new runs" in grown.output and "updated by them" in grown.output
    assert "rebuild matches the manifest" in mem("rebuild", "--from-log", "--log", log).output


def test_rebuild_after_new_data_exits_0_and_extends_the_manifest(corpus):
    src, log = corpus
    run(log, src / "disk.log")
    mem("rebuild", "--from-log", "--log", log)
    (src / "queue.log").write_text(QUEUE)
    run(log, src / "queue.log")
    grown = mem("rebuild", "--from-log", "--log", log)
    assert "new rows from 2 new runs; the manifest now records them" in grown.output
    head = json.loads((log / "manifest.json").read_text())["log_head"]
    assert head["sealed_runs"] == len((log / "index.jsonl").read_text().splitlines())
    assert "rebuild matches the manifest" in mem("rebuild", "--from-log", "--log", log).output


def flip_one_row(log: Path, table: str) -> str:
    """Change the stored hash of one row of ``table`` in the manifest; returns its key."""
    path = log / "manifest.rows.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    row = next(r for r in rows if r["table"] == table)
    row["hash"] = "0" * 64
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return row["key"]


@pytest.mark.parametrize("grown", [False, True], ids=["same-log", "with-new-runs"])
def test_a_flipped_projection_row_exits_1_naming_it(corpus, grown):
    src, log = corpus
    run(log, src / "disk.log", src / "cert.log")
    mem("rebuild", "--from-log", "--log", log)
    key = flip_one_row(log, "run")
    if grown:  # new runs do not hide drift in the rows the manifest already held
        (src / "queue.log").write_text(QUEUE)
        run(log, src / "queue.log")
    result = mem("rebuild", "--from-log", "--log", log, ok=False)
    assert result.exit_code == 1
    assert f"  {key}: changed" in result.output and "rebuild DIFFERS from the manifest" in result.output
    assert "--accept" in result.output
    named = [line for line in result.output.splitlines() if line.startswith("  ")]
    assert named == [f"  {key}: changed"]  # only the drifted row, never the rows of new runs
    assert json.loads((log / "manifest.json").read_text())["log_head"]["sealed_runs"] == 4  # not extended
    mem("rebuild", "--from-log", "--log", log, "--accept")
    assert mem("rebuild", "--from-log", "--log", log).exit_code == 0


def test_no_index_leaves_the_index_untouched(corpus):
    src, log = corpus
    run(log, src / "disk.log")
    before = index_bytes(log)
    (src / "queue.log").write_text(QUEUE)
    result = run(log, src / "queue.log", extra=("--no-index",))
    assert "index:" not in result.output
    assert index_bytes(log) == before
    assert "orders-9" not in hits(log, "queue backlog on topic orders-9")


def test_remember_updates_the_store_tables_of_an_existing_index(corpus, tmp_path):
    src, log = corpus
    mem("remember", "--log", log, "--ns", "dana", "Hi, I'm Dana and I prefer email contact.")
    assert not (log / "index.duckdb").exists()  # an agent's write alone builds no index
    run(log, src / "disk.log")
    result = mem("remember", "--log", log, "--ns", "dana", "Rule: always confirm refunds by email.")
    assert "1 new run projected, 2 tables updated" in result.output  # the store tables only
    count = ("SELECT (SELECT count(*) FROM store_block WHERE namespace = 'dana') "
             "+ (SELECT count(*) FROM store_item WHERE namespace = 'dana')")
    assert mem("sql", "--log", log, "--csv", count).output.splitlines()[1] == "2"  # both writes, no rebuild
    before = index_bytes(log)
    mem("remember", "--log", log, "--ns", "dana", "--no-index", "Hi again, I'm Dana.")
    assert index_bytes(log) == before
    mem("tool", "--log", log, "--ns", "dana", "memory_append", '{"block": "task_state", "text": "refund ORD-3300"}')
    assert_same_as_full_build(log, tmp_path)


def test_a_table_the_update_does_not_rebuild_is_read_back_from_the_index(corpus, tmp_path, monkeypatch):
    """A projection that reads a store table is rebuilt after a loop run, which leaves the store tables alone:
    it reads them from the index, and still gives what a full build gives."""
    def per_namespace(ctx):
        counts: dict[str, int] = {}
        for row in ctx.table("store_item").to_pylist() + ctx.table("store_block").to_pylist():
            counts[row["namespace"]] = counts.get(row["namespace"], 0) + 1
        return [{"namespace": ns, "rows": n} for ns, n in counts.items()]

    extra = Projection("store_rows", fixed(("namespace", pa.string()), ("rows", pa.int64())), ("namespace",),
                       per_namespace)
    monkeypatch.setattr(project, "PROJECTIONS", [*project.PROJECTIONS, extra])
    src, log = corpus
    mem("remember", "--log", log, "--ns", "dana", "Hi, I'm Dana and I prefer email contact.")
    run(log, src / "disk.log")
    (src / "queue.log").write_text(QUEUE)
    result = run(log, src / "queue.log")
    assert "2 new runs projected, 15 tables updated" in result.output  # 14 loop tables and store_rows
    assert mem("sql", "--log", log, "--csv", "SELECT rows FROM store_rows").output.splitlines()[1:] == ["1"]
    assert_same_as_full_build(log, tmp_path)
