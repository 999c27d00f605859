"""What the event log needs of its storage: one small interface every backend implements, and the names it uses.

Names are ``/``-separated and relative to the log's root: ``index.jsonl`` (the commit point), ``segments/`` and
``journal/``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

JOURNAL = "journal"
INDEX = "index.jsonl"

Update = Callable[[bytes], "bytes | None"]  # current object bytes -> bytes to append (None: nothing to commit)


class LogStore(ABC):
    """The storage of one event log."""

    uri: str
    # Each turn of a journal is put only if absent (one object per turn). A writer that starts a run whose journal
    # it did not see, one begun since its session listed the journals, then fails on its first put (RunBusy) rather
    # than write over it, so the writer need not read the journal of a run its listing did not show.
    exclusive_turns: bool = False

    @abstractmethod
    def where(self, name: str) -> Path | str: ...

    @abstractmethod
    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None if it does not exist."""

    @abstractmethod
    def exists(self, name: str) -> bool: ...

    @abstractmethod
    def put(self, name: str, data: bytes) -> None:
        """Replace the object whole: readers see the old bytes or the new ones."""

    @abstractmethod
    def replace(self, name: str, data: bytes) -> None:
        """Replace a sealed object on purpose (``mem forget`` rewriting a segment with its text tombstoned), inside
        an exclusive session that read it: ``SessionConflict`` if it changed since that read."""

    def stamp(self, name: str) -> object | None:
        """A token that changes whenever the object does, got without reading it (None: no such token short of a
        request, so a caller that would skip a read on an unchanged token reads instead)."""
        return None

    @abstractmethod
    def confirm_session(self) -> None:
        """In an exclusive session: ``SessionConflict`` unless the index is still where the session (and its own
        commits) left it. A writer that must not end with another writer's commit after its plan checks here."""

    @abstractmethod
    def put_if_absent(self, name: str, data: bytes) -> bool:
        """Create the object; False (and nothing written) if it already exists."""

    @abstractmethod
    def names(self, folder: str, suffix: str) -> list[str]:
        """Names (without the folder) of the objects directly in ``folder`` that end in ``suffix``, sorted."""

    @abstractmethod
    def delete(self, name: str) -> None: ...

    @abstractmethod
    def commit(self, name: str, update: Update) -> bytes | None:
        """Append ``update(current)`` to ``name`` as the one committer of that moment; returns what was appended."""

    @abstractmethod
    def exists_root(self) -> bool: ...

    # -- journals: a live run's whole turns, in order ---------------------------------
    @abstractmethod
    def journal_ids(self) -> list[str]: ...

    @abstractmethod
    def journal_read(self, run_id: str) -> bytes | None: ...

    @abstractmethod
    def journal_append(self, run_id: str, line_no: int, line: bytes) -> None: ...

    @abstractmethod
    def journal_cut(self, run_id: str, good: int) -> None:
        """Cut a torn last line (only a local journal can have one: each object-store turn is put whole)."""

    def journal_retire(self, run_id: str, lines: int) -> None:
        """Drop the journal of a run this writer has just sealed. It may go later, within the writer's session: a
        sealed run's leftover journal is only noted by ``verify`` and dropped by the next writer's session."""
        self.journal_drop(run_id, lines)

    @abstractmethod
    def journal_drop(self, run_id: str, lines: int | None = None) -> None:
        """Remove a journal; ``lines``: its writer's count of whole turns in it (None: whatever is there)."""

    @abstractmethod
    def claim(self, run_id: str, wait: bool = False):
        """A context manager that makes this process the one writer of ``run_id``: ``RunBusy`` if another writer
        has it, or (``wait``, where the store can tell a live writer) once that writer lets go."""

    @abstractmethod
    def session(self, shared: bool):
        """A writer session: many shared ones at once (writers of different runs), or one exclusive one, whose
        index commits and replacements follow no other writer's commit made since it began."""
