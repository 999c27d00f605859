"""Incident runs: the card of every incident of a stream, one model call each, recorded in the log.

An on-call memory is made of incidents, not lines. Each incident of an L1 stream (``incident_plan``) is shown to
the model with the pinned ``prompts/incident.tmpl`` (the offline engine answers it by extraction), and the reply
says which lines are the symptom, the cause, the fix and the verification. The run records, in one sealed write
(``EventLog.append_run``; the run is one call, so there is no turn to resume):

- ``run_start`` (kind ``incident``, the standing query ``incidents``, the stream, the incident's key);
- a ``gate`` event: the model's reply as text, ``update`` true when the reply is a card (it names a symptom) —
  or ``parse_failed`` after ``MAX_ATTEMPTS`` unparseable replies, which writes no card and is never defaulted;
- for a card: an ``evidence`` event per L0 chunk holding one of its lines, then the card as an L1 ``memory``: its
  text is the chosen lines, copied verbatim, symptoms first, then causes, actions and verifications; its parents
  are those chunks; its payload gives each line's role and its span in its chunk, the title and summary, and the
  chunk lines the whole incident stands on (``members``: where a raw line the card did not keep belongs);
- ``run_end``.

The run id hashes what determines the run (the plan's lines and places, the model, the prompt, the reply format):
the same stream read again writes nothing. The card's lines are the memory's lines, so symptom projections,
failure signatures, the index's lines and lineage all take a card as they take a loop's memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from poimen.domain import EventKind, Level, Query, sha256_json, sha256_text
from poimen.errors import ModelUnavailable, ParseError, PoimenError, RunForgotten, RunInterrupted
from poimen.incidents.version import cut_version
from poimen.llm.client import ModelClient
from poimen.llm.constrain import ReplyFormat, reply_format
from poimen.llm.incident_reply import ROLE_TAGS, IncidentReply, parse_incident_reply
from poimen.llm.prompts import load, render
from poimen.log import payloads as P
from poimen.log.events import EventDraft
from poimen.log.runs import INCIDENT_KIND
from poimen.log.store import EventLog
from poimen.text.tokens import count_tokens
from poimen.write.incident_plan import IncidentPlan
from poimen.write.loop import RunOutcome

INCIDENT_QUERY = Query(id="incidents", text="What failed, what caused it, and how was it fixed?", store="episodic")
MAX_ATTEMPTS = 3
REPLY_TOKENS = 1024
# The most lines of each role a card keeps from a reply (a model that marks every line a symptom says nothing): the
# three distinct errors ``poimen.incidents.card`` keeps and the two lines of what people said they saw beside them
# (``card.SAID``; it kept 3, so a card of three printed errors lost the words a question is asked in).
ROLE_LIMITS = {"symptom": 5, "cause": 3, "action": 5, "verification": 2}


def incident_format(client: ModelClient) -> ReplyFormat | None:
    return reply_format("incident", getattr(client, "constrain", None))


def incident_run_id(plan: IncidentPlan, model_id: str, fmt: ReplyFormat | None = None) -> str:
    inputs = {"kind": INCIDENT_KIND, "plan": plan.sha, "model": model_id, "prompt": load("incident").sha,
              "cut": cut_version()}
    if fmt is not None:
        inputs["reply_format"] = f"{fmt.mode}:{fmt.sha}"
    return sha256_json(inputs)


@dataclass(frozen=True)
class CardDraft:
    """The card a reply makes of a plan: its lines (indexes into ``plan.lines``) with their roles, in render order."""

    lines: tuple[tuple[int, str], ...]
    title: str
    summary: str

    def text(self, plan: IncidentPlan) -> str:
        return "\n".join(plan.lines[i].line.text for i, _ in self.lines)


def card_of(plan: IncidentPlan, reply: IncidentReply) -> CardDraft | None:
    """The card a parsed reply makes: each role's lines in stream order (up to ``ROLE_LIMITS``), a text said twice
    kept once; None when the reply names no symptom (no incident here)."""
    if not reply.is_incident:
        return None
    chosen: list[tuple[int, str]] = []
    seen: set[str] = set()
    for role in ROLE_TAGS:
        for n in reply.lines(role)[:ROLE_LIMITS[role]]:
            text = plan.lines[n - 1].line.text
            if text not in seen:
                seen.add(text)
                chosen.append((n - 1, role))
    return CardDraft(tuple(chosen), reply.title, reply.summary)


def drafts_for(plan: IncidentPlan, query: Query, model_id: str, prompt_sha: str, replies: list[str],
               reasons: list[str], reply: IncidentReply | None, fmt: ReplyFormat | None) -> list[EventDraft]:
    """The run's events, from the plan and what the model answered."""
    base = {"level": Level.L1.value, "model_id": model_id}
    first = plan.chunks[plan.lines[0].chunk]
    where = P.ChunkPlace(first.source, first.position, first.tokens).where
    grammar = fmt.sha if fmt else None
    used = sorted({plan.lines[i].chunk for i in range(len(plan.lines))})
    drafts = [EventDraft(kind=EventKind.RUN_START, **base, attrs=P.RunStart(
        query_id=query.id, query_text=query.text, query_sha=query.sha, store=query.store, stream_id=plan.stream_id,
        stream_sha=plan.stream_sha, chunks=len(used), kind=INCIDENT_KIND, prompt_template_sha=load("incident").sha,
        constrain=fmt.mode if fmt else None, grammar_sha=grammar, chunk_tokens=plan.chunk_tokens,
        incident=plan.key, cut=cut_version(), read_with=plan.read_with or None).to_attrs())]
    common = dict(base, turn=1, prompt_sha=prompt_sha)
    if reply is None:
        drafts.append(EventDraft(kind=EventKind.PARSE_FAILED, **common, sha=plan.sha, text=replies[-1], update=False,
                                 attrs=P.ParseFailed(**where, replies=tuple(replies), reasons=tuple(reasons),
                                                     attempts=len(replies), grammar_sha=grammar).to_attrs()))
        return drafts + [_end(base, 0, "", "", parse_failed=1)]
    card = card_of(plan, reply)
    text = card.text(plan) if card else ""
    tokens = count_tokens(text) if card else 0
    drafts.append(EventDraft(kind=EventKind.GATE, **common, sha=plan.sha, text=replies[-1], update=card is not None,
                             attrs=P.Gate(**where, attempts=len(replies), replies=tuple(replies[:-1]),
                                          reasons=tuple(reasons), model_update=card is not None, memory_tokens=tokens,
                                          grammar_sha=grammar).to_attrs()))
    if card is None:
        return drafts + [_end(base, 0, "", "")]
    held = sorted({plan.lines[i].chunk for i, _ in card.lines})
    parent = {ci: k for k, ci in enumerate(held)}
    for ci in held:
        c = plan.chunks[ci]
        drafts.append(EventDraft(kind=EventKind.EVIDENCE, **dict(common, level=str(c.level)), sha=c.sha, text=c.text,
                                 attrs=P.Evidence(c.source, c.position, c.tokens).to_attrs()))
    sha = sha256_text(text)
    drafts.append(EventDraft(kind=EventKind.MEMORY, **common, sha=sha, parents=tuple(plan.chunks[ci].sha for ci in held),
                             text=text, attrs=P.Memory(
                                 tokens, query.id, roles=tuple(role for _, role in card.lines),
                                 spans=tuple((parent[plan.lines[i].chunk], plan.lines[i].start, plan.lines[i].end)
                                             for i, _ in card.lines),
                                 title=card.title, summary=card.summary, times=_times(plan),
                                 members=plan.members).to_attrs()))
    return drafts + [_end(base, 1, sha, text)]


