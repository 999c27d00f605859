"""Typed memory for agents: four stores (working, semantic, episodic, procedural), three tiers
(core, recall, archival), memory tools an agent calls to edit its own memory, all written to the event log.

    from poimen.agent import Memory
    mem = Memory("dana")
    mem.remember("Hi, I'm Dana and I prefer email contact.")       # -> semantic, user_profile
    mem.call("memory_replace", {"block": "user_profile", "old": "prefers email", "new": "prefers phone"})
    print(mem.compose("refund for ORD-3300").text)
"""

from poimen.agent.archive import Archive, ArchiveHit, IndexArchive, NoArchive, StaticArchive
from poimen.agent.compose import Context, ContextLine
from poimen.agent.facade import Block, Item, Memory, Remembered
from poimen.agent.pipeline import import_pipeline
from poimen.agent.stores import CORE_BLOCKS, MemoryRefused
from poimen.agent.tools import TOOLS, call_tool, openai_tools

__all__ = [
    "Archive", "ArchiveHit", "Block", "CORE_BLOCKS", "Context", "ContextLine", "IndexArchive", "Item", "Memory",
    "MemoryRefused", "NoArchive", "Remembered", "StaticArchive", "TOOLS", "call_tool", "import_pipeline",
    "openai_tools",
]
