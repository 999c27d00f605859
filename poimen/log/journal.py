"""The journal of a live run: its whole turns, one line each, until the run is sealed into a segment.

A turn's events are written together, only after the turn resolves, so a killed run leaves a journal of whole turns
(at worst a torn last line, which ``EventLog.open_run`` cuts off and ``verify`` reports as resumable). On an object
store each turn is an object of its own, put only if absent.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Protocol

from poimen.errors import LogCorrupt, RunForgotten, SessionConflict
from poimen.log.events import SCHEME, Event, EventDraft, chain, genesis, scheme_of
from poimen.log.storage.base import JOURNAL, LogStore


def run_scheme(run_id: str, events: list[Event]) -> int | None:
    """The hash scheme of a run's events (None for no events, or a first event on no genesis of the run)."""
    return scheme_of(run_id, events[0].prev_hash) if events else None


def read_journal(path: Path) -> tuple[list[Event], int, str | None]:
    """Whole turns from a journal file, the byte length they span, and a note if a torn last line was found."""
    return parse_journal(path.read_bytes(), path)


def parse_journal(raw: bytes, path: Path | str) -> tuple[list[Event], int, str | None]:
    """Whole turns from a journal's bytes (see ``read_journal``).

    A bad line anywhere but at the end is corruption, not an interrupted write.
    """
    events: list[Event] = []
    good = 0
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        last = i == len(lines) - 1  # no newline after it: the write did not finish
        try:
            if last:
                raise ValueError("no newline")
            turn = [Event.from_row(row) for row in json.loads(line)]
        except (ValueError, KeyError, TypeError) as exc:
            if last:
                return events, good, f"torn last line at byte {good} ({len(line)} bytes)"
            raise LogCorrupt(f"{path}: line {i + 1} is not a whole turn ({exc})") from exc
        events.extend(turn)
        good += len(line) + 1
    return events, good, None


class SealingLog(Protocol):
    """What a run's journal needs of its log (``store.EventLog``, which opens journals, so this module names what it
    uses instead of importing it): the store, the seal, and the drop of a seal that lost its commit."""

    store: LogStore

    def _seal(self, run_id: str, events: list[Event], fenced: bool = False) -> None: ...

    def _drop_unindexed(self, run_id: str, lines: int | None) -> None: ...


class RunJournal:
    """The live journal of one run, claimed by this writer until it is sealed or closed: append whole turns, then seal."""

    def __init__(self, log: SealingLog, run_id: str, events: list[Event], lines: int = 0,
                 claim: ExitStack | None = None, scheme: int = SCHEME):
        self.log = log
        self.run_id = run_id
        self.events = events
        self.path = log.store.where(f"{JOURNAL}/{run_id}.jsonl")
        self._lines = lines  # whole turns in the journal: on object storage, the next turn's object number
        self._claim = claim or ExitStack()
        # A resumed run continues in the scheme it started in; a new one uses the log's.
        self.scheme = run_scheme(run_id, events) or scheme

    @property
    def resumed(self) -> bool:
        return bool(self.events)

    def _place(self, drafts: list[EventDraft]) -> list[Event]:
        prev = self.events[-1].hash if self.events else genesis(self.run_id, self.scheme)
        return chain(drafts, self.run_id, start_seq=len(self.events), prev_hash=prev, scheme=self.scheme)

    def append(self, drafts: list[EventDraft]) -> list[Event]:
        placed = self._place(drafts)
        line = json.dumps([e.to_row() for e in placed], ensure_ascii=False, separators=(",", ":")) + "\n"
        self.log.store.journal_append(self.run_id, self._lines, line.encode("utf-8"))
        self._lines += 1
        self.events.extend(placed)
        return placed

    def seal(self, drafts: list[EventDraft]) -> list[Event]:
        """Chain the closing events after the journal's, put the immutable segment, commit it to the index, drop the
        journal.

        A run with journaled turns (a loop run) seals its closing events into the segment only: they are derived
        from those turns (a loop's ``run_end`` from its replayed state), so a writer killed while sealing leaves the
        journal a resume reads exactly as before the seal, that resume derives the same closing events, and its
        put replaces the unindexed segment with the same bytes. This saves a journal write (an fsync, or a put on
        object storage) per run. A run with no turn yet (a whole short run, ``append_run``) journals them first:
        its journal is what tells ``verify`` that an unindexed segment is a seal cut short, not a deleted index
        line, and what a resume finishes.
        """
        if self.events and self.events[-1].kind == "run_end":
            # Killed while sealing a run that journaled its closing events: finish that seal, never close it twice.
            closing, whole = [self.events[-1]], self.events
        elif self.events:
            closing = self._place(drafts)
            whole = self.events + closing
        else:
            closing = self.append(drafts)
            whole = self.events
        try:
            self.log._seal(self.run_id, whole, fenced=True)
        except (SessionConflict, RunForgotten):
            # A lost session is redone, under a new run if need be; a run a forget overtook must leave nothing of
            # what it read: its segment and its journal go.
            self.log._drop_unindexed(self.run_id, self._lines)
            self._claim.close()
            raise
        self.events = whole
        self.log.store.journal_retire(self.run_id, self._lines)
        self.close()
        return closing

    def close(self) -> None:
        """Give up the claim; a journal that never got a turn is dropped (there is nothing to resume)."""
        if not self.events:  # only its own turns (none): a run another writer began since is that writer's
            self.log.store.journal_drop(self.run_id, self._lines)
        self._claim.close()

    def discard(self) -> None:
        """The run is sealed already (by another writer): drop whatever journal is left and give up the claim."""
        self.events = []
        self.close()

