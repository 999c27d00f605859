"""Frozen event rows and the hash chain that binds them.

``hash = sha256(prev_hash ‖ canonical row)``, where the canonical row is the
event's fields (all but ``prev_hash`` and ``hash``) as byte-stable JSON. Each
run has its own chain, starting from a genesis value derived from its
``run_id``, so runs can be written concurrently and sealed independently;
sealed segments are chained in turn by the log's index.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from poimen.domain import canonical_json

COLUMNS = (
    "seq", "run_id", "level", "kind", "turn", "sha", "parents", "text",
    "update", "exit", "model_id", "prompt_sha", "attrs", "prev_hash", "hash",
)


def genesis(run_id: str) -> str:
    return hashlib.sha256(f"poimen-run\x00{run_id}".encode()).hexdigest()


@dataclass(frozen=True)
class EventDraft:
    """An event before it is placed in a chain: what the loop decides, nothing the log assigns."""

    kind: str
    level: str
    turn: int = 0
    sha: str = ""
    parents: tuple[str, ...] = ()
    text: str = ""
    update: bool | None = None
    exit: bool | None = None
    model_id: str = ""
    prompt_sha: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    seq: int
    run_id: str
    level: str
    kind: str
    turn: int
    sha: str
    parents: tuple[str, ...]
    text: str
    update: bool | None
    exit: bool | None
    model_id: str
    prompt_sha: str
    attrs: str  # canonical JSON, so the stored bytes are the hashed bytes
    prev_hash: str
    hash: str

    def body(self) -> dict[str, Any]:
        row = self.to_row()
        row.pop("hash")
        row.pop("prev_hash")
        return row

    def expected_hash(self) -> str:
        return hashlib.sha256((self.prev_hash + "\n" + canonical_json(self.body())).encode("utf-8")).hexdigest()

    @property
    def attributes(self) -> dict[str, Any]:
        return json.loads(self.attrs) if self.attrs else {}

    def to_row(self) -> dict[str, Any]:
        # A flat dict by hand: dataclasses.asdict deep-copies and was the largest cost of sealing a run.
        row = {name: getattr(self, name) for name in COLUMNS}
        row["parents"] = list(self.parents)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "Event":
        data = {k: row[k] for k in COLUMNS}
        data["parents"] = tuple(data["parents"] or ())
        data["seq"] = int(data["seq"])
        data["turn"] = int(data["turn"])
        return cls(**data)


def place(draft: EventDraft, run_id: str, seq: int, prev_hash: str) -> Event:
    """Put a draft at position ``seq`` of a run's chain after ``prev_hash``."""
    unhashed = Event(
        seq=seq, run_id=run_id, level=str(draft.level), kind=str(draft.kind), turn=draft.turn,
        sha=draft.sha, parents=tuple(draft.parents), text=draft.text, update=draft.update,
        exit=draft.exit, model_id=draft.model_id, prompt_sha=draft.prompt_sha,
        attrs=canonical_json(draft.attrs), prev_hash=prev_hash, hash="",
    )
    return replace(unhashed, hash=unhashed.expected_hash())


def chain(drafts: list[EventDraft], run_id: str, start_seq: int = 0, prev_hash: str | None = None) -> list[Event]:
    """Place drafts one after another, continuing a chain (or starting one at the run's genesis)."""
    prev = prev_hash if prev_hash is not None else genesis(run_id)
    out = []
    for i, draft in enumerate(drafts):
        event = place(draft, run_id, start_seq + i, prev)
        out.append(event)
        prev = event.hash
    return out
