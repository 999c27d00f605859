"""Domain types shared by every stage: levels, chunks, standing queries, event kinds."""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from poimen.errors import SourceChanged


def sha256_text(text: str) -> str:
    """The sha256 hex digest of a text's UTF-8 bytes: the identity of evidence and memories."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """One byte-stable JSON spelling: sorted keys, no spaces, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(value: Any) -> str:
    return sha256_text(canonical_json(value))


class Level(str, enum.Enum):
    """Where a piece of text sits: raw evidence, a memory, a memory of memories, or reference docs."""

    L0 = "L0"
    L1 = "L1"
    L2 = "L2"
    R = "R"

    def __str__(self) -> str:
        return self.value


class EventKind(str, enum.Enum):
    RUN_START = "run_start"
    GATE = "gate"
    EVIDENCE = "evidence"
    MEMORY = "memory"
    BUDGET_EXCEEDED = "budget_exceeded"
    PARSE_FAILED = "parse_failed"
    RUN_END = "run_end"
    # Derived at write time from accepted memories (tool context).
    SYMPTOM = "symptom"
    # Typed memory writes by agents (the online path).
    STORE_WRITE = "store_write"
    # What ``mem forget`` removed: shas, runs and rewritten segments, never the text itself.
    FORGET = "forget"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Chunk:
    """A token-bounded piece of a source, content-addressed by the sha256 of its text.

    ``level`` is L0 for evidence read from a source; at L2 the chunks are L1
    memories, so the same loop reads them unchanged.
    """

    text: str
    source: str
    position: int
    tokens: int
    level: Level = Level.L0
    sha: str = field(default="")

    def __post_init__(self) -> None:
        digest = sha256_text(self.text)
        if self.sha and self.sha != digest:
            raise SourceChanged(self.source, self.position, "has a sha that does not match its text")
        object.__setattr__(self, "sha", digest)


@dataclass(frozen=True)
class Query:
    """A standing question that a loop keeps in mind while it reads a stream."""

    id: str
    text: str
    store: str = "semantic"
    use_exit_gate: bool = False

    @property
    def sha(self) -> str:
        return sha256_text(self.text)


TYPED_STORES = ("working", "semantic", "episodic", "procedural")


@dataclass(frozen=True)
class Stream:
    """An ordered stream of chunks whose shas are known before reading starts (they name the run)."""

    id: str
    chunk_shas: tuple[str, ...]
    open: Callable[[], Iterable[Chunk]]
    chunk_tokens: int | None = None  # the bound the source was cut at (recorded on the run); None: not a chunked source

    @classmethod
    def of(cls, stream_id: str, chunks: Sequence[Chunk], chunk_tokens: int | None = None) -> "Stream":
        chunks = list(chunks)
        return cls(stream_id, tuple(c.sha for c in chunks), lambda: iter(chunks), chunk_tokens)

    @property
    def sha(self) -> str:
        return sha256_json(list(self.chunk_shas))
