"""What each kind of event carries in its ``attrs``: one frozen class per kind, the only place the field names live.

The writer builds a payload and stores ``to_attrs()``; every reader gets it back
with ``payload(event)`` (or ``Kind.from_event(event)``), so a field is spelled
once and a reader cannot mistype it into a silent default. ``to_attrs`` leaves
out fields that are ``None``: a run over a stream (L0, R) has no gate config,
and logs written before a field existed read back with that field ``None``.
The attrs bytes are the hashed bytes, so a payload writes exactly the dict the
loop always wrote: old logs verify, and a replay reproduces them byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from poimen.domain import EventKind
from poimen.log.events import Event

LOOP_KIND = "loop"  # a gated run (L1/L2); stream (L0) and reference (R) runs record their kind


@dataclass(frozen=True)
class Payload:
    KIND: ClassVar[EventKind]

    def to_attrs(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return {**out.pop("extra", {}), **out}

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]):
        names = {f.name for f in fields(cls)}
        known = {k: _frozen(v) for k, v in attrs.items() if k in names}
        if "extra" in names:
            known["extra"] = {k: v for k, v in attrs.items() if k not in names}
        return cls(**known)

    @classmethod
    def from_event(cls, event: Event):
        if event.kind != cls.KIND:
            raise TypeError(f"event {event.seq} of run {event.run_id[:16]} is {event.kind}, not {cls.KIND}")
        return cls.from_attrs(json.loads(event.attrs) if event.attrs else {})


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class ChunkPlace(Payload):
    """Where a chunk came from: every event about a chunk carries it."""

    source: str = ""
    position: int = 0
    chunk_tokens: int = 0

    @property
    def where(self) -> dict[str, Any]:
        return {"source": self.source, "position": self.position, "chunk_tokens": self.chunk_tokens}

    @property
    def label(self) -> str:
        return f"{self.source}#{self.position}"


@dataclass(frozen=True)
class RunStart(Payload):
    KIND = EventKind.RUN_START
    query_id: str = ""
    query_text: str = ""
    query_sha: str = ""
    store: str = ""
    stream_id: str = ""
    stream_sha: str = ""
    chunks: int = 0
    kind: str | None = None  # 'stream' (L0) or 'reference' (R); a gated run leaves it out
    config: dict | None = None  # the LoopConfig of a gated run
    use_exit_gate: bool | None = None
    prompt_template_sha: str | None = None
    max_tokens: int | None = None  # the chunk bound of a stream or reference run
    constrain: str | None = None  # the constrained-decoding mode of a gated run's requests (poimen.llm.constrain)
    grammar_sha: str | None = None  # the sha of the reply format file those requests carried
    # The chunk bound an L0 stream run, or an L1 run's stream, was cut at: what the rebuild re-chunks with, so a log
    # built at several bounds replays each run at its own. None: not recorded (L2 runs, logs written before it was).
    # Not a run-id input: the chunk shas already name what was read, so runs keep their ids.
    chunk_tokens: int | None = None
    incident: str | None = None  # an incident run: where its incident starts in the stream (its key there)
    cut: str | None = None  # an incident run: the version of the code that cut it (poimen.incidents.version)
    # an incident run cut with its channel's other day files: their (stream id, stream sha) pairs
    read_with: tuple | None = None

    @property
    def run_kind(self) -> str:
        return self.kind or LOOP_KIND

    @property
    def memory_budget(self) -> int:
        return int((self.config or {}).get("memory_budget", 0))


@dataclass(frozen=True)
class Gate(ChunkPlace):
    KIND = EventKind.GATE
    attempts: int = 1
    replies: tuple[str, ...] = ()  # the unparseable replies before the one that parsed
    reasons: tuple[str, ...] = ()
    model_update: bool = False  # what the model said; the event's ``update`` is what the rule accepted
    acted_on_exit: bool = False
    memory_tokens: int = 0
    grammar_sha: str | None = None  # constrained runs only


@dataclass(frozen=True)
class ParseFailed(ChunkPlace):
    KIND = EventKind.PARSE_FAILED
    replies: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    attempts: int = 0
    grammar_sha: str | None = None  # constrained runs only


@dataclass(frozen=True)
class BudgetExceeded(Payload):
    KIND = EventKind.BUDGET_EXCEEDED
    candidate_tokens: int = 0
    budget: int = 0


@dataclass(frozen=True)
class Evidence(ChunkPlace):
    KIND = EventKind.EVIDENCE


@dataclass(frozen=True)
class Memory(Payload):
    """A memory version. An incident's card (``poimen.write.incidents``) also carries, line by line of its text, the
    role each line plays and where it was copied from (``spans``: [index into the event's parents, start, end] in
    that chunk's text), with the title and summary the model wrote, and the chunk lines its whole incident stands on
    (``members``). A loop's memory leaves them out."""

    KIND = EventKind.MEMORY
    tokens: int = 0
    query_id: str = ""
    roles: tuple[str, ...] | None = None
    spans: tuple[tuple[int, int, int], ...] | None = None
    title: str | None = None
    summary: str | None = None
    times: tuple[str, str] | None = None  # a card's first and last record time, as its source wrote them
    # the chunk lines all of a card's incident stands on, kept or not: [chunk sha, first line, last line]
    members: tuple[tuple[str, int, int], ...] | None = None

    @property
    def is_card(self) -> bool:
        return self.roles is not None

    @property
    def line_spans(self) -> tuple[tuple[int, int, int], ...]:
        return tuple(tuple(x) for x in self.spans or ())


@dataclass(frozen=True)
class RunEnd(Payload):
    KIND = EventKind.RUN_END
    chunks_seen: int = 0
    chunks_used: int = 0
    final_memory_sha: str = ""
    stopped_by_exit: bool | None = None  # gated runs only
    parse_failed: int | None = None
    budget_exceeded: int | None = None


@dataclass(frozen=True)
class Symptom(Payload):
    KIND = EventKind.SYMPTOM
    reply: str = ""
    lines: int = 0
    template_sha: str = ""


@dataclass(frozen=True)
class StoreWrite(Payload):
    """A typed-memory write; ``extra`` holds the op's own details (counts, the run a memory came from, …)."""

    KIND = EventKind.STORE_WRITE
    namespace: str = ""
    store: str = ""
    block: str = ""
    op: str = ""
    ts: str = ""
    source_run_id: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Forget(Payload):
    """What one ``mem forget`` removed, when, by whom and why; shas and run ids only, never the forgotten text.

    ``segments`` maps each rewritten segment's run id to its file sha256 before and after (the index keeps the
    first; verify accepts the later because this event vouches for it); ``witnesses`` maps a scheme-1 run id to
    ``{seq: hash of the tombstoned row}`` (a scheme-1 hash covers the text, so it cannot be recomputed without it).
    """

    KIND = EventKind.FORGET
    target: str = ""  # "source:PATH", "ns:NAMESPACE" or "sha:SHA"
    by: str = ""
    reason: str = ""
    ts: str = ""
    shas: tuple[str, ...] = ()  # every content sha whose text was removed (evidence, memories, replies, writes)
    runs: tuple[str, ...] = ()  # runs retired: no longer current, not read by projections; rebuilt without it
    streams: tuple[str, ...] = ()  # sources forgotten whole: no build reads them again, however they are chunked
    segments: dict = field(default_factory=dict)
    witnesses: dict = field(default_factory=dict)
    journals: tuple[str, ...] = ()  # unfinished runs whose journals were dropped


BY_KIND: dict[str, type[Payload]] = {str(cls.KIND): cls for cls in (
    RunStart, Gate, ParseFailed, BudgetExceeded, Evidence, Memory, RunEnd, Symptom, StoreWrite, Forget)}


def payload(event: Event) -> Payload:
    """The typed payload of any event."""
    try:
        cls = BY_KIND[event.kind]
    except KeyError:
        raise TypeError(f"event {event.seq} of run {event.run_id[:16]}: unknown kind {event.kind!r}") from None
    return cls.from_event(event)
