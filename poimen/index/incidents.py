"""The incident projections: every current card with its lines by role, rebuilt from the log.

A card is the final memory of a current incident run (``poimen.write.incidents``): its text is its lines, copied
verbatim from its evidence chunks, and its payload gives each line's role and span. Two tables:

- ``incident``: one row per card: the memory sha, the run, the stream, the incident's key in it, the title and
  summary the model wrote, the first and last record time, how many lines of each role;
- ``incident_line``: one row per card line: its role, text, the evidence chunk and span it was copied from, and
  the chunk's source and position (the file line is found from there, as for any memory line).
- ``incident_member``: the chunk lines the card's whole incident stands on (``members``: the lines the card did not
  keep too), one row per run of consecutive lines: where a raw line of a stream belongs, so a pasted error printed
  on a line no card kept still finds its incident.

All three are projections like every other table: covered by the manifest, rebuilt byte for byte from the log, and
without the runs a forget retired. ``card_lines`` is what ``memory_line`` and ``failure_signature`` read for a
card too, so one rule places a card's line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from poimen.domain import EventKind, sha256_text
from poimen.index.schema import Rows
from poimen.log import payloads as P
from poimen.log.runs import INCIDENT_KIND

if TYPE_CHECKING:
    from poimen.index.schema import BuildContext
    from poimen.log.runs import Run


@dataclass(frozen=True)
class CardLine:
    line_no: int
    role: str
    text: str
    evidence_sha: str
    source: str
    position: int
    span_start: int
    span_end: int
    chunk_line: int


def card_lines(run: "Run") -> list[CardLine]:
    """The lines of an incident run's card, each placed in its evidence chunk; [] for a run without a card."""
    chunks: dict[str, tuple[str, P.Evidence]] = {}
    card = None
    for e in run.events:
        if e.kind == EventKind.EVIDENCE:
            chunks[e.sha] = (e.text, P.Evidence.from_event(e))
        elif e.kind == EventKind.MEMORY and e.sha == run.final_memory_sha:
            card = e
    if card is None:
        return []
    payload = P.Memory.from_event(card)
    out = []
    texts = card.text.split("\n")
    for n, (text, role, (parent, start, end)) in enumerate(zip(texts, payload.roles or (), payload.line_spans), 1):
        sha = card.parents[parent] if 0 <= parent < len(card.parents) else ""
        chunk, where = chunks.get(sha, ("", P.Evidence()))
        out.append(CardLine(n, role, text, sha, where.source, where.position, start, end,
                            chunk.count("\n", 0, start) + 1 if chunk else -1))
    return out


def _card_event(run: "Run"):
    """The memory event that is a carded run's card."""
    return next(e for e in run.events if e.kind == EventKind.MEMORY and e.sha == run.final_memory_sha)


def card_runs(ctx: "BuildContext") -> list["Run"]:
    """The current incident runs that carded an incident, in log order."""
    return [r for r in ctx.runs if r.is_loop_run and r.kind == INCIDENT_KIND and r.run_id in ctx.current_runs
            and r.final_memory_sha]


def incident_rows(ctx: "BuildContext") -> Rows:
    rows: dict[str, dict] = {}
    for run in card_runs(ctx):
        card = _card_event(run)
        payload = P.Memory.from_event(card)
        roles = list(payload.roles or ())
        first, last = tuple(payload.times) if payload.times else ("", "")
        rows.setdefault(card.sha, {
            "memory_sha": card.sha, "run_id": run.run_id, "stream_id": run.stream_id,
            "incident": run.start.incident or "", "title": payload.title or "", "summary": payload.summary or "",
            "first_time": first, "last_time": last, "symptoms": roles.count("symptom"),
            "causes": roles.count("cause"), "actions": roles.count("action"),
            "verifications": roles.count("verification"),
        })
    return list(rows.values())


def incident_line_rows(ctx: "BuildContext") -> Rows:
    rows: dict[tuple[str, int], dict] = {}
    for run in card_runs(ctx):
        for line in card_lines(run):
            rows.setdefault((run.final_memory_sha, line.line_no), {
                "memory_sha": run.final_memory_sha, "line_no": line.line_no, "role": line.role, "text": line.text,
                "text_sha": sha256_text(line.text), "evidence_sha": line.evidence_sha, "source": line.source,
                "position": line.position, "span_start": line.span_start, "span_end": line.span_end,
                "chunk_line": line.chunk_line,
            })
    return list(rows.values())


def incident_member_rows(ctx: "BuildContext") -> Rows:
    rows: dict[tuple[str, str, int], dict] = {}
    for run in card_runs(ctx):
        card = _card_event(run)
        for chunk_sha, first, last in P.Memory.from_event(card).members or ():
            rows.setdefault((card.sha, chunk_sha, int(first)), {
                "memory_sha": card.sha, "chunk_sha": chunk_sha, "line_from": int(first), "line_to": int(last)})
    return list(rows.values())
