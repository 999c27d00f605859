"""Crash safety: ``mem run`` killed with SIGKILL mid-run leaves a log that verifies and resumes to the same bytes.

The model is a slow fake OpenAI server on loopback (through litellm, like a
real provider) that answers as the offline engine would, so a kill lands
mid-run at a seeded point: after the k-th model call, plus a seeded jitter.
After every kill, ``mem verify`` must pass; the next ``mem run --resume``
must finish; the finished log's events must equal, byte for byte, those of an
uninterrupted run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.testing.crash import kill_after_calls, run_mem, start_mem
from poimen.testing.openai_server import FakeOpenAI

from poimen.cli.app import app
from poimen.domain import canonical_json
from poimen.log.store import EventLog
from poimen.log.verify import verify

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MEM = Path(sys.executable).with_name("mem")
QUERIES = """queries:
  - id: root-causes
    text: "What caused each failure or outage, and how was it fixed?"
    store: semantic
  - id: remediation-steps
    text: "Which commands or config changes fixed or mitigated a problem?"
    store: procedural
"""
SEED = 20260
KILLS = 20


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Two example sources and two standing queries: ten turns of a real-looking on-call corpus."""
    d = tmp_path_factory.mktemp("corpus")
    sources = []
    for name in ("postmortem-upload-413.md", "incident-channel.jsonl"):
        shutil.copy(EXAMPLES / "sources" / name, d / name)
        sources.append(d / name)
    (d / "queries.yaml").write_text(QUERIES)
    return d / "queries.yaml", sources


SERVER_DELAY = 0.01  # a slow model, so a kill lands mid-run (the conftest ``server`` reads it)


def run_args(log: Path, server: FakeOpenAI, corpus, resume: bool = False) -> list[str]:
    queries, sources = corpus
    return ["run", "--log", str(log), "--model", "openai/fake-gate", "--api-base", server.api_base,
            "--queries", str(queries), "--chunk-tokens", "2000", "--concurrency", "2",
            *(["--resume"] if resume else []), *map(str, sources)]


def sealed_rows(root: Path) -> dict[str, list[str]]:
    """Every sealed run's events as canonical rows, by run id (sealing order varies with concurrency)."""
    log = EventLog(root)
    return {rid: [canonical_json(e.to_row()) for e in log.run_events(rid)] for rid in log.sealed_run_ids()}


def memory_rows(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    return {rid: [r for r in rs if '"kind":"memory"' in r or '"kind":"run_end"' in r] for rid, rs in rows.items()}


def cli_verify(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", "--log", str(root)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, _loopback, corpus) -> dict[str, list[str]]:
    log = tmp_path_factory.mktemp("baseline") / "log"
    code, out = run_mem(run_args(log, _loopback, corpus), log.parent / "mem.out")
    assert code == 0, out
    rows = sealed_rows(log)
    assert len(rows) == 4 + 2 and any(memory_rows(rows).values()), "the baseline must open some gates"  # + 2 L0 streams
    assert sum('"kind":"memory"' in r for rs in rows.values() for r in rs) >= 3
    return rows


def assert_same_as_baseline(root: Path, baseline: dict[str, list[str]]) -> None:
    code, out = cli_verify(root)
    assert code == 0, out
    assert not EventLog(root).journals(), "a finished log keeps no journal"
    rows = sealed_rows(root)
    assert memory_rows(rows) == memory_rows(baseline)
    assert rows == baseline  # stronger: every event of every run, hash chain included


def test_sigkill_once_then_resume(tmp_path, server, corpus, baseline):
    """Issue 2: the real console script, killed mid-run; verify passes; --resume finishes with the same memory."""
    log = tmp_path / "log"
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-loopback"}
    start = server.calls
    proc = subprocess.Popen([str(MEM), *run_args(log, server, corpus)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        while server.calls < start + 4 and proc.poll() is None:
            proc.wait(0.005) if False else __import__("time").sleep(0.005)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, stderr.decode()[-2000:]
    report = verify(log)
    assert report.ok, report.first
    assert report.resumable_runs >= 1 and report.sealed_runs < 4 + 2, "the kill must land mid-run"  # 2 L0 streams
    check = subprocess.run([str(MEM), "verify", "--log", str(log)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    code, out = run_mem(run_args(log, server, corpus, resume=True), tmp_path / "resume.out")
    assert code == 0, out
    assert_same_as_baseline(log, baseline)


def test_twenty_sigkills_at_seeded_points(tmp_path, server, corpus, baseline):
    """Issue 6: 20 kills at seeded random points, chained five to a log; every kill verifies; every chain resumes
    to the uninterrupted run's bytes."""
    rng = random.Random(SEED)
    per_run_calls = 10  # two queries × five chunks
    kills, chains, attempts = 0, 0, 0
    while kills < KILLS:
        chains += 1
        log = tmp_path / f"log{chains}"
        for i in range(5):
            attempts += 1
            assert attempts < KILLS * 4, "kills keep missing the run"
            proc = start_mem(run_args(log, server, corpus, resume=i > 0), tmp_path / f"c{chains}-{i}.out")
            landed = kill_after_calls(proc, server, rng.randint(0, per_run_calls - 1), jitter=0.03, rng=rng)
            if not landed:
                assert proc.process.exitcode == 0, proc.output()
                break
            kills += 1
            code, out = cli_verify(log)
            assert code == 0, f"after kill {kills}: {out}"
            if kills == KILLS:
                break
        code, out = run_mem(run_args(log, server, corpus, resume=True), tmp_path / f"c{chains}-final.out")
        assert code == 0, out
        assert_same_as_baseline(log, baseline)
    assert kills == KILLS


@pytest.mark.parametrize("kill_at", ["after_segment_rename", "after_index_line", "torn_journal_line"])
def test_killed_inside_the_write_path(tmp_path, server, corpus, baseline, kill_at):
    """Kills at exact points of the seal and the journal append: still verifiable, still resumable to the same bytes."""
    log = tmp_path / "log"
    code, out = run_mem(run_args(log, server, corpus), tmp_path / "killed.out", env={"POIMEN_TEST_KILL_AT": kill_at})
    assert code == -signal.SIGKILL, out
    report = verify(log)
    assert report.ok, report.first
    code, out = run_mem(run_args(log, server, corpus, resume=True), tmp_path / "resume.out")
    assert code == 0, out
    assert_same_as_baseline(log, baseline)
