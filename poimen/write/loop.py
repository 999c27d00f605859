"""The gated recurrent memory loop (GRU-Mem, Algorithm 1), with the level as a parameter.

    U_t, M̂_t, E_t = φ(Q, C_t, M_{t-1})
    U_t  → M_t = M̂_t          else M_t = M_{t-1}, byte for byte
    E_t  → recorded always; acted on only when use_exit_gate

The loop decides (``decide``: the gate rule, a pure function of the parsed reply, the previous memory and the
config; ``turn_drafts``: the events that record its outcome); a ``TurnSink`` records. A turn's events reach the sink
together and only after the turn has resolved (the model answered and the
rule was applied), so an interrupted run never leaves a memory event without
its gate event. The same function runs L1 (chunks of a source) and L2 (the L1
memories of a query): only ``level`` differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Callable, Protocol

from poimen.domain import Chunk, EventKind, Level, Query, Stream, sha256_json, sha256_text
from poimen.errors import ParseError, PoimenError, SourceChanged
from poimen.write.gate_parser import GateReply, parse_gate_reply
from poimen.llm.client import ModelClient
from poimen.llm.constrain import ReplyFormat, reply_format
from poimen.log import payloads as P
from poimen.log.events import Event, EventDraft
from poimen.llm.prompts import load, render
from poimen.text.tokens import count_tokens


@dataclass(frozen=True)
class LoopConfig:
    memory_budget: int = 1024
    use_exit_gate: bool = False
    max_attempts: int = 3  # one call plus two retries per chunk on unparseable replies
    reply_tokens: int = 0  # 0: the budget plus room for the tags

    @property
    def max_reply_tokens(self) -> int:
        return self.reply_tokens or self.memory_budget + 256


class TurnSink(Protocol):
    events: list[Event]

    def append(self, drafts: list[EventDraft]) -> list[Event]: ...

    def seal(self, drafts: list[EventDraft]) -> list[Event]: ...


class ListSink:
    """Events kept in memory, chained exactly as the log would chain them (tests, dry runs)."""

    def __init__(self, run_id: str = "", events: list[Event] | None = None):
        self.run_id = run_id
        self.events: list[Event] = list(events or [])
        self.sealed = False

    def append(self, drafts: list[EventDraft]) -> list[Event]:
        from poimen.log.events import chain, genesis

        prev = self.events[-1].hash if self.events else genesis(self.run_id)
        placed = chain(drafts, self.run_id, start_seq=len(self.events), prev_hash=prev)
        self.events.extend(placed)
        return placed

    def seal(self, drafts: list[EventDraft]) -> list[Event]:
        placed = self.append(drafts)
        self.sealed = True
        return placed


def gate_format(client: ModelClient) -> ReplyFormat | None:
    """The gate's reply format under the client's constrained-decoding mode (None: free text)."""
    return reply_format("gate", getattr(client, "constrain", None))


def run_id_for(level: Level, query: Query, stream: Stream, cfg: LoopConfig, model_id: str,
               fmt: ReplyFormat | None = None) -> str:
    """A hash of everything that determines a run, so the same inputs name the same run."""
    inputs = {
        "level": str(level), "query": query.sha, "use_exit_gate": query.use_exit_gate or cfg.use_exit_gate,
        "stream": stream.sha, "config": asdict(cfg), "model": model_id, "prompt": load("gate").sha,
    }
    if fmt is not None:  # only when constrained, so unconstrained runs keep their ids
        inputs["reply_format"] = f"{fmt.mode}:{fmt.sha}"
    return sha256_json(inputs)


# The statuses of a run that needs nothing more: sealed now, found sealed, or dropped because a forget overtook it.
FINISHED = ("sealed", "skipped", "forgotten")


@dataclass
class RunOutcome:
    run_id: str
    level: Level
    query_id: str
    stream_id: str
    # "sealed" | "skipped" (already sealed) | "interrupted" (model unavailable) | "unfinished" | "forgotten" (a forget
    # committed while it ran names what it read: dropped, not sealed; nothing to resume)
    status: str
    chunks_seen: int = 0
    chunks_used: int = 0
    final_memory: str = ""
    final_memory_sha: str = ""
    events: list[Event] = field(default_factory=list)
    problem: PoimenError | None = None  # why the run is not sealed (RunInterrupted), for each surface to render
    kind: str = "loop"  # 'incident' for an incident run (``poimen.write.incidents``)

    @property
    def error(self) -> str:
        return str(self.problem) if self.problem else ""


@dataclass(frozen=True)
class Decision:
    """What one turn's gate reply does to the memory (``decide``): the turn's outcome, before anything is recorded."""

    parsed: bool  # False: no reply parsed in the attempts allowed; the memory stands
    asked: bool  # U_t as the model said it
    update: bool  # the memory is replaced by the candidate (U_t said yes and the candidate fits the budget)
    over_budget: bool  # U_t said yes, but the candidate is over the budget: the memory stands
    exit: bool  # E_t as the model said it (recorded whether or not it is acted on)
    stop: bool  # E_t acted on: the loop reads no further chunk (only under the exit gate)
    candidate: str  # the memory the reply proposed ("" when U_t said no)
    candidate_tokens: int  # its tokens (0 when U_t said no)
    memory: str  # M_t: the candidate when ``update``, else M_{t-1} byte for byte
    memory_tokens: int  # M_t's tokens


def decide(reply: GateReply | None, memory: str, memory_tokens: int, cfg: LoopConfig, use_exit_gate: bool) -> Decision:
    """The gate rule of one turn: a parsed reply (None when none parsed), the previous memory and its tokens, and
    the loop's config give M_t and what the turn records. Pure: it reads no chunk, calls no model, records nothing.

    ``use_exit_gate``: whether E_t is acted on (the config's, or the query's own).
    """
    if reply is None:
        return Decision(False, False, False, False, False, False, "", 0, memory, memory_tokens)
    candidate_tokens = count_tokens(reply.memory) if reply.update else 0
    over = reply.update and candidate_tokens > cfg.memory_budget
    accept = reply.update and not over
    return Decision(True, reply.update, accept, over, reply.exit, bool(use_exit_gate and reply.exit),
                    reply.memory if reply.update else "", candidate_tokens,
                    reply.memory if accept else memory, candidate_tokens if accept else memory_tokens)


@dataclass
class _State:
    memory: str = ""
    memory_sha: str = ""
    memory_tokens: int = 0
    turn: int = 0
    used: int = 0
    exited: bool = False
    parse_failures: int = 0
    over_budget: int = 0

    def apply(self, turn: int, d: Decision) -> None:
        """Move to M_t after turn ``turn`` decided ``d``."""
        self.turn = turn
        self.parse_failures += not d.parsed
        self.over_budget += d.over_budget
        if d.update:
            self.memory, self.memory_sha, self.used = d.memory, sha256_text(d.memory), self.used + 1
            self.memory_tokens = d.memory_tokens
        if d.parsed:
            self.exited = d.stop


def _replay(events: list[Event]) -> _State:
    """Fold recorded events back into loop state: resuming needs no model."""
    state = _State()
    for e in events:
        if e.kind in (EventKind.GATE, EventKind.PARSE_FAILED):
            state.turn = e.turn
            if e.kind == EventKind.GATE and e.exit and P.Gate.from_event(e).acted_on_exit:
                state.exited = True
        state.parse_failures += e.kind == EventKind.PARSE_FAILED
        state.over_budget += e.kind == EventKind.BUDGET_EXCEEDED
        if e.kind == EventKind.MEMORY:
            state.memory, state.memory_sha, state.used = e.text, e.sha, state.used + 1
            state.memory_tokens = P.Memory.from_event(e).tokens
    return state


async def _ask(client: ModelClient, rendered, cfg: LoopConfig, kind: str) -> tuple[list[str], list[str], object]:
    """Call until a reply parses or attempts run out. Transport failures propagate: they are not gate decisions."""
    replies, reasons = [], []
    for _ in range(cfg.max_attempts):
        completion = await client.complete(rendered.system, rendered.user, cfg.max_reply_tokens)
        replies.append(completion.text)
        try:
            return replies, reasons, parse_gate_reply(completion.text, rendered, kind)
        except ParseError as exc:
            reasons.append(exc.reason)
    return replies, reasons, None


async def _io(fn, *args):
    """Blocking journal I/O on the running loop's default executor (created per loop, so safe across fork)."""
    return await asyncio.to_thread(fn, *args)


