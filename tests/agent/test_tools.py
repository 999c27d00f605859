"""Memory tools: schemas, validation before running, and every bad call as an [error] observation that changes nothing."""

from __future__ import annotations

import json

import jsonschema
import pytest
from typed_helpers import fill, memory

from poimen.agent.tools import TOOLS, openai_tools
from poimen.log import EventLog


@pytest.fixture
def mem(tmp_path):
    m = memory(tmp_path)
    fill(m)
    return m


def snapshot(m):
    return m.dump(), len(EventLog(m.root).index())


BAD_CALLS = [
    # unknown tool
    ("memory_delete", {"block": "user_profile"}, "[error] unknown tool 'memory_delete'; tools: memory_append, "
                                                 "memory_replace, recall, archival_search, remember"),
    # unknown block
    ("memory_replace", {"block": "preferences", "old": "x", "new": "y"}, "[error] unknown memory block 'preferences'"),
    ("memory_append", {"block": "USER_PROFILE", "text": "x"}, "[error] unknown memory block 'USER_PROFILE'"),
    # missing argument
    ("memory_replace", {"block": "user_profile", "old": "prefers phone"}, "[error] memory_replace: missing argument 'new'"),
    ("memory_append", {"block": "task_state"}, "[error] memory_append: missing argument 'text'"),
    ("archival_search", {}, "[error] archival_search: missing argument 'query'"),
    ("remember", {}, "[error] remember: missing argument 'text'"),
    # extra argument
    ("memory_append", {"block": "task_state", "text": "x", "force": True},
     "[error] memory_append: unexpected argument 'force'; expected block, text"),
    ("recall", {"n": 2, "namespace": "other"}, "[error] recall: unexpected argument 'namespace'; expected n, page"),
    # wrong type
    ("memory_append", {"block": "task_state", "text": 42}, "[error] memory_append: argument 'text' must be a string, got integer"),
    ("memory_replace", {"block": ["user_profile"], "old": "a", "new": "b"},
     "[error] memory_replace: argument 'block' must be a string, got array"),
    ("recall", {"n": "5"}, "[error] recall: argument 'n' must be an integer, got string"),
    ("recall", {"n": True}, "[error] recall: argument 'n' must be an integer, got boolean"),
    ("archival_search", {"query": "fee", "k": 2.5}, "[error] archival_search: argument 'k' must be an integer, got number"),
    ("memory_append", ["task_state", "x"], "[error] memory_append: arguments must be a JSON object, got array"),
    ("memory_append", '{"block": "task_state", "text": ', "[error] memory_append: arguments are not valid JSON "
                                                          "(Expecting value at position 32)"),
    # values out of range
    ("recall", {"n": 0}, "[error] recall: argument 'n' must be >= 1"),
    ("remember", {"text": ""}, "[error] remember: argument 'text' must not be empty"),
    ("remember", {"text": "   "}, "[error] nothing to remember: the text is empty"),
    # old text absent or ambiguous
    ("memory_replace", {"block": "user_profile", "old": "prefers fax", "new": "prefers post"},
     "[error] memory_replace: 'prefers fax' not found in user_profile"),
    ("memory_replace", {"block": "task_state", "old": "ORD-3300", "new": "ORD-3301"},
     "[error] memory_replace: 'ORD-3300' occurs 2 times in task_state; quote more of it so it matches once"),
    ("memory_replace", {"block": "user_profile", "old": "Prefers Phone", "new": "x"},
     "[error] memory_replace: 'Prefers Phone' not found in user_profile"),
]


@pytest.mark.parametrize("name, args, observation", BAD_CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CALLS)])
def test_bad_call_is_an_error_observation_and_the_store_is_unchanged(mem, name, args, observation):
    before = snapshot(mem)
    assert mem.call(name, args) == observation
    assert snapshot(mem) == before


def test_good_calls_say_what_they_did(mem):
    assert mem.call("memory_replace", {"block": "user_profile", "old": "prefers phone", "new": "prefers email"}) == \
        "replaced 'prefers phone' with 'prefers email' in user_profile"
    assert mem.call("memory_append", {"block": "task_state", "text": "customer agreed"}) == "appended to task_state"
    assert mem.blocks()["task_state"].text.endswith("; customer agreed")
    assert mem.call("remember", {"text": "Never promise a delivery date for backordered items."}).startswith(
        "remembered in procedural (rules) sha:")
    recall = mem.call("recall", {"n": 1})
    assert recall.startswith("[episodic sha:") and recall.endswith("Yesterday the courier reported the parcel as delivered.")
    hits = mem.call("archival_search", {"query": "restocking fee returns after the window", "k": 1})
    assert hits.startswith("[archival sha:") and "minus a 10% restocking fee" in hits
    assert mem.call("archival_search", {"query": "zebra"}) == "no archival hits for 'zebra'"
    assert mem.call("memory_replace", '{"block": "task_state", "old": "customer agreed", "new": ""}') == \
        "replaced 'customer agreed' with '' in task_state"


