"""``mem serve --mcp``: the memory tools over MCP (stdio), for any MCP-speaking agent host.

The server lists the same five tools with the same JSON schemas as
``mem tools``, and a call runs through the same ``call_tool``: arguments are
validated by poimen (not by the SDK), so a bad call comes back as an
``[error] …`` text result with ``is_error`` set, never as a protocol error,
and the agent can read it and correct itself. One server serves one
namespace. Tool bodies run in a worker thread: a write may wait for the log's
writer lock, and that wait must not stall the server's event loop.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from poimen.agent.facade import Memory
from poimen.agent.tools import TOOLS, call_tool

SERVER_NAME = "poimen-memory"


def build_server(memory: Memory) -> Server:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"]) for t in TOOLS
        ])

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        observation = await anyio.to_thread.run_sync(call_tool, memory, params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(text=observation)],
                                    is_error=observation.startswith("[error]"))

    return Server(SERVER_NAME, version="0.1.0",
                  instructions=f"Typed memory of namespace {memory.namespace!r}: core blocks user_profile and "
                               "task_state (edit with memory_append / memory_replace), recall for recent events, "
                               "archival_search for the shared knowledge base, remember to file a new item.",
                  on_list_tools=list_tools, on_call_tool=call)


async def serve_stdio(memory: Memory) -> None:
    server = build_server(memory)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(memory: Memory) -> None:
    anyio.run(serve_stdio, memory)
