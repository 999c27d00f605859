"""Symptom projection: the errors and behaviour an accepted memory would explain, as a second text.

A memory is written as an explanation ("Kong buffered the whole body…");
the question arrives as a symptom ("413 Request Entity Too Large"). Embedding
a symptom projection beside the memory's own text closes that gap at write
time, once per memory, instead of an LLM call on every lookup.

Rules (the card's): only accepted L1 and L2 memories get one — never L0
evidence, R reference docs or rejected chunks; temperature 0 with the pinned
``prompts/symptom.tmpl``, its sha and the model id on the log record; an empty
projection is a valid answer (no vector, no retry); it is a projection of the
log, so a rebuild regenerates it byte for byte.

Which memories: the final memory of every sealed L1/L2 run — the memory the
index serves. Intermediate versions inside a run are superseded by the next
accepted turn and are never returned by lookup, so projecting them would spend
model calls on text nobody can retrieve.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from poimen.domain import EventKind, Level, sha256_json
from poimen.errors import ProjectionError
from poimen.llm.client import ModelClient
from poimen.log import payloads
from poimen.log.events import EventDraft
from poimen.log.forgotten import forgotten
from poimen.log.store import EventLog
from poimen.llm.prompts import load, render, unescape
from poimen.log.runs import loop_runs, read_runs

_SYMPTOMS = re.compile(r"<symptoms>(.*?)</symptoms>", re.S)
MAX_LINES = 12


@dataclass(frozen=True)
class SymptomProjection:
    memory_sha: str
    level: str
    text: str  # one symptom per line; "" when the memory explains no failure
    model_id: str
    prompt_sha: str  # the sha of exactly what the model was sent
    reply: str
    template_sha: str = ""  # the sha of prompts/symptom.tmpl as it was when this was generated


def parse_symptoms(reply: str) -> str:
    """The symptom lines of a reply, normalised (trimmed, de-duplicated, bullets dropped, at most 12).

    A reply without the tags is treated as empty rather than retried: inventing
    symptoms is worse than having none, and a retry loop invites invention.
    """
    m = _SYMPTOMS.search(reply or "")
    if not m:
        return ""
    lines: dict[str, None] = {}
    for raw in unescape(m.group(1)).splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
        if line:
            lines.setdefault(line, None)
    return "\n".join(list(lines)[:MAX_LINES])


async def project(memory_sha: str, level: str, memory_text: str, client: ModelClient) -> SymptomProjection:
    if Level(level) not in (Level.L1, Level.L2):
        raise ProjectionError(f"memory {memory_sha[:16]}: symptom projections are for L1 and L2 memories only, not {level}")
    rendered = render("symptom", memory=memory_text)
    completion = await client.complete(rendered.system, rendered.user, 512)
    return SymptomProjection(memory_sha, Level(level).value, parse_symptoms(completion.text), completion.model_id,
                             rendered.sha, completion.text, rendered.template_sha)


def projection_run_id(memory_sha: str, model_id: str) -> str:
    return sha256_json({"kind": "symptom", "memory": memory_sha, "model": model_id, "prompt": load("symptom").sha})


def draft(p: SymptomProjection) -> EventDraft:
    return EventDraft(kind=EventKind.SYMPTOM, level=p.level, sha=p.memory_sha, parents=(p.memory_sha,), text=p.text,
                      model_id=p.model_id, prompt_sha=p.prompt_sha,
                      attrs=payloads.Symptom(p.reply, len(p.text.splitlines()),
                                             p.template_sha or load("symptom").sha).to_attrs())


async def project_log(log: EventLog, client: ModelClient, concurrency: int = 4) -> dict:
    """Write a symptom event for each sealed L1/L2 run's final memory that has none for this model yet.

    The caller holds ``log.writer()``. Returns counts for materialization metadata.
    """
    sealed = set(log.sealed_run_ids())
    todo, seen = [], set()
    for s in loop_runs(read_runs(log)):
        if s.final_memory and s.level in (Level.L1, Level.L2) and s.final_memory_sha not in seen:
            seen.add(s.final_memory_sha)
            if projection_run_id(s.final_memory_sha, client.model_id) not in sealed:
                todo.append(s)
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(s) -> SymptomProjection:
        async with sem:
            return await project(s.final_memory_sha, s.level, s.final_memory, client)

    # Generated concurrently, appended in log order: the same log gives the same log, run for run.
    written = await asyncio.gather(*(one(s) for s in todo))
    for p in written:
        await asyncio.to_thread(log.append_run, projection_run_id(p.memory_sha, p.model_id), [draft(p)])
    return {"memories": len(seen), "generated": len(written), "skipped": len(seen) - len(written),
            "empty": sum(1 for p in written if not p.text)}


def projections(log: EventLog) -> dict[str, SymptomProjection]:
    """The latest recorded projection per memory sha, read back from the log (what the index embeds)."""
    out: dict[str, SymptomProjection] = {}
    retired = forgotten(log).runs
    for e in log.events():
        if e.kind == EventKind.SYMPTOM and e.run_id not in retired:
            a = payloads.Symptom.from_event(e)
            out[e.sha] = SymptomProjection(e.sha, e.level, e.text, e.model_id, e.prompt_sha, a.reply, a.template_sha)
    return out
