"""Concurrency: one writer per log (a clear lock error), readers see only sealed data, one writer per journal."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.write.core import RunRequest, run_loops
from poimen.errors import LogLocked
from poimen.llm.client import Completion, ScriptedClient
from poimen.llm.offline import respond
from poimen.log.store import EventLog
from poimen.log.verify import verify

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "sources" / "postmortem-upload-413.md"
QUERY = "What caused the upload failure, and how was it fixed?"


def _hold_lock(root: str, ready, release) -> None:
    with EventLog(root).writer():
        ready.set()
        release.wait(30)


def test_second_writer_gets_a_clear_lock_error(tmp_path):
    """Another process holds the writer lock: the library raises LogLocked, the CLI prints one line and exits 1."""
    ctx = mp.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path / "log"), ready, release), daemon=True)
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(LogLocked) as info:
            with EventLog(tmp_path / "log").writer():
                pass
        assert str(holder.pid) in str(info.value) and "\n" not in str(info.value)
        result = CliRunner().invoke(app, ["run", "--log", str(tmp_path / "log"), "--query", QUERY, str(SOURCE)])
        assert result.exit_code == 1
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and "another writer holds the log lock" in lines[0], result.output
    finally:
        release.set()
        holder.join(10)
    with EventLog(tmp_path / "log").writer():  # released with the holder
        pass


class _GatedClient:
    """Answers like the offline engine, but each call waits until the test lets it through."""

    model_id = "scripted/gated"

    def __init__(self):
        self.entered = asyncio.Queue()
        self.go = asyncio.Queue()

    async def complete(self, system, user, max_tokens):
        await self.entered.put(1)
        await self.go.get()
        return Completion(respond(system, user), self.model_id)


def test_readers_during_a_write_see_only_sealed_data(tmp_path):
    """While a run is journaled turn by turn, EventLog.events() and the index show only what is sealed."""
    from poimen.domain import Level
    from poimen.write.loop import LoopConfig
    from poimen.inputs.queries import adhoc_query
    from poimen.write.runner import RunPlan, execute, source_stream

    root = tmp_path / "log"
    log = EventLog(root)
    sealed_first = ScriptedClient([respond], repeat_last=True, model_id="scripted/gated")
    other = tmp_path / "other.md"
    other.write_text("The upload failure was fixed by raising client_max_body_size to 64m.\n")
    with log.writer():
        asyncio.run(execute(log, [RunPlan(Level.L1, adhoc_query(QUERY), source_stream(other))], sealed_first))
    before = [e.hash for e in EventLog(root).events()]
    assert before

    async def scenario():
        client = _GatedClient()
        plan = RunPlan(Level.L1, adhoc_query(QUERY), source_stream(SOURCE, max_tokens=300))
        task = asyncio.ensure_future(execute(log, [plan], client, LoopConfig(), 1))
        seen_journal = 0
        for _ in range(len(plan.stream.chunk_shas)):
            await client.entered.get()
            reader = EventLog(root)
            # The run's own journal (the L0 stream record of its source is sealed beside it, by another thread).
            seen_journal = max(seen_journal, sum(1 for p in reader.journals() if p.stem == task_run_id(plan, client)))
            # Sealed before the loop starts: the first run and the L0 stream run recording its source.
            events = [e.hash for e in reader.events()]
            assert events[:len(before)] == before, "a journaled run leaked into events()"
            assert not reader.is_sealed(task_run_id(plan, client))
            assert task_run_id(plan, client) not in {e.run_id for e in reader.events()}, "the journaled run leaked"

            await client.go.put(1)
        outcomes = await task
        return outcomes, seen_journal

    def task_run_id(plan, client):
        from poimen.write.loop import run_id_for

        return run_id_for(plan.level, plan.query, plan.stream, LoopConfig(), client.model_id)

    with log.writer():
        outcomes, seen_journal = asyncio.run(scenario())
    assert seen_journal == 1 and outcomes[0].status == "sealed"
    after = EventLog(root)
    assert len(after.index()) == 2 + 2 and verify(root).ok  # two loop runs, two L0 stream runs


def test_identical_sources_never_share_a_journal(tmp_path):
    """Two files with the same content name the same run: it runs once, never with two writers on one journal.

    (Caught a bug: concurrent runs appended to one journal and the second unlinked it under the first.)
    """
    sources = []
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        shutil.copy(ROOT / "examples" / "sources" / "incident-channel.jsonl", tmp_path / name)
        sources.append(tmp_path / name)
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    for resume in (False, True):
        root = tmp_path / f"log-{resume}"
        req = RunRequest(root=root, sources=sources, query=QUERY, chunk_tokens=300, concurrency=4, resume=resume)
        result = run_loops(req, client=client)
        assert result.ok, [o.error for o in result.outcomes]
        assert sorted(o.status for o in result.outcomes) == ["sealed", "skipped", "skipped"]
        assert len({o.final_memory_sha for o in result.outcomes}) == 1
        report = verify(root)
        assert report.ok and report.sealed_runs == 1 + 3, report.first  # one loop run, three L0 stream runs
