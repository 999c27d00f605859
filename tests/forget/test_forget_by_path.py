"""`mem forget --source PATH` takes the runs that read that file, never every file of its name (issue 25).

`mem run a/chan.txt` and `mem run b/chan.txt`, run one at a time, both name their stream `chan.txt` (a file is its
own folder's only source); forgetting b must leave a's runs, memories, signatures and lookups byte-identical."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.log.runs import read_runs
from poimen.log.store import EventLog
from poimen.log.verify import verify

A_TEXT = ("09:14 checkout-api ERROR upstream timed out after 30s talking to payments-db\n"
          "09:20 raised payments-db max_connections from 100 to 400; errors stopped\n")
B_TEXT = ("11:02 upload-svc ERROR HTTP/1.1 413 Request Entity Too Large on POST /v1/files\n"
          "11:09 set client_max_body_size 64m on the ingress; uploads succeed again\n")
QUERY = "What failed and how was it fixed?"


@pytest.fixture
def two_chans(tmp_path, monkeypatch):
    monkeypatch.setenv("POIMEN_EMBEDDER", "hash")
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    for folder, text in (("a", A_TEXT), ("b", B_TEXT)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "chan.txt").write_text(text)
    log = tmp_path / "log"
    runner = CliRunner()
    for folder in ("a", "b"):
        res = runner.invoke(app, ["run", "--log", str(log), "--query", QUERY, str(tmp_path / folder / "chan.txt")])
        assert res.exit_code == 0, res.output
    return tmp_path, log, runner


def _runs_of(log: Path, words: str) -> dict[str, list]:
    """Every sealed run whose events hold ``words``, with its events' (kind, sha, text, hash)."""
    elog = EventLog(log)
    out = {}
    for entry in elog.index():
        events = elog.run_events(entry["run_id"])
        if any(words in (e.text or "") for e in events):
            out[entry["run_id"]] = [(e.kind, e.sha, e.text, e.hash) for e in events]
    return out


def _rows(log: Path, words: str) -> tuple[list, set]:
    """The memories that hold ``words``, and the failure signatures that point at them."""
    con = duckdb.connect(str(log / "index.duckdb"), read_only=True)
    try:
        mem = con.execute("SELECT sha, text FROM memory WHERE text LIKE ? ORDER BY sha", [f"%{words}%"]).fetchall()
        sig = con.execute("SELECT f.key, f.memory_sha FROM failure_signature f ORDER BY 1, 2").fetchall()
    finally:
        con.close()
    return mem, {s for s in sig if s[1] in {m[0] for m in mem}}


@pytest.mark.parametrize("spelling", ["relative", "absolute"])
def test_forgetting_b_leaves_a_same_named_file_byte_identical(two_chans, spelling, monkeypatch):
    tmp, log, runner = two_chans
    a_before, a_rows = _runs_of(log, "payments-db"), _rows(log, "payments-db")
    assert a_before and a_rows[0] and _runs_of(log, "client_max_body_size")  # both files were read: the test can fail
    monkeypatch.chdir(tmp)
    target = "b/chan.txt" if spelling == "relative" else str(tmp / "b" / "chan.txt")
    res = runner.invoke(app, ["forget", "--log", str(log), "--source", target, "--reason", "test"])
    assert res.exit_code == 0, res.output
    assert _runs_of(log, "payments-db") == a_before
    mem, sigs = _rows(log, "payments-db")
    # Memories are a's own. Log templates are mined over every source, so with b gone a's error line may gain a
    # more specific template key; none of the keys it had is lost.
    assert mem == a_rows[0] and sigs >= a_rows[1]
    assert not _runs_of(log, "client_max_body_size")
    assert verify(log).ok
    # a's memory is still found (with b's run of the same stream name gone, a's is the stream's current run again)
    after = runner.invoke(app, ["lookup", "--log", str(log), "-k", "1", "upstream timed out payments-db"]).output
    assert "payments-db" in after and "client_max_body_size" not in after


def test_a_dry_run_lists_what_would_go_and_changes_nothing(two_chans, monkeypatch):
    tmp, log, runner = two_chans
    before = {p: p.read_bytes() for p in sorted(log.rglob("*")) if p.is_file()}
    monkeypatch.chdir(tmp)
    res = runner.invoke(app, ["forget", "--log", str(log), "--source", "b/chan.txt", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "dry run, nothing changed" in res.output and "retire" in res.output
    assert {p: p.read_bytes() for p in sorted(log.rglob("*")) if p.is_file()} == before


def test_a_nested_root_names_the_stream_by_its_path(tmp_path, monkeypatch):
    """Files of two folders run together are named by their paths (a/…, b/…): each forget takes only its own."""
    monkeypatch.setenv("POIMEN_EMBEDDER", "hash")
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    for folder, text in (("a/x", A_TEXT), ("b", B_TEXT)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "chan.txt").write_text(text)
    log, runner = tmp_path / "log", CliRunner()
    res = runner.invoke(app, ["run", "--log", str(log), "--query", QUERY, str(tmp_path / "a/x/chan.txt"),
                              str(tmp_path / "b/chan.txt")])
    assert res.exit_code == 0, res.output
    a_before = _runs_of(log, "payments-db")
    res = runner.invoke(app, ["forget", "--log", str(log), "--source", str(tmp_path / "b/chan.txt")])
    assert res.exit_code == 0, res.output
    assert _runs_of(log, "payments-db") == a_before and not _runs_of(log, "client_max_body_size")