def _times(plan: IncidentPlan) -> tuple[str, str] | None:
    """The incident's first and last record time (by when they happened where the times compare), as written."""
    from poimen.incidents.times import seconds

    timed = sorted((t, p.line.record.time) for p in plan.lines if p.line.record.time
                   and (t := seconds(p.line.record.time)) is not None)
    return (timed[0][1], timed[-1][1]) if timed else None


def _end(base: dict, used: int, sha: str, text: str, parse_failed: int = 0) -> EventDraft:
    return EventDraft(kind=EventKind.RUN_END, **base, turn=1, sha=sha, text=text,
                      attrs=P.RunEnd(1, used, sha, False, parse_failed, 0).to_attrs())


async def ask(client: ModelClient, plan: IncidentPlan, fmt: ReplyFormat | None):
    """(prompt sha, replies, parse-failure reasons, the parsed reply or None after ``MAX_ATTEMPTS``)."""
    rendered = render("incident", incident=plan.prompt_text)
    replies, reasons = [], []
    for _ in range(MAX_ATTEMPTS):
        completion = await client.complete(rendered.system, rendered.user, REPLY_TOKENS)
        replies.append(completion.text)
        try:
            return rendered.sha, replies, reasons, parse_incident_reply(completion.text, len(plan.lines),
                                                                         fmt.reply_kind if fmt else "tags")
        except ParseError as exc:
            reasons.append(exc.reason)
    return rendered.sha, replies, reasons, None


