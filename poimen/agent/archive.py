"""The archival tier: a search the typed memory calls and never looks inside.

``Archive`` is the whole interface: ``search(query, k)`` returning hits that
carry a sha, a text and a score. The real one is poimen's context builder
(``poimen.read.context``: every memory line, source unit and reference unit ranked
by the fused relevance scorer, with its provenance) over the pipeline's index; it is
a shared corpus, not any agent's namespace, and it is only ever read here.
``StaticArchive`` is a small keyword archive over given texts, for tests and
for running without an index.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from poimen.domain import sha256_text
from poimen.errors import ConfigError
from poimen.relevance.terms import lexical_share


@dataclass(frozen=True)
class ArchiveHit:
    sha: str
    text: str
    score: float
    source: str = ""  # level/kind/tier as the archive names them, for the trace


class Archive(Protocol):
    def search(self, query: str, k: int) -> Sequence[Any]: ...


def as_hit(hit: Any) -> ArchiveHit:
    """Any hit with ``sha``, ``text`` and ``score`` (a lookup ``Hit``, an ``ArchiveHit``) as an ``ArchiveHit``."""
    if isinstance(hit, ArchiveHit):
        return hit
    parts = [str(getattr(hit, name)) for name in ("level", "kind", "tier") if getattr(hit, name, None)]
    return ArchiveHit(str(hit.sha), str(hit.text), float(hit.score), "/".join(parts))


class NoArchive:
    """No archival tier configured: every search is empty."""

    def search(self, query: str, k: int) -> list[ArchiveHit]:
        return []


class StaticArchive:
    """Keyword search over a fixed list of texts: the rarity-weighted share of the query's words a text holds."""

    def __init__(self, texts: Sequence[str]):
        self.texts = list(texts)

    def search(self, query: str, k: int) -> list[ArchiveHit]:
        scored = []
        for i, text in enumerate(self.texts):
            share = lexical_share(query, text)
            if share > 0:
                scored.append((round(share, 2), i, text))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [ArchiveHit(sha256_text(t), t, s, "static") for s, _, t in scored[:k]]


class IndexArchive:
    """The archival tier over the DuckDB index (opened on first search): the context builder's best lines —
    memory lines, source units and reference units ranked by the fused scorer, each tagged with its provenance —
    or, for an index built before the unit projections, the tiered lookup's hits."""

    def __init__(self, db_path: str | Path, embedder: Any = None):
        self.db_path = Path(db_path)
        self.embedder = embedder
        self._engine = None
        self._index = None

    def search(self, query: str, k: int) -> list[ArchiveHit]:
        from poimen.errors import PoimenError

        if self._engine is None and self._index is None:
            from poimen.read.context import ContextEngine
            from poimen.index import MemoryIndex

            try:
                self._engine = ContextEngine.open(self.db_path, self.embedder)  # None: the embedder that built it
            except PoimenError:
                self._index = MemoryIndex.open(self.db_path, self.embedder)
        if self._index is not None:
            return [as_hit(h) for h in self._index.search(query, k)]
        lines = self._engine.context(query, budget=max(200, 120 * k)).lines[:k]
        return [ArchiveHit(line.sha, line.text, round(line.score, 4), line.origins[0].tag()) for line in lines]


def load_factory(spec: str) -> Archive:
    """``module:callable`` returning an Archive: bring your own archival tier to the CLI and MCP server."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigError(f"--archive {spec!r}: expected module:callable")
    return getattr(importlib.import_module(module), name)()