def turn_drafts(d: Decision, chunk: Chunk, replies: list[str], reasons: list[str], common: dict, *, budget: int,
                grammar_sha: str | None, previous_sha: str, query_id: str) -> list[EventDraft]:
    """The events that record one decided turn: its gate (or parse failure), a retained over-budget candidate, and
    for an update the evidence chunk and the new memory (whose parents are the chunk and the previous memory)."""
    where = P.ChunkPlace(chunk.source, chunk.position, chunk.tokens).where
    if not d.parsed:
        return [EventDraft(kind=EventKind.PARSE_FAILED, **common, sha=chunk.sha, text=replies[-1], update=False,
                           attrs=P.ParseFailed(**where, replies=tuple(replies), reasons=tuple(reasons),
                                               attempts=len(replies), grammar_sha=grammar_sha).to_attrs())]
    gate = P.Gate(**where, attempts=len(replies), replies=tuple(replies[:-1]), reasons=tuple(reasons),
                  model_update=d.asked, acted_on_exit=d.stop,
                  grammar_sha=grammar_sha, memory_tokens=d.memory_tokens)
    drafts = [EventDraft(kind=EventKind.GATE, **common, sha=chunk.sha, text=replies[-1], update=d.update, exit=d.exit,
                         attrs=gate.to_attrs())]
    if d.over_budget:
        drafts.append(EventDraft(kind=EventKind.BUDGET_EXCEEDED, **common, sha=sha256_text(d.candidate),
                                 attrs=P.BudgetExceeded(d.candidate_tokens, budget).to_attrs()))
    if d.update:
        parents = (chunk.sha,) + ((previous_sha,) if previous_sha else ())
        drafts.append(EventDraft(kind=EventKind.EVIDENCE, **dict(common, level=str(chunk.level)), sha=chunk.sha,
                                 text=chunk.text, attrs=P.Evidence(**where).to_attrs()))
        drafts.append(EventDraft(kind=EventKind.MEMORY, **common, sha=sha256_text(d.memory), parents=parents,
                                 text=d.memory, attrs=P.Memory(d.memory_tokens, query_id).to_attrs()))
    return drafts