def test_a_failing_archive_is_an_observation_not_a_raise(tmp_path):
    class Broken:
        def search(self, query, k):
            raise RuntimeError("index is gone")

    m = memory(tmp_path, archive=Broken())
    assert m.call("archival_search", {"query": "fee"}) == "[error] archival_search failed: RuntimeError: index is gone"
    m.remember("Quoting the refund for ORD-3300 now.")
    ctx = m.compose("refund fee")
    assert [l.store for l in ctx.lines] == ["working"] and ctx.notes == ["archival search failed: RuntimeError: index is gone"]


def test_schemas_are_valid_and_export_in_openai_format():
    for tool in TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        assert tool["parameters"]["additionalProperties"] is False
    exported = openai_tools()
    assert [t["function"]["name"] for t in exported] == ["memory_append", "memory_replace", "recall",
                                                          "archival_search", "remember"]
    assert all(t["type"] == "function" and t["function"]["description"] for t in exported)
    json.dumps(exported)


def test_cli_tool_blocks_remember_and_tools(tmp_path, monkeypatch, capsys):
    from typer.testing import CliRunner

    from poimen.cli.app import app

    runner = CliRunner()
    log = ["--log", str(tmp_path)]
    r = runner.invoke(app, ["remember", "--ns", "dana", *log, "Hi, I'm Dana and I prefer email contact."])
    assert r.exit_code == 0 and r.stdout.strip() == "semantic"
    r = runner.invoke(app, ["tool", "--ns", "dana", *log, "memory_replace",
                            '{"block": "user_profile", "old": "prefers email", "new": "prefers phone"}'])
    assert r.stdout.strip() == "replaced 'prefers email' with 'prefers phone' in user_profile"
    r = runner.invoke(app, ["tool", "--ns", "dana", *log, "memory_replace", '{"block": "preferences", "old": "x", "new": "y"}'])
    assert r.exit_code == 1 and r.stdout.strip() == "[error] unknown memory block 'preferences'"
    r = runner.invoke(app, ["blocks", "--ns", "dana", *log])
    assert "user_profile (semantic, v2, sha:" in r.stdout and "'name: Dana; prefers phone'" in r.stdout
    r = runner.invoke(app, ["remember", "--ns", "dana", *log, "User opened a return request for ORD-3300 earlier today."])
    assert r.stdout.strip() == "episodic"
    r = runner.invoke(app, ["recall", "--ns", "dana", *log, "-n", "1"])
    assert r.stdout.strip().endswith("User opened a return request for ORD-3300 earlier today.")
    r = runner.invoke(app, ["compose", "--ns", "dana", *log, "return ORD-3300"])
    assert r.stdout.startswith("[semantic/user_profile sha:") and "[episodic/event sha:" in r.stdout
    r = runner.invoke(app, ["tools", "--format", "openai"])
    assert json.loads(r.stdout) == openai_tools()
    r = runner.invoke(app, ["blocks", "--ns", "other", *log])
    assert "'name: Dana" not in r.stdout
    r = runner.invoke(app, ["stores", "rebuild", *log])
    assert r.exit_code in (0, 1) and "store writes replayed" in r.stdout
    r = runner.invoke(app, ["stores", "rebuild", *log])
    assert r.exit_code == 0 and r.stdout.startswith("ok: 3 store writes replayed")


def test_archival_search_uses_the_real_lookup_as_a_black_box(tmp_path):
    from typed_helpers import POLICY_CHUNKS

    from poimen.agent.archive import IndexArchive
    from poimen.embedding.embedders import HashEmbedder
    from poimen.index import build_projections
    from poimen.write.reference import ingest_reference

    doc = tmp_path / "docs" / "returns-policy.md"
    doc.parent.mkdir()
    doc.write_text("\n\n".join(POLICY_CHUNKS) + "\n")
    ingest_reference(tmp_path / "log", [doc], max_tokens=24, root=tmp_path)
    build_projections(tmp_path / "log", tmp_path / "index.duckdb", HashEmbedder())
    m = memory(tmp_path / "log", archive=IndexArchive(tmp_path / "index.duckdb"))
    hits = m.search("restocking fee returns after the window", 1)
    assert hits[0].text == POLICY_CHUNKS[0] and hits[0].source
    observation = m.call("archival_search", {"query": "restocking fee returns after the window", "k": 1})
    assert observation.startswith("[archival sha:") and observation.endswith(POLICY_CHUNKS[0])
