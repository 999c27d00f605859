"""``mem serve --mcp``: a real stdio server, driven by the mcp SDK's own client."""

from __future__ import annotations

import sys
import textwrap

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from typed_helpers import memory

pytestmark = pytest.mark.slow  # starts a server process


ARCHIVE_MODULE = textwrap.dedent('''
    from poimen.agent.archive import StaticArchive

    def policy():
        return StaticArchive([
            "Returns after the 30-day window are still refundable, minus a 10% restocking fee.",
            "Gift cards and final-sale items cannot be returned.",
        ])
''')


async def session_calls(params):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            replaced = await session.call_tool(
                "memory_replace", {"block": "user_profile", "old": "prefers email", "new": "prefers phone"})
            unknown = await session.call_tool("memory_replace", {"block": "preferences", "old": "x", "new": "y"})
            extra = await session.call_tool("recall", {"n": 1, "everything": True})
            found = await session.call_tool("archival_search", {"query": "restocking fee returns after the window", "k": 1})
            return listed, replaced, unknown, extra, found


def test_mcp_server_lists_and_runs_the_memory_tools(tmp_path):
    mem = memory(tmp_path / "log", "dana")
    mem.remember("Hi, I'm Dana and I prefer email contact.")
    (tmp_path / "policy_archive.py").write_text(ARCHIVE_MODULE)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "poimen.cli.entry", "serve", "--mcp", "--ns", "dana", "--log", str(tmp_path / "log"),
              "--archive", "policy_archive:policy"],
        env={"PYTHONPATH": str(tmp_path), "POIMEN_HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        cwd=str(tmp_path),
    )
    listed, replaced, unknown, extra, found = anyio.run(session_calls, params)

    tools = {t.name: t for t in listed.tools}
    assert list(tools) == ["memory_append", "memory_replace", "recall", "archival_search", "remember"]
    assert tools["memory_replace"].input_schema["required"] == ["block", "old", "new"]
    assert replaced.content[0].text == "replaced 'prefers email' with 'prefers phone' in user_profile"
    assert not replaced.is_error
    assert (unknown.content[0].text, unknown.is_error) == ("[error] unknown memory block 'preferences'", True)
    assert extra.content[0].text.startswith("[error] recall: unexpected argument 'everything'")
    text = found.content[0].text
    assert text.startswith("[archival sha:") and text.endswith(
        "Returns after the 30-day window are still refundable, minus a 10% restocking fee.")
    # the server's write is in the shared log: this process reads it back
    assert mem.blocks()["user_profile"].text == "name: Dana; prefers phone"