def _run_start(base: dict, query: Query, stream: Stream, cfg: LoopConfig, use_exit: bool,
               fmt: ReplyFormat | None) -> EventDraft:
    return EventDraft(kind=EventKind.RUN_START, **base, attrs=P.RunStart(
        query_id=query.id, query_text=query.text, query_sha=query.sha, store=query.store,
        stream_id=stream.id, stream_sha=stream.sha, chunks=len(stream.chunk_shas),
        config=asdict(cfg), use_exit_gate=use_exit, prompt_template_sha=load("gate").sha,
        constrain=fmt.mode if fmt else None, grammar_sha=fmt.sha if fmt else None,
        chunk_tokens=stream.chunk_tokens,
    ).to_attrs())


def _run_end(base: dict, state: _State) -> EventDraft:
    return EventDraft(kind=EventKind.RUN_END, **base, turn=state.turn, sha=state.memory_sha, text=state.memory,
                      attrs=P.RunEnd(state.turn, state.used, state.memory_sha, state.exited,
                                     state.parse_failures, state.over_budget).to_attrs())


def _skip(chunks: Iterable[Chunk], n: int) -> Iterator[Chunk]:
    it = iter(chunks)
    for _ in range(n):
        next(it, None)
    return it


async def run_loop(
    level: Level,
    query: Query,
    stream: Stream,
    client: ModelClient,
    sink: TurnSink,
    cfg: LoopConfig = LoopConfig(),
    on_turn: Callable[[int, bool, int], None] | None = None,
) -> RunOutcome:
    """Read ``stream`` for ``query`` at ``level``, emitting each resolved turn to ``sink``.

    Resumes from whatever whole turns ``sink`` already holds. ``ModelUnavailable``
    from the client propagates after the last resolved turn is recorded, leaving
    a resumable run.
    """
    level = Level(level)
    use_exit = query.use_exit_gate or cfg.use_exit_gate
    model_id = client.model_id
    fmt = gate_format(client)
    run_id = run_id_for(level, query, stream, cfg, model_id, fmt)
    if not getattr(sink, "run_id", ""):
        sink.run_id = run_id
    elif sink.run_id != run_id:
        raise SourceChanged(stream.id, 0, f"names run {run_id[:16]}, but the journal being resumed is run "
                                          f"{sink.run_id[:16]}")
    base = {"level": str(level), "model_id": model_id}
    # A new run's run_start reaches the journal with its first turn, in one write: a journal of run_start alone
    # held nothing a resume needs (it is re-derived from the same inputs), and on object storage it cost a put.
    opening = [] if sink.events else [_run_start(base, query, stream, cfg, use_exit, fmt)]
    state = _replay(sink.events)
    pending: asyncio.Future | None = None
    closing: list[EventDraft] = []  # the last turn's events, sealed with run_end
    # The loop owns the reader it opens: a source's reader holds its file open, and a loop that stops early (the
    # exit gate, a model or journal error) closes it here rather than leave it to whenever the generator is collected
    # (never promptly once a traceback or a caller still refers to it, and then with a ResourceWarning).
    chunks = _skip(stream.open(), state.turn)
    try:
        for chunk in chunks:
            if state.exited:
                break
            t = state.turn + 1
            if chunk.sha != stream.chunk_shas[t - 1]:
                raise SourceChanged(stream.id, t)
            rendered = render("gate", question=query.text, memory=state.memory, chunk=chunk.text, budget=cfg.memory_budget)
            replies, reasons, reply = await _ask(client, rendered, cfg, fmt.reply_kind if fmt else "tags")
            d = decide(reply, state.memory, state.memory_tokens, cfg, use_exit)
            drafts = turn_drafts(d, chunk, replies, reasons, dict(base, turn=t, prompt_sha=rendered.sha),
                                 budget=cfg.memory_budget, grammar_sha=fmt.sha if fmt else None,
                                 previous_sha=state.memory_sha, query_id=query.id)
            state.apply(t, d)
            if state.exited or t == len(stream.chunk_shas):
                # The last turn goes into the segment with run_end, not into the journal first: the seal follows
                # at once, and a writer killed before it has committed loses only this turn, which the resume asks
                # again, exactly as if the kill had come during its model call. Runs started together end
                # together, so this saves a burst of journal writes (fsyncs, or puts) just when every run seals.
                opening, closing = [], opening + drafts
            else:
                # The journal write (with its fsync) runs off the event loop and overlaps the next turn's model
                # call; turns still reach the journal whole and in order, and a crash loses at most the turn in
                # flight, which resume asks again, exactly as if the crash had come during its model call.
                if pending is not None:
                    await pending
                pending = asyncio.ensure_future(_io(sink.append, opening + drafts))  # off the event loop: a put is a round trip
                opening = []
            if on_turn:
                on_turn(t, d.update, state.memory_tokens)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
        if pending is not None:
            await pending
    await _io(sink.seal, opening + closing + [_run_end(base, state)])
    return RunOutcome(run_id, level, query.id, stream.id, "sealed", state.turn, state.used,
                      state.memory, state.memory_sha, list(sink.events))
