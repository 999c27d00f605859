"""Where the inputs of a build live: the sources folder, the reference folder and the standing queries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Optional

import dagster as dg

from poimen import settings
from poimen.inputs.chunking import DEFAULT_MAX_TOKENS, SUFFIXES
from poimen.domain import Query
from poimen.inputs.reading import Reading
from poimen.inputs.queries import load_queries


def repo_root() -> Path:
    """The repository this code location is loaded from: the defaults below are relative to it."""
    return Path(__file__).resolve().parent.parent


def _resolve(configured: Optional[str], setting: Callable[[], Optional[Path]], default: str) -> Path:
    """Explicit config wins, then the setting (its ``POIMEN_*`` variable), then the bundled example under the repo
    root."""
    chosen = configured or setting()
    return Path(chosen).expanduser().resolve() if chosen else repo_root() / default


class CorpusResource(dg.ConfigurableResource):
    """The sources the loops read, the reference docs indexed directly, and the standing queries they keep in mind.

    The code location passes ``POIMEN_SOURCES``, ``POIMEN_REFERENCE``,
    ``POIMEN_QUERIES`` and ``POIMEN_CHUNK_TOKENS``, when set, as ``dg.EnvVar``s,
    which Dagster resolves when a step or sensor uses the resource; an unset
    path falls back, then, to its variable (``poimen.settings``) and to the
    example corpus under ``examples/``.
    """

    sources: Optional[str] = None
    reference: Optional[str] = None
    queries: Optional[str] = None
    # Unset: POIMEN_CHUNK_TOKENS (read when a step runs, never when the code location loads), else 5000.
    chunk_tokens: Optional[int] = None
    # Unset: POIMEN_INCIDENTS (on unless set to 0/off): whether the `incidents` asset cards each source's incidents.
    incidents: Optional[bool] = None
    reference_tokens: int = 1000
    memory_budget: int = 1024
    # How sources are read when their content and suffix are not to decide: a format for all, a format per file
    # name or glob over the path under the sources folder ({"exports/*.json": "chat"}), JSON record fields.
    format: Optional[str] = None
    formats: Optional[dict[str, str]] = None
    fields: Optional[str] = None

    @property
    def reading(self) -> Reading:
        """The format choices as one ``Reading`` (names checked: a typo is one line naming the formats)."""
        return Reading(format=self.format, per_file=tuple(sorted((self.formats or {}).items())), fields=self.fields)

    @property
    def incidents_on(self) -> bool:
        """``incidents``, else ``POIMEN_INCIDENTS``, else on."""
        return settings.incidents() if self.incidents is None else self.incidents

    @property
    def chunk_bound(self) -> int:
        """The chunk bound in tokens: ``chunk_tokens``, else ``POIMEN_CHUNK_TOKENS``, else 5000."""
        return self.chunk_tokens or settings.chunk_tokens(DEFAULT_MAX_TOKENS)

    @property
    def sources_dir(self) -> Path:
        return _resolve(self.sources, settings.sources, "examples/sources")

    @property
    def reference_dir(self) -> Path:
        return _resolve(self.reference, settings.reference, "examples/reference")

    @property
    def queries_file(self) -> Path:
        return _resolve(self.queries, settings.queries, "examples/queries.yaml")

    def source_files(self) -> list[Path]:
        """Every file of a supported type under the sources folder, in a stable order (sub-folders included)."""
        return _files(self.sources_dir)

    def reference_files(self) -> list[Path]:
        return _files(self.reference_dir)

    def standing_queries(self) -> list[Query]:
        return load_queries(self.queries_file)

    def listing(self) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every input file: what the sources sensor watches."""
        paths = self.source_files() + self.reference_files() + [self.queries_file]
        return [(str(p), st.st_size, st.st_mtime_ns) for p in paths if p.exists() for st in [p.stat()]]


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in SUFFIXES and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