async def run_incidents(log: EventLog, plans: Sequence[IncidentPlan], client: ModelClient, concurrency: int = 4,
                        sealed: set[str] | None = None,
                        on_done: Callable[[IncidentPlan, RunOutcome], None] | None = None) -> list[RunOutcome]:
    """One run per plan (the caller holds ``log.writer()``): sealed ones are skipped; a model that stops answering
    leaves its runs unwritten, to be asked again by the next build."""
    fmt = incident_format(client)
    sem = asyncio.Semaphore(max(1, concurrency))
    sealed = set(log.sealed_run_ids()) if sealed is None else sealed
    query = INCIDENT_QUERY

    async def one(plan: IncidentPlan) -> RunOutcome:
        run_id = incident_run_id(plan, client.model_id, fmt)
        outcome = RunOutcome(run_id, Level.L1, query.id, plan.stream_id, "skipped", kind=INCIDENT_KIND)
        if run_id in sealed:
            end = log.run_events(run_id)[-1]
            outcome.chunks_seen, outcome.chunks_used = 1, int(bool(end.sha))
            outcome.final_memory, outcome.final_memory_sha = end.text, end.sha
            return outcome
        async with sem:
            try:
                prompt_sha, replies, reasons, reply = await ask(client, plan, fmt)
            except ModelUnavailable as exc:
                outcome.status = "interrupted"
                outcome.problem = RunInterrupted(run_id, query.id, plan.stream_id, 0, str(exc))
                return outcome
        drafts = drafts_for(plan, query, client.model_id, prompt_sha, replies, reasons, reply, fmt)
        try:
            events = await asyncio.to_thread(log.append_run, run_id, drafts)
        except RunForgotten as exc:
            outcome.status, outcome.problem = "forgotten", exc
            return outcome
        except PoimenError as exc:
            outcome.status, outcome.problem = "unfinished", exc
            return outcome
        sealed.add(run_id)
        end = events[-1]
        outcome.status, outcome.events = "sealed", list(events)
        outcome.chunks_seen, outcome.chunks_used = 1, int(bool(end.sha))
        outcome.final_memory, outcome.final_memory_sha = end.text, end.sha
        if on_done:
            on_done(plan, outcome)
        return outcome

    return list(await asyncio.gather(*(one(p) for p in plans)))


def stream_plans(streams: Sequence, paths: dict, reading, gone_streams: frozenset[str] = frozenset(),
                 gone_shas: frozenset[str] = frozenset()) -> tuple[list[IncidentPlan], list[str]]:
    """The incident plans of L1 streams whose source files are known (stream id -> path), and one error line per
    source that could not be read again: the records are read from the source the stream's chunks were cut from,
    with the same reading, and a chunk ``mem forget`` removed is no evidence (its lines are left out). The day files
    of one channel read at one chunk bound are cut together (``incident_plan.channels``)."""
    from poimen.errors import SourceError
    from poimen.inputs.chunking import records
    from poimen.write.incident_plan import StreamRead, channels, plan_incidents

    read: dict[tuple[str, int | None], StreamRead] = {}
    errors = []
    for stream in streams:
        path = paths.get(stream.id)
        if path is None or stream.id in gone_streams:
            continue
        try:
            chunks = [c for c in stream.open() if c.sha not in gone_shas]
            found = list(records(path, stream.chunk_tokens or 5000, reading.format_for(stream.id), reading.fields))
        except (SourceError, OSError) as exc:
            errors.append(f"{path}: incidents not read: {exc}")
            continue
        read[(stream.id, stream.chunk_tokens)] = StreamRead(stream.id, stream.sha, found, chunks)
    group_of = {(sid, bound): tuple(group) for bound in {b for _, b in read}
                for group in channels([sid for sid, b in read if b == bound]) for sid in group}
    plans, done = [], set()
    for sid, bound in read:  # in the order given, a channel where its first day file was given
        group = group_of[(sid, bound)]
        if (group, bound) not in done:
            done.add((group, bound))
            plans.extend(plan_incidents([read[(s, bound)] for s in group], bound))
    return plans, errors
