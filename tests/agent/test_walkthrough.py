"""The "four memories" article, end to end: every trace it prints, reproduced by examples/four_memories.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typed_helpers import Clock

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "four_memories.py"

ROUTES = """\
  route -> semantic   (a durable fact about the user)
           "Hi, I'm Dana and I prefer email contact."
  route -> episodic   (an event that happened)
           'User opened a return request for ORD-3300 earlier today.'
  route -> procedural (a reusable how-to rule)
           'Returns after the 30-day window incur a 10% restocking fee; multiply the total by 0.9.'
  route -> working    (the current task focus)
           'Quoting the refund for ORD-3300 now.'"""

AFTER_ROUTING = """\
  Stores after routing:
    CORE.user_profile : 'name: Dana; prefers email'
    CORE.task_state   : 'Quoting the refund for ORD-3300 now.'
    EPISODIC          : ['User opened a return request for ORD-3300 earlier today.']
    PROCEDURAL        : ['Returns after the 30-day window incur a 10% restocking fee; multiply the total by 0.9.']"""

EDITS = """\
  memory_replace(block='user_profile', old='prefers email', new='prefers phone')
    -> replaced 'prefers email' with 'prefers phone' in user_profile
  memory_append(block='task_state', text='order ORD-3300, $200, returned after the window')
    -> appended to task_state
  memory_replace(block='preferences', old='x', new='y')
    -> [error] unknown memory block 'preferences'"""

FINAL_BLOCKS = """\
  CORE.user_profile : 'name: Dana; prefers phone'
  CORE.task_state   : 'Quoting the refund for ORD-3300 now.; order ORD-3300, $200, returned after the window'
  The agent corrected a durable fact about the user with a single tool call."""

TIERS = """\
  core      always in context  -> user_profile, task_state (above)
  recall    recent, paged in   -> last episodic event: 'User opened a return request for ORD-3300 earlier today.'
  archival  large, searched    -> vector_search (black-box RAG; not re-derived here):
             query 'restocking fee returns after the window'
             -> 'Returns after the 30-day window are still refundable, minus a 10% restocking fee.' (score="""

FOUR_AT_ONCE = """\
  semantic   (user_profile): name: Dana; prefers phone
  working    (task_state)  : Quoting the refund for ORD-3300 now.; order ORD-3300, $200, returned after the window
  procedural (rule)        : Returns after the 30-day window incur a 10% restocking fee; multiply the total by 0.9.
  archival   (RAG chunk)   : Returns after the 30-day window are still refundable, minus a 10% restocking fee.
  episodic   (event)       : User opened a return request for ORD-3300 earlier today.

  REPLY: Hi Dana, for ORD-3300 returned after the 30-day window your refund is
         $180.00 (the 10% restocking fee applies). We will call you by phone."""


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("four_memories", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines: list[str] = []
    result = module.run(tmp_path_factory.mktemp("walkthrough"), out=lines.append, clock=Clock())
    return "\n".join(lines), result


@pytest.mark.parametrize("trace", [ROUTES, AFTER_ROUTING, EDITS, FINAL_BLOCKS, TIERS, FOUR_AT_ONCE],
                         ids=["routes", "after-routing", "edits", "final-blocks", "tiers", "four-at-once"])
def test_trace_is_reproduced(walkthrough, trace):
    printed, _ = walkthrough
    assert trace in printed


def test_routes_and_observations(walkthrough):
    _, r = walkthrough
    assert r["routes"] == ["semantic", "episodic", "procedural", "working"]
    assert r["observations"][2] == "[error] unknown memory block 'preferences'"


def test_composed_context_holds_every_fact_of_the_reply_with_its_store(walkthrough):
    _, r = walkthrough
    ctx, mem = r["context"], r["memory"]
    blocks = mem.blocks()
    needed = {
        ("semantic", "user_profile"): (blocks["user_profile"].sha, "name: Dana; prefers phone"),
        ("working", "task_state"): (blocks["task_state"].sha, "order ORD-3300, $200, returned after the window"),
        ("procedural", "rule"): (mem.items("procedural")[0].sha, "multiply the total by 0.9"),
        ("episodic", "event"): (mem.recall(1)[0].sha, "User opened a return request for ORD-3300"),
        ("archival", "chunk"): (None, "still refundable, minus a 10% restocking fee"),
    }
    rendered = ctx.text.splitlines()
    for (store, label), (sha, fact) in needed.items():
        line = next(l for l in ctx.lines if l.store == store and l.label == label and fact in l.text)
        if sha:
            assert line.sha == sha
        assert f"[{store}/{label} sha:{line.sha[:12]}] " in "\n".join(rendered)
    assert ctx.tokens <= ctx.budget
    assert "$180.00" in r["reply"] and "by phone" in r["reply"]


def test_archival_chunk_comes_from_an_archive(walkthrough):
    _, r = walkthrough
    try:
        import poimen.index  # noqa: F401
        import poimen.write.reference  # noqa: F401
    except ImportError:
        assert r["archive_kind"].startswith("StaticArchive")
    else:
        assert r["archive_kind"].startswith("poimen lookup over reference docs")
