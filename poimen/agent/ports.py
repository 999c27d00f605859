"""What the compose step and the memory tools need of a memory: small Protocols, so neither imports the facade.

``poimen.agent.facade.Memory`` satisfies both; a test can hand in anything else
that does. The value types the protocols speak in live here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from poimen.agent.router import RouteDecision


@dataclass(frozen=True)
class Block:
    """A labelled core block: always in the agent's context. ``version`` 0 means never written."""

    label: str
    store: str
    text: str
    sha: str
    version: int


@dataclass(frozen=True)
class Item:
    """One fact, event or rule. ``ts`` is when it was written; ``source`` the pipeline run it came from, if any."""

    store: str
    sha: str
    text: str
    ts: str
    source: str = ""


@dataclass(frozen=True)
class Remembered:
    """Where ``remember`` put an item: the store, the block or collection, and the written content's sha."""

    store: str
    where: str
    sha: str
    text: str
    route: RouteDecision
    event_hash: str


class StoreReader(Protocol):
    """Reads the context builder (``compose``) makes."""

    def blocks(self) -> dict[str, Block]: ...

    def items(self, store: str) -> list[Item]: ...

    def search(self, query: str, k: int = 3) -> Sequence[Any]: ...


class MemoryTools(StoreReader, Protocol):
    """What the five memory tools call."""

    def append(self, block: str, text: str) -> Block: ...

    def replace(self, block: str, old: str, new: str) -> Block: ...

    def recall(self, n: int = 5, page: int = 0) -> list[Item]: ...

    def remember(self, text: str) -> Remembered: ...
