"""`mem` for scripts: `--json` on log show, blocks, recall and symptoms show, and ids that stay whole at 80 columns.

At 80 columns rich used to cut every id in a table to ``HADOOP-1…`` / ``q-59c922…``; a table that does not fit now
prints as records. The width tests run ``mem`` in a subprocess with COLUMNS=80, as a terminal would set it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.log.runs import loop_runs, read_runs
from poimen.log.store import EventLog

REPO = Path(__file__).resolve().parents[2]
QUERY = "What caused the DataNode to stop accepting blocks, and how was it fixed?"
SOURCE = ("2026-03-02 11:04:17 ERROR DataNode: java.io.IOException: No space left on device\n"
          "Root cause: the balancer filled /data/3 on dn-17. Fixed by decommissioning the disk and rebalancing.\n")


def mem_cli(home: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(home), "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-m", "poimen.cli.entry", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=home.parent, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def invoke(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One L1 run over a source with a long name, made by `mem run` at 80 columns; (home, its stdout)."""
    base = tmp_path_factory.mktemp("scriptable")
    source = base / "HADOOP-12345-datanode-no-space-report.log"
    source.write_text(SOURCE)
    home = base / "home"
    proc = mem_cli(home, "run", "--query", QUERY, str(source))
    return home, proc.stdout


def test_tables_keep_whole_ids_at_80_columns(built):
    home, run_output = built
    (run,) = [r for r in loop_runs(read_runs(EventLog(home))) if r.level == "L1"]
    listing = mem_cli(home, "log", "show").stdout
    for output in (run_output, listing):
        assert "…" not in output
        for whole in (run.run_id[:12], run.query_id, "HADOOP-12345-datanode-no-space-report.log"):
            assert whole in output, f"{whole} is not whole in:\n{output}"
    wide = mem_cli(home, "log", "show", columns=200).stdout
    assert "┃ run" in wide and run.stream_id in wide  # a table still, where it fits


def test_log_show_json_lists_every_run_with_full_ids(built, monkeypatch):
    home, _ = built
    monkeypatch.setenv("POIMEN_HOME", str(home))
    runs = json_lines(invoke("log", "show", "--json"))
    assert {r["run_id"] for r in runs} == set(EventLog(home).sealed_run_ids())
    (l1,) = [r for r in runs if r["level"] == "L1"]
    assert l1["status"] == "sealed" and l1["query_id"].startswith("q-") and len(l1["run_id"]) == 64
    assert l1["stream_id"] == "HADOOP-12345-datanode-no-space-report.log" and l1["chunks_seen"] >= 1

    records = json_lines(invoke("log", "show", "--run", l1["run_id"][:8], "--json"))
    head, *turns, end = records
    assert head["record"] == "run" and head["run_id"] == l1["run_id"] and head["query_text"] == QUERY
    assert [t["record"] for t in turns] == ["turn"] * l1["chunks_seen"]
    assert [t["turn"] for t in turns] == list(range(1, l1["chunks_seen"] + 1))
    assert end["record"] == "run_end" and end["chunks_used"] == l1["chunks_used"]


def test_blocks_and_recall_json_stay_in_their_namespace(monkeypatch, tmp_path):
    monkeypatch.setenv("POIMEN_HOME", str(tmp_path / "home"))
    invoke("remember", "--ns", "dana", "Hi, I'm Dana and I prefer email contact.")
    invoke("remember", "--ns", "dana", "Yesterday the refund for ORD-3300 was issued.")
    blocks = {b["label"]: b for b in json_lines(invoke("blocks", "--ns", "dana", "--json"))}
    assert blocks["user_profile"]["text"] == "name: Dana; prefers email" and len(blocks["user_profile"]["sha"]) == 64
    assert blocks["user_profile"]["namespace"] == "dana" and blocks["task_state"]["version"] == 0
    (event,) = json_lines(invoke("recall", "--ns", "dana", "--json"))
    assert event["text"] == "Yesterday the refund for ORD-3300 was issued." and event["store"] == "episodic"
    assert json_lines(invoke("recall", "--ns", "eve", "--json")) == []
    assert all(b["text"] == "" for b in json_lines(invoke("blocks", "--ns", "eve", "--json")))


def test_symptoms_show_json_carries_the_projection(built, monkeypatch):
    home, _ = built
    monkeypatch.setenv("POIMEN_HOME", str(home))
    invoke("symptoms", "project")
    (l1,) = [r for r in loop_runs(read_runs(EventLog(home))) if r.level == "L1"]
    assert l1.final_memory_sha, "the offline gate kept nothing from the fixture"
    (shown,) = json_lines(invoke("symptoms", "show", l1.final_memory_sha[:8], "--json"))
    assert shown["memory_sha"] == l1.final_memory_sha and shown["level"] == "L1"
    assert shown["symptoms"] == shown["text"].splitlines() and "<symptoms>" in shown["reply"]  # empty is valid
    assert len(shown["prompt_sha"]) == 64 and shown["model_id"].startswith("poimen/extractive")


def test_a_second_mem_run_on_a_sealed_run_reports_it_done(built):
    """Issue 25, rough edge 11: the same `mem run` again is not 'unfinished … rerun with --resume'."""
    home, _ = built
    source = home.parent / "HADOOP-12345-datanode-no-space-report.log"
    again = mem_cli(home, "run", "--query", QUERY, str(source))  # exits 0 (mem_cli asserts it)
    assert "skipped" in again.stdout and "unfinished" not in again.stdout + again.stderr
    (run,) = [r for r in loop_runs(read_runs(EventLog(home))) if r.level == "L1"]  # nothing new was sealed
    assert run.run_id[:12] in again.stdout
