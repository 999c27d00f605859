"""An L1 asset materialization killed mid-run (SIGKILL), then materialized again.

The log must verify after the kill, the second materialization must finish the
interrupted runs from their journals, and the sealed events must equal those
of a build that was never interrupted, byte for byte.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import dagster as dg
import pytest

from assets import chunks, l1_memories
from pipeline_helpers import gate, make_resources
from poimen.llm.client import ScriptedClient
from poimen.log.store import EventLog
from poimen.log.verify import verify
from resources import ScriptedLLMResource

pytestmark = pytest.mark.usefixtures("dagster_home")


def slow_gate(system: str, user: str) -> str:
    time.sleep(0.15)  # long enough that the kill lands between turns of a live run
    return gate(system, user)


def _materialize(tmp_path: Path, corpus, reply) -> bool:
    resources = make_resources(tmp_path, corpus)
    resources["llm"] = ScriptedLLMResource.of(ScriptedClient([reply], repeat_last=True))
    return dg.materialize([chunks, l1_memories], resources=resources).success


def _child(tmp_path: Path, corpus) -> None:
    _materialize(tmp_path, corpus, slow_gate)
    os._exit(0)


def journal_lines(root: Path) -> int:
    """Lines in the run journals now; a journal its run seals (and deletes) between the listing and the read counts 0."""
    total = 0
    for path in (root / "journal").glob("*.jsonl") if (root / "journal").exists() else []:
        try:
            total += path.read_bytes().count(b"\n")
        except FileNotFoundError:
            continue
    return total


def sealed(root: Path) -> dict[str, list[dict]]:
    log = EventLog(root)
    return {rid: [e.to_row() for e in log.run_events(rid)] for rid in log.sealed_run_ids()}


@pytest.mark.slow
def test_l1_materialization_killed_mid_run_then_rerun(tmp_path, corpus):
    clean = tmp_path / "clean"
    clean.mkdir()
    assert _materialize(clean, corpus, gate)

    crashed = tmp_path / "crashed"
    crashed.mkdir()
    child = mp.get_context("fork").Process(target=_child, args=(crashed, corpus))
    child.start()
    deadline = time.monotonic() + 120
    while journal_lines(crashed / "log") < 4 and child.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child.is_alive(), "the materialization finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert child.exitcode == -signal.SIGKILL

    report = verify(crashed / "log")
    assert report.ok, report.first
    assert report.resumable_runs >= 1  # the kill landed inside a run, not between runs

    assert _materialize(crashed, corpus, gate)
    assert verify(crashed / "log").ok
    assert not list((crashed / "log" / "journal").glob("*.jsonl"))
    assert sealed(crashed / "log") == sealed(clean / "log")
