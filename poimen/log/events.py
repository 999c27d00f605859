"""Frozen event rows and the hash chain that binds them.

``hash = sha256(prev_hash ‖ canonical row)``, where the canonical row is the
event's fields (all but ``prev_hash`` and ``hash``) as byte-stable JSON. Each
run has its own chain, starting from a genesis value derived from its
``run_id``, so runs can be written concurrently and sealed independently;
sealed segments are chained in turn by the log's index.

Two hash schemes, told apart by a run's genesis (so no column changes and a
scheme never mixes within a run):

- scheme 1 (logs written before forgetting existed): the canonical row holds
  the text itself, so removing text breaks the chain;
- scheme 2 (every new run): the canonical row holds ``content_sha`` of the
  ``text`` and of every string inside ``attrs`` instead of the string. A
  forgotten string is replaced by its tombstone ``[forgotten:<sha256>]``, whose
  content sha is the sha256 of the text it replaced, so the row hashes exactly
  as before and ``mem verify`` still passes (``poimen.forget``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from poimen.domain import canonical_json

COLUMNS = (
    "seq", "run_id", "level", "kind", "turn", "sha", "parents", "text",
    "update", "exit", "model_id", "prompt_sha", "attrs", "prev_hash", "hash",
)


SCHEME = 2  # the hash scheme new runs are written in
_GENESIS_TAG = {1: "poimen-run", 2: "poimen-run-v2"}
TOMBSTONE = re.compile(r"\[forgotten:([0-9a-f]{64})\]")


def genesis(run_id: str, scheme: int = SCHEME) -> str:
    return hashlib.sha256(f"{_GENESIS_TAG[scheme]}\x00{run_id}".encode()).hexdigest()


def scheme_of(run_id: str, first_prev_hash: str) -> int | None:
    """The hash scheme of a run, read off its first event's ``prev_hash``; None when it is no genesis of the run."""
    return next((s for s in _GENESIS_TAG if genesis(run_id, s) == first_prev_hash), None)


def tombstone(text: str) -> str:
    """What a forgotten string becomes: it names the sha256 of the text it replaced, and nothing else."""
    return text if not text or is_forgotten(text) else f"[forgotten:{hashlib.sha256(text.encode('utf-8')).hexdigest()}]"


def is_forgotten(text: str) -> bool:
    return bool(text) and TOMBSTONE.fullmatch(text) is not None


def content_sha(text: str) -> str:
    """The sha256 a scheme-2 row hashes in place of a string: of the text, or the one its tombstone names."""
    m = TOMBSTONE.fullmatch(text) if text else None
    return m.group(1) if m else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _content_shas(value: Any) -> Any:
    if isinstance(value, str):
        return content_sha(value)
    if isinstance(value, list):
        return [_content_shas(v) for v in value]
    if isinstance(value, dict):
        return {k: _content_shas(v) for k, v in value.items()}
    return value


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

    def hashed_body(self, scheme: int = SCHEME) -> dict[str, Any]:
        """The row as the chain hashes it: as stored (scheme 1), or with content shas in place of strings (2)."""
        body = self.body()
        if scheme >= 2:
            body["text"] = content_sha(self.text)
            body["attrs"] = canonical_json(_content_shas(json.loads(self.attrs))) if self.attrs else ""
        return body

    def expected_hash(self, scheme: int = SCHEME) -> str:
        body = canonical_json(self.hashed_body(scheme))
        return hashlib.sha256((self.prev_hash + "\n" + body).encode("utf-8")).hexdigest()

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


def place(draft: EventDraft, run_id: str, seq: int, prev_hash: str, scheme: int = SCHEME) -> Event:
    """Put a draft at position ``seq`` of a run's chain after ``prev_hash``, hashed in ``scheme``."""
    unhashed = Event(
        seq=seq, run_id=run_id, level=str(draft.level), kind=str(draft.kind), turn=draft.turn,
        sha=draft.sha, parents=tuple(draft.parents), text=draft.text, update=draft.update,
        exit=draft.exit, model_id=draft.model_id, prompt_sha=draft.prompt_sha,
        attrs=canonical_json(draft.attrs), prev_hash=prev_hash, hash="",
    )
    return replace(unhashed, hash=unhashed.expected_hash(scheme))


def chain(drafts: list[EventDraft], run_id: str, start_seq: int = 0, prev_hash: str | None = None,
          scheme: int = SCHEME) -> list[Event]:
    """Place drafts one after another, continuing a chain (or starting one at the run's genesis in ``scheme``)."""
    prev = prev_hash if prev_hash is not None else genesis(run_id, scheme)
    out = []
    for i, draft in enumerate(drafts):
        event = place(draft, run_id, start_seq + i, prev, scheme)
        out.append(event)
        prev = event.hash
    return out
