"""The gated loop card's ten acceptance tests (GRU-Mem Algorithm 1), on a scripted client.

Each asserts bytes, not counts: a loop that updates on ``no`` but counts right
must fail here.
"""

from __future__ import annotations

import asyncio
import dataclasses

from helpers import QUERY, chunks, reply, stream

from poimen.domain import Level, sha256_text, Stream
from poimen.llm.client import ScriptedClient
from poimen.write.loop import ListSink, LoopConfig, run_loop

INITIAL = "Memory before this run: the outage began at 09:14."


def seeded_stream(n: int) -> Stream:
    """A stream whose first chunk sets a known memory, so 'retain' has bytes to keep."""
    return stream(n + 1)


def run(script, n=10, level=Level.L1, cfg=LoopConfig(), s=None):
    client = ScriptedClient(script)
    sink = ListSink()
    outcome = asyncio.run(run_loop(level, QUERY, s or stream(n), client, sink, cfg))
    return outcome, sink.events, client


def kinds(events, kind):
    return [e for e in events if e.kind == kind]


def test_a1_retain_on_no():
    # Turn 1 writes INITIAL; five "no" turns follow, each proposing other text that must be ignored.
    script = [reply("yes", INITIAL)] + [reply("no", f"IGNORED candidate {i}") for i in range(5)]
    outcome, events, _ = run(script, n=6)
    gates = kinds(events, "gate")
    assert [g.update for g in gates] == [True, False, False, False, False, False]
    assert outcome.final_memory.encode() == INITIAL.encode()
    assert outcome.final_memory_sha == sha256_text(INITIAL)
    assert len(kinds(events, "memory")) == 1
    assert outcome.chunks_used == 1  # the seeding turn only: the five "no" turns used nothing
    assert all("IGNORED" not in e.text for e in kinds(events, "memory"))


def test_a1_retain_on_no_from_empty():
    outcome, events, _ = run([reply("no")] * 5, n=5)
    assert outcome.final_memory == "" and outcome.chunks_used == 0
    assert kinds(events, "memory") == [] and kinds(events, "evidence") == []


def test_a2_update_on_yes():
    script = [reply("no"), reply("no"), reply("yes", "candidate from turn 3"), reply("no", "not this"), reply("no")]
    outcome, events, _ = run(script, n=5)
    assert outcome.final_memory.encode() == b"candidate from turn 3"
    assert outcome.chunks_used == 1
    (memory,) = kinds(events, "memory")
    assert memory.turn == 3 and memory.text == "candidate from turn 3"


def test_a3_exit_gate_off_reads_all():
    outcome, events, client = run([reply("no", nxt="end")] * 10, n=10)
    assert outcome.chunks_seen == 10 and client.calls == 10
    assert [g.turn for g in kinds(events, "gate")] == list(range(1, 11))


def test_a4_exit_gate_on_stops():
    outcome, events, client = run([reply("no", nxt="end")] * 10, n=10, cfg=LoopConfig(use_exit_gate=True))
    assert outcome.chunks_seen == 1 and client.calls == 1
    assert len(kinds(events, "gate")) == 1
    assert kinds(events, "run_end")[0].attributes["stopped_by_exit"] is True


def test_a5_exit_always_recorded():
    _, events, _ = run([reply("no", nxt="end")] * 10, n=10)
    gates = kinds(events, "gate")
    assert len(gates) == 10 and all(g.exit is True for g in gates)
    assert not any(g.attributes["acted_on_exit"] for g in gates)


def test_a6_budget_exceeded_retains():
    huge = " ".join(["incident"] * 4000)
    script = [reply("yes", INITIAL), reply("yes", huge), reply("no")]
    outcome, events, _ = run(script, n=3)
    assert outcome.final_memory.encode() == INITIAL.encode()
    (over,) = kinds(events, "budget_exceeded")
    assert over.turn == 2 and over.attributes["candidate_tokens"] >= 4000
    assert kinds(events, "gate")[1].update is False
    assert outcome.chunks_used == 1
    # never truncated: no memory event holds a prefix of the oversized candidate
    assert all(not e.text.startswith("incident incident") for e in kinds(events, "memory"))


def test_a7_parse_retry():
    script = ["garbage", "<check>maybe</check>", reply("yes", "third time parses")]
    outcome, events, client = run(script, n=1)
    assert client.calls == 3
    assert len(kinds(events, "memory")) == 1 and outcome.final_memory == "third time parses"
    gate = kinds(events, "gate")[0]
    assert gate.attributes["attempts"] == 3 and gate.attributes["replies"] == script[:2]
    assert kinds(events, "parse_failed") == []


def test_a8_parse_failure_is_not_an_update():
    script = [reply("yes", INITIAL), "bad", "worse", "<check>yes</check>", reply("no"), reply("yes", "after")]
    outcome, events, client = run(script, n=4)
    assert client.calls == 6
    (failed,) = kinds(events, "parse_failed")
    assert failed.turn == 2 and failed.update is False and failed.exit is None
    assert failed.attributes["replies"] == ["bad", "worse", "<check>yes</check>"]
    assert [g.turn for g in kinds(events, "gate")] == [1, 3, 4]  # the loop went on
    assert outcome.final_memory == "after" and outcome.chunks_used == 2


def test_a9_parents_linked():
    script = [reply("yes", "m1"), reply("no"), reply("yes", "m1 m3"), reply("yes", "m1 m3 m4")]
    _, events, _ = run(script, n=4)
    evidence_by_turn = {e.turn: e for e in kinds(events, "evidence")}
    memories = kinds(events, "memory")
    assert len(memories) == 3
    previous = None
    for m in memories:
        ev = evidence_by_turn[m.turn]
        assert ev.sha == sha256_text(ev.text) and ev.sha in m.parents
        assert m.parents == ((ev.sha, previous) if previous else (ev.sha,))
        previous = m.sha
    assert [e.sha for e in kinds(events, "evidence")] == [c.sha for c in chunks(4) if c.position in (0, 2, 3)]


def test_a10_level_is_a_parameter():
    script = [reply("yes", "m1"), "bad", "bad", "bad", reply("no", nxt="end"), reply("yes", " ".join(["x"] * 3000)),
              reply("yes", "m1 m5")]
    _, l1, _ = run(list(script), n=5, level=Level.L1)
    _, l2, _ = run(list(script), n=5, level=Level.L2)
    assert len(l1) == len(l2) > 0

    def strip(e):
        # run_id, prev_hash and hash are functions of the level; everything else must be equal
        return {k: v for k, v in dataclasses.asdict(e).items() if k not in ("level", "run_id", "prev_hash", "hash")}

    assert [strip(a) for a in l1] == [strip(b) for b in l2]
    assert {e.level for e in l1 if e.kind != "evidence"} == {"L1"}
    assert {e.level for e in l2 if e.kind != "evidence"} == {"L2"}
    assert l1[0].run_id != l2[0].run_id
