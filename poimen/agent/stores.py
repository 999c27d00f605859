"""The four typed stores, their core blocks, and the one event every write becomes.

Kinds of knowledge (what a store holds) and placement tiers (how it is read)
are orthogonal:

============  ==================================  ======================================
store         holds                               tier
============  ==================================  ======================================
working       core block ``task_state``           core (always in context)
semantic      core block ``user_profile``         core (always in context)
              plus a fact collection              matched into context by compose
episodic      time-stamped events, newest first   recall (recent, paged in)
procedural    rules                               matched into context by compose
(archival)    the pipeline's lookup               searched, a black box
============  ==================================  ======================================

Every write is a ``store_write`` event whose ``text`` is the new content (a
block's whole new text, or the new item), whose ``sha`` is that text's sha256
and whose ``parents`` hold the block's previous version sha (empty for the
first version and for collection items). ``attrs`` carry namespace, store,
block ('' for items), op, time and the op's arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from poimen.domain import EventKind, TYPED_STORES, sha256_text
from poimen.errors import PoimenError
from poimen.log import payloads
from poimen.log.events import EventDraft

CORE_BLOCKS: dict[str, str] = {"user_profile": "semantic", "task_state": "working"}
"""Labelled core blocks and the store each belongs to."""

ITEM_STORES = ("semantic", "episodic", "procedural")
"""Stores that keep a collection of items besides (or instead of) a core block."""

BLOCK_SEP = "; "
STORE_LEVEL = "store"  # the event ``level`` of a typed-store write: not L0/L1/L2/R evidence or memory
RUN_PREFIX = "sw-"      # run ids of store writes, so projections skip other segments unread
OPS = ("set", "append", "replace", "merge", "add", "import")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")


class MemoryRefused(PoimenError):
    """A memory call the store refuses (unknown block, old text absent or ambiguous, busy log).

    Its message is the readable observation an agent gets, without the ``[error]`` prefix.
    """


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise MemoryRefused(f"namespace {namespace!r}: use letters, digits and _ . : @ - (at most 128)")
    return namespace


def check_block(block: str) -> str:
    if block not in CORE_BLOCKS:
        raise MemoryRefused(f"unknown memory block {block!r}")
    return block


@dataclass(frozen=True)
class StoreWrite:
    """One write to one store of one namespace, before the log places it."""

    namespace: str
    store: str
    op: str
    text: str
    ts: str
    block: str = ""
    parents: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
    model_id: str = ""
    prompt_sha: str = ""

    def __post_init__(self) -> None:
        if self.store not in TYPED_STORES:
            raise MemoryRefused(f"store {self.store!r}: expected one of {TYPED_STORES}")
        if self.op not in OPS:
            raise MemoryRefused(f"op {self.op!r}: expected one of {OPS}")
        if self.block and CORE_BLOCKS.get(self.block) != self.store:
            raise MemoryRefused(f"block {self.block!r} does not belong to store {self.store!r}")

    @property
    def sha(self) -> str:
        return sha256_text(self.text)

    def draft(self) -> EventDraft:
        attrs = payloads.StoreWrite.from_attrs({"namespace": self.namespace, "store": self.store, "block": self.block,
                                                "op": self.op, "ts": self.ts, **self.detail}).to_attrs()
        return EventDraft(kind=EventKind.STORE_WRITE, level=STORE_LEVEL, sha=self.sha, parents=self.parents,
                          text=self.text, model_id=self.model_id, prompt_sha=self.prompt_sha, attrs=attrs)


def appended(block_text: str, text: str) -> str:
    """``memory_append``: the new text joins the block after ``; `` (or starts an empty block)."""
    return f"{block_text}{BLOCK_SEP}{text}" if block_text else text


def replaced(block: str, block_text: str, old: str, new: str) -> str:
    """``memory_replace``: ``old`` must occur exactly once in the block, else a readable refusal."""
    count = block_text.count(old)
    if count == 0:
        raise MemoryRefused(f"memory_replace: {old!r} not found in {block}")
    if count > 1:
        raise MemoryRefused(f"memory_replace: {old!r} occurs {count} times in {block}; quote more of it so it matches once")
    return block_text.replace(old, new, 1)
