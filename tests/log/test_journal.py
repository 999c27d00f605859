"""A run's journal holds its turns, one whole write per turn; the run's opening rides with its first turn, and its last
turn and its closing go into the segment only. A writer killed while sealing leaves a journal that resumes to the same
bytes, asking the model only for the turn the journal lacks."""

from __future__ import annotations

import asyncio

import pytest

from helpers import QUERY, chunks, reply

from poimen.llm.client import ScriptedClient
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.domain import Stream
from poimen.write.loop import LoopConfig, run_id_for, run_loop
from poimen.forget.rematerialize import as_draft

SCRIPT = [reply("no"), reply("yes", "The ingress chart set client_max_body_size to 1m."), reply("no"), reply("no")]


def _loop(log: EventLog, stream: Stream, script: list[str] = SCRIPT):
    client = ScriptedClient(list(script))
    with log.writer():
        journal = log.open_run(run_id_for("L1", QUERY, stream, LoopConfig(), client.model_id))
        try:
            return asyncio.run(run_loop("L1", QUERY, stream, client, journal))
        finally:
            journal.close()


def _segment(log: EventLog, run_id: str) -> bytes:
    return log.store.read(f"segments/{run_id}.parquet")


@pytest.fixture
def stream() -> Stream:
    return Stream.of("a.log", chunks(4, source="a.log"))


def test_a_runs_journal_is_one_write_per_turn_but_the_last_with_run_start_in_the_first(tmp_path, stream, monkeypatch):
    log = EventLog(tmp_path / "log")
    lines: list[bytes] = []
    original = log.store.journal_append
    monkeypatch.setattr(log.store, "journal_append", lambda rid, n, line: (lines.append(line), original(rid, n, line)))
    outcome = _loop(log, stream)
    assert len(lines) == 3  # turns 1-3; no write for run_start alone, none for the last turn or run_end
    assert lines[0].startswith(b'[{"seq":0') and b'"kind":"run_start"' in lines[0] and b'"kind":"gate"' in lines[0]
    assert not any(b'"kind":"run_end"' in line or b'"turn":4' in line for line in lines)
    events = log.run_events(outcome.run_id)
    assert [e.kind for e in events][0] == "run_start" and events[-1].kind == "run_end"
    assert [e.turn for e in events if e.kind == "gate"] == [1, 2, 3, 4]


def test_an_exit_gate_turn_is_the_last_and_goes_into_the_segment_only(tmp_path, monkeypatch):
    """A turn whose exit the loop acts on ends the run early: it is the last turn, sealed without a journal write."""
    from dataclasses import replace

    stream = Stream.of("b.log", chunks(4, source="b.log"))
    log = EventLog(tmp_path / "log")
    lines: list[bytes] = []
    original = log.store.journal_append
    monkeypatch.setattr(log.store, "journal_append", lambda rid, n, line: (lines.append(line), original(rid, n, line)))
    client = ScriptedClient([reply("no"), reply("yes", "The quota was raised to 200.", nxt="end")])
    query = replace(QUERY, use_exit_gate=True)
    with log.writer():
        journal = log.open_run(run_id_for("L1", query, stream, LoopConfig(), client.model_id))
        outcome = asyncio.run(run_loop("L1", query, stream, client, journal))
    assert outcome.chunks_seen == 2 and len(lines) == 1 and b'"turn":2' not in lines[0]
    assert [e.turn for e in log.run_events(outcome.run_id) if e.kind == "gate"] == [1, 2]


def test_killed_while_sealing_the_journal_resumes_to_the_same_segment(tmp_path, stream, monkeypatch):
    whole = EventLog(tmp_path / "whole")
    run_id = _loop(whole, stream).run_id
    log = EventLog(tmp_path / "log")

    def die(self, rid, events, **how):
        raise SystemExit("killed between the last turn and the seal")

    with monkeypatch.context() as m:
        m.setattr(EventLog, "_seal", die)
        with pytest.raises(SystemExit):
            _loop(log, stream)
    left = log.journal_events(run_id)
    assert [e.turn for e in left if e.kind == "gate"] == [1, 2, 3] and left[-1].kind != "run_end"
    assert verify(log.root).ok and not log.is_sealed(run_id)
    # The resume replays turns 1-3, asks the model for turn 4 alone (its client has that one reply), derives
    # run_end and seals.
    _loop(log, stream, SCRIPT[3:])
    assert _segment(log, run_id) == _segment(whole, run_id)
    assert not log.journal_events(run_id) and verify(log.root).ok


def test_a_journal_that_already_holds_run_end_is_sealed_once(tmp_path, stream):
    """Writers before this one journaled run_end before sealing; a journal they left that way still finishes."""
    whole = EventLog(tmp_path / "whole")
    run_id = _loop(whole, stream).run_id
    events = whole.run_events(run_id)
    log = EventLog(tmp_path / "log")
    with log.writer():
        journal = log.open_run(run_id)
        journal.append([as_draft(e) for e in events])
        journal.close()
    _loop(log, stream)
    assert _segment(log, run_id) == _segment(whole, run_id)
    assert [e.kind for e in log.run_events(run_id)].count("run_end") == 1


def test_a_local_segment_reaches_the_disk_before_its_name(tmp_path, monkeypatch):
    """put_if_absent fsyncs the temp file's bytes before linking the segment's name: after a power cut an index
    line (fsynced next) must never name a segment whose bytes were lost."""
    import os

    from poimen.log.storage.local import LocalStore

    calls: list[str] = []
    real_fsync, real_link = os.fsync, os.link
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync " + os.readlink(f"/proc/self/fd/{fd}")),
                                                  real_fsync(fd))[1])
    monkeypatch.setattr(os, "link", lambda a, b: (calls.append(f"link {b}"), real_link(a, b))[1])
    assert LocalStore(tmp_path).put_if_absent("segments/r.parquet", b"bytes")
    link = next(i for i, c in enumerate(calls) if c.startswith("link"))
    assert any(c.endswith(".r.parquet.%d.tmp" % os.getpid()) for c in calls[:link]), calls
