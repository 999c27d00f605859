"""The four typed stores: every write an event in the log, read-your-writes, namespaces, rebuild, busy log."""

from __future__ import annotations

import threading
import time

import pytest
from typed_helpers import fill, memory

from poimen.agent.projection import StoreProjection, connect, default_db, dump, rebuild, replay
from poimen.agent.stores import MemoryRefused
from poimen.domain import sha256_text
from poimen.log import EventLog, verify


def store_writes(root):
    return [e for e in EventLog(root).events() if e.kind == "store_write"]


def test_every_write_is_a_store_write_event_chained_to_the_previous_version(tmp_path):
    mem = memory(tmp_path)
    fill(mem)
    events = store_writes(tmp_path)
    assert len(events) == 8
    assert verify(tmp_path).ok
    profile = [e for e in events if e.attributes["block"] == "user_profile"]
    assert [e.attributes["op"] for e in profile] == ["merge", "replace"]
    assert profile[0].parents == () and profile[1].parents == (profile[0].sha,)
    assert profile[1].text == "name: Dana; prefers phone" and profile[1].sha == sha256_text(profile[1].text)
    for e in events:
        a = e.attributes
        assert a["namespace"] == "dana" and a["store"] in ("working", "semantic", "episodic", "procedural")
        assert {"block", "op", "ts"} <= set(a)
    assert mem.blocks()["user_profile"].sha == profile[1].sha


def test_stores_hold_their_own_kind(tmp_path):
    mem = memory(tmp_path)
    fill(mem)
    blocks = mem.blocks()
    assert blocks["user_profile"].text == "name: Dana; prefers phone"
    assert blocks["task_state"].text == "Quoting the refund for ORD-3300 now.; order ORD-3300, $200, returned after the window"
    assert [i.text for i in mem.items("semantic")] == ["The warehouse in Rotterdam handles all EU returns."]
    assert [i.text for i in mem.recall(5)] == ["Yesterday the courier reported the parcel as delivered.",
                                               "User opened a return request for ORD-3300 earlier today."]
    assert [i.text for i in mem.recall(1, page=1)] == ["User opened a return request for ORD-3300 earlier today."]
    assert len(mem.items("procedural")) == 1


def test_read_your_writes_across_processes_sharing_a_folder(tmp_path):
    writer, reader = memory(tmp_path), memory(tmp_path)
    assert reader.blocks()["task_state"].text == ""
    writer.remember("Currently checking the carrier status for ORD-1287.")
    assert reader.blocks()["task_state"].text == "Currently checking the carrier status for ORD-1287."
    reader.append("task_state", "carrier is DHL")
    assert writer.blocks()["task_state"].text.endswith("; carrier is DHL")


def test_namespace_a_can_neither_read_nor_change_namespace_b(tmp_path):
    a, b = memory(tmp_path, "agent-a"), memory(tmp_path, "user-b")
    fill(b)
    before = b.dump()
    assert a.blocks()["user_profile"].text == "" and a.recall(10) == [] and a.items("procedural") == []
    assert a.call("recall", {"n": 50}) == "no episodic memories"
    assert a.call("memory_replace", {"block": "user_profile", "old": "prefers phone", "new": "prefers fax"}) == \
        "[error] memory_replace: 'prefers phone' not found in user_profile"
    a.call("memory_append", {"block": "task_state", "text": "agent A's own note"})
    a.call("remember", {"text": "Always double-check B's data."})
    context = a.compose("Dana phone ORD-3300 refund restocking fee", 2000).text
    assert "Dana" not in context and "ORD-3300 now" not in context
    assert b.dump() == before
    assert "agent A's own note" not in b.blocks()["task_state"].text
    with pytest.raises(MemoryRefused):
        memory(tmp_path, "../b")


def test_rebuild_from_the_log_restores_every_store_byte_identically(tmp_path):
    a, b = memory(tmp_path, "a"), memory(tmp_path, "b")
    fill(a)
    fill(b)
    b.remember("Never promise a delivery date for backordered items.")
    live = dump(StoreProjection.for_log(tmp_path).con)  # kept incrementally, write by write
    assert all(live[s] for s in ("working", "semantic", "episodic", "procedural"))
    assert dump(replay(tmp_path)) == live  # replayed from nothing but the log
    first = rebuild(tmp_path, default_db(tmp_path))
    assert first.events == 17 and first.differing == ["working", "semantic", "episodic", "procedural"]  # empty before
    again = rebuild(tmp_path, default_db(tmp_path))
    assert again.ok and again.after == first.after
    con = connect(default_db(tmp_path))
    assert dump(con) == live
    con.close()
    assert a.dump() == dump(replay(tmp_path), "a")


