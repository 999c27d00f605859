"""The tool-context projections: symptom texts, symptom vectors and failure signatures of current memories.

Which memories: the final memory of each *current* L1/L2 run — the ones
lookup serves (see ``project``). L0 chunks and R chunks never get a symptom
vector: symptom events are only written for L1/L2 memories, and a chunk
reaches a memory's lineage only if a gate accepted it (a memory event's parents
are the chunk it accepted and the memory it replaced).

A signature row points from a signature found in an L0 chunk to a doc lookup
serves. The doc is a memory whose lineage holds the chunk (for an L2 memory the
walk goes through the L1 memories it read down to their L0 chunks, so the next
occurrence of a failure finds both the L1 explanation and the L2 summary that
cites it), or the chunk itself when it belongs to a current L0 stream run
(``poimen.write.reference.record_stream``): every chunk of every source, so a
report whose gate never opened is still found by its own stack trace. Its
``streams`` column counts the distinct streams whose chunks hold the key, the
stream frequency that ``poimen.signatures.specificity`` weighs keys by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poimen.domain import EventKind, Level, sha256_text
from poimen.index.schema import Rows
from poimen.log.payloads import Evidence
from poimen.log.runs import INCIDENT_KIND
from poimen.write.reference import STREAM_KIND
from poimen.signatures import extract_signatures

if TYPE_CHECKING:
    from poimen.index.schema import BuildContext

MEMORY_LEVELS = (Level.L1.value, Level.L2.value)


def current_memories(ctx: "BuildContext") -> dict[str, str]:
    """sha -> level of the final memory of each current L1/L2 run (a memory final at both is L2)."""
    out: dict[str, str] = {}
    for run in ctx.runs:
        if run.is_loop_run and run.level in MEMORY_LEVELS and run.run_id in ctx.current_runs:
            sha = run.final_memory_sha
            if sha and (sha not in out or run.level == Level.L2):
                out[sha] = run.level
    return out


def latest_projections(ctx: "BuildContext") -> dict[tuple[str, str, str], dict]:
    """(memory sha, model id, prompt sha) -> the last symptom event recorded for it, as a row."""
    rows: dict[tuple[str, str, str], dict] = {}
    for _, e in ctx.events(EventKind.SYMPTOM):
        if e.level not in MEMORY_LEVELS:
            continue  # only L1/L2 memories have projections; anything else in the log is ignored
        rows[(e.sha, e.model_id, e.prompt_sha)] = {"memory_sha": e.sha, "level": e.level, "text": e.text,
                                                   "model_id": e.model_id, "prompt_sha": e.prompt_sha}
    return rows


def symptom_rows(ctx: "BuildContext") -> Rows:
    """Every symptom projection the log records (empty ones too: "explains no failure" is an answer)."""
    return list(latest_projections(ctx).values())


def symptom_vector_rows(ctx: "BuildContext") -> Rows:
    """A 'symptom' vector per current memory whose latest projection is non-empty."""
    current = current_memories(ctx)
    latest: dict[str, dict] = {}
    for row in latest_projections(ctx).values():  # in log order: a later model or prompt replaces an earlier one
        if row["memory_sha"] in current:
            latest[row["memory_sha"]] = row
    shas = sorted(s for s, row in latest.items() if row["text"].strip())
    texts = [latest[s]["text"] for s in shas]
    vectors = ctx.embedder.embed(texts) if shas else []
    return [{"sha": s, "level": current[s], "kind": "symptom", "model_id": ctx.embedder.model_id,
             "text_sha": sha256_text(t), "vector": v} for s, t, v in zip(shas, texts, vectors)]


def lineage_evidence(ctx: "BuildContext") -> dict[str, list[str]]:
    """Current memory sha -> the L0 evidence shas in its lineage, sorted (an incident's card is left out: its
    chunks hold other incidents too, and its signatures are its own lines', ``card_signature_rows``)."""
    parents: dict[str, set[str]] = {}
    cards: set[str] = set()
    for run, e in ctx.events(EventKind.MEMORY):
        if run.run_id in ctx.current_runs:
            parents.setdefault(e.sha, set()).update(e.parents)
            if run.kind == INCIDENT_KIND:
                cards.add(e.sha)
    l0 = {sha for _, e in ctx.events(EventKind.EVIDENCE) if e.level == Level.L0 for sha in (e.sha,)}
    out = {}
    for memory in current_memories(ctx):
        if memory in cards:
            continue
        seen, todo = {memory}, [memory]
        while todo:
            for parent in parents.get(todo.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        out[memory] = sorted(seen & l0)
    return out


def stream_chunks(ctx: "BuildContext") -> dict[str, str]:
    """sha -> text of every chunk of each current L0 stream run (every chunk of a source, gate open or not)."""
    out: dict[str, str] = {}
    for run, e in ctx.events(EventKind.EVIDENCE):
        if e.level == Level.L0 and run.run_id in ctx.current_runs and run.kind == STREAM_KIND:
            out.setdefault(e.sha, e.text)
    return out


def failure_signature_rows(ctx: "BuildContext") -> Rows:
    """One row per (signature key, doc, L0 chunk): the doc is a current memory whose lineage holds the chunk,
    or the chunk itself (``memory_sha = evidence_sha``) when it is a chunk of a current L0 stream."""
    texts, sources = {}, {}
    for _, e in ctx.events(EventKind.EVIDENCE):
        if e.level == Level.L0:
            texts[e.sha] = e.text
            sources.setdefault(e.sha, set()).add(Evidence.from_event(e).source)
    links = [(memory, chunk) for memory, chunks in lineage_evidence(ctx).items() for chunk in chunks]
    links += [(chunk, chunk) for chunk in stream_chunks(ctx)]
    found: dict[str, list] = {}
    rows: dict[tuple[str, str, str], dict] = {}
    for doc, chunk in links:
        if chunk not in found:
            found[chunk] = extract_signatures(texts[chunk])
        for sig in found[chunk]:
            rows[(sig.key, doc, chunk)] = {"key": sig.key, "kind": sig.kind, "tool": sig.tool, "span": sig.span,
                                           "memory_sha": doc, "evidence_sha": chunk}
    for card, line in card_signature_lines(ctx):  # a card's signatures are those of its own lines
        for sig in extract_signatures(line.text):
            rows.setdefault((sig.key, card, line.evidence_sha), {
                "key": sig.key, "kind": sig.kind, "tool": sig.tool, "span": sig.span, "memory_sha": card,
                "evidence_sha": line.evidence_sha})
            if line.evidence_sha in texts and line.evidence_sha not in found:
                found[line.evidence_sha] = extract_signatures(texts[line.evidence_sha])
    holders: dict[str, set[str]] = {}
    for chunk, sigs in found.items():
        for sig in sigs:
            holders.setdefault(sig.key, set()).update(sources[chunk])
    for row in rows.values():
        row["streams"] = max(1, len(holders.get(row["key"], ())))
    return list(rows.values())


def card_signature_lines(ctx: "BuildContext"):
    """(card sha, its line) for every line of every current card."""
    from poimen.index.incidents import card_lines, card_runs

    for run in card_runs(ctx):
        for line in card_lines(run):
            yield run.final_memory_sha, line