def test_busy_log_waits_then_refuses_and_writes_nothing(tmp_path):
    mem = memory(tmp_path, wait=0.3)
    mem.remember("Quoting the refund for ORD-3300 now.")
    before = mem.dump()
    log = EventLog(tmp_path)
    with log.writer():  # as a long `mem run` would
        t0 = time.monotonic()
        observation = mem.call("memory_append", {"block": "task_state", "text": "x"})
        assert time.monotonic() - t0 >= 0.3
    assert observation.startswith("[error] memory is busy:") and "nothing was written" in observation
    assert mem.dump() == before


def test_write_goes_through_once_the_lock_is_released(tmp_path):
    mem = memory(tmp_path, wait=5)
    log = EventLog(tmp_path)
    held, release = threading.Event(), threading.Event()

    def hold():
        with log.writer():
            held.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    threading.Timer(0.2, release.set).start()
    assert mem.call("memory_append", {"block": "task_state", "text": "after the run"}) == "appended to task_state"
    t.join()
    assert mem.blocks()["task_state"].text == "after the run"


def test_compose_keeps_core_and_the_budget_and_tags_every_line(tmp_path):
    mem = memory(tmp_path)
    fill(mem)
    ctx = mem.compose("refund for ORD-3300 returned after the 30-day window", 400)
    assert ctx.tokens <= 400
    assert [(l.store, l.label) for l in ctx.lines[:2]] == [("semantic", "user_profile"), ("working", "task_state")]
    for line in ctx.lines:
        assert line.render().startswith(f"[{line.store}/{line.label} sha:{line.sha[:12]}] ")
    rest = ctx.lines[2:]
    assert [l.score for l in rest if l.tier != "recall" or l.score] == sorted(
        [l.score for l in rest if l.tier != "recall" or l.score], reverse=True)
    assert {l.store for l in ctx.lines} == {"semantic", "working", "procedural", "episodic", "archival"}
    tight = mem.compose("refund for ORD-3300", 10)
    assert [l.label for l in tight.lines] == ["user_profile", "task_state"] and tight.dropped


def test_pipeline_memories_go_to_the_store_their_query_names(tmp_path):
    import asyncio

    from helpers import reply

    from poimen.domain import Chunk, Level, Query, Stream
    from poimen.llm.client import ScriptedClient
    from poimen.write.loop import LoopConfig
    from poimen.write.runner import RunPlan, execute

    queries = tmp_path / "queries.yaml"
    queries.write_text("queries:\n  - id: fixes\n    text: Which commands fixed a problem?\n    store: procedural\n"
                       "  - id: timeline\n    text: What happened and when?\n    store: episodic\n")
    log = EventLog(tmp_path)
    chunk = Chunk("At 09:14 the upload API returned 413; raising client_max_body_size to 50m fixed it.", "ops.log", 0, 20)
    plans = [RunPlan(Level.L1, Query("fixes", "Which commands fixed a problem?", "procedural"), Stream.of("ops.log", [chunk])),
             RunPlan(Level.L1, Query("timeline", "What happened and when?", "episodic"), Stream.of("ops.log", [chunk]))]
    client = ScriptedClient([reply("yes", "Raise client_max_body_size to 50m to fix HTTP 413 on upload.", "end"),
                             reply("yes", "09:14 upload API returned 413.", "end")])
    with log.writer():
        asyncio.run(execute(log, plans, client, LoopConfig(), concurrency=1))
    from poimen.agent.pipeline import import_pipeline

    mem = memory(tmp_path, "ops")
    first = import_pipeline(mem, queries)
    assert sorted((i.query_id, i.store, i.skipped) for i in first) == [("fixes", "procedural", False),
                                                                      ("timeline", "episodic", False)]
    assert [i.text for i in mem.items("procedural")] == ["Raise client_max_body_size to 50m to fix HTTP 413 on upload."]
    assert [i.text for i in mem.recall()] == ["09:14 upload API returned 413."]
    assert all(i.skipped for i in import_pipeline(mem, queries))
    event = [e for e in store_writes(tmp_path) if e.attributes["store"] == "procedural"][0]
    assert event.parents == (sha256_text("Raise client_max_body_size to 50m to fix HTTP 413 on upload."),)
    assert event.attributes["op"] == "import" and event.attributes["source_run_id"]
    assert verify(tmp_path).ok
