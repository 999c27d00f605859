"""Unit projections: memories as lines with their lineage, and every unit the context builder ranks.

``memory_line`` — a memory is a list of lines. Each line of the final memory of
a current L1/L2 run records the turn that first produced it (a diff of the
run's memory versions) and the evidence chunk that turn read. When the line is
verbatim in that chunk (always so for the offline engine, which copies units
whole) the row also carries its character span and the line of the chunk it
starts on; a real model rewrites text, so there the lineage is the turn and its
chunk, and the span is empty (-1). At L2 the chunk is an L1 memory: a line that
L1 memory holds verbatim inherits the L1 line's L0 evidence, and ``via_sha``
keeps the L1 memory in between.

``unit`` — what ``poimen.read.context`` ranks: every unit (``relevance.split_units``)
of every L0 chunk of the current stream runs, of every chunk of the current
reference (R) documents, and every line of the current final memories, each with
its provenance. ``unit_vector`` holds one vector per distinct unit text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poimen.domain import EventKind, Level, sha256_text
from poimen.log import payloads as P
from poimen.index.incidents import card_lines
from poimen.index.schema import Rows
from poimen.index.tool_context import MEMORY_LEVELS, current_memories
from poimen.log.runs import INCIDENT_KIND
from poimen.relevance import Outline, embed_texts, embedding_text, split_units, split_units_under

if TYPE_CHECKING:
    from poimen.index.schema import BuildContext


def _line_of(text: str, start: int) -> int:
    return text.count("\n", 0, start) + 1


def _spans(text: str) -> dict[str, tuple[int, int]]:
    """Unit text -> its first span in ``text`` (a prose unit joins wrapped lines, so it is found as a unit)."""
    out: dict[str, tuple[int, int]] = {}
    for u in split_units(text):
        out.setdefault(u.text, (u.start, u.end))
    return out


def memory_line_rows(ctx: "BuildContext") -> Rows:
    """One row per (final memory, line number) of the current L1 runs, then L2 (which resolve through L1)."""
    current = current_memories(ctx)
    rows: list[dict] = []
    by_text: dict[tuple[str, str], dict] = {}  # (L1 memory sha, line text) -> its row, for L2 lineage
    runs = [r for r in ctx.runs if r.is_loop_run and r.level in MEMORY_LEVELS and r.run_id in ctx.current_runs]
    for run in sorted(runs, key=lambda r: (r.level, r.n)):
        final = run.final_memory_sha
        if not final or current.get(final) is None:
            continue
        if run.kind == INCIDENT_KIND:  # a card says where each of its lines was copied from
            rows.extend({"memory_sha": final, "line_no": c.line_no, "level": run.level, "run_id": run.run_id,
                         "query_id": run.query_id, "store": run.store, "text": c.text, "turn": 1,
                         "evidence_sha": c.evidence_sha, "via_sha": "", "source": c.source, "position": c.position,
                         "span_start": c.span_start, "span_end": c.span_end, "chunk_line": c.chunk_line}
                        for c in card_lines(run))
            continue
        chunk_text: dict[int, tuple[str, str, P.Evidence]] = {}  # turn -> (chunk sha, text, where)
        first: dict[str, tuple[int, str]] = {}  # line -> (turn, chunk sha)
        final_text = ""
        for e in run.events:
            if e.kind == EventKind.EVIDENCE:
                chunk_text[e.turn] = (e.sha, e.text, P.Evidence.from_event(e))
            elif e.kind == EventKind.MEMORY:
                for line in (x.strip() for x in e.text.split("\n")):
                    if line and line not in first:
                        first[line] = (e.turn, e.parents[0] if e.parents else "")
                if e.sha == final:
                    final_text = e.text
        lines = [x.strip() for x in final_text.split("\n") if x.strip()]
        for n, line in enumerate(lines, start=1):
            turn, chunk_sha = first.get(line, (0, ""))
            sha, text, attrs = chunk_text.get(turn, ("", "", P.Evidence()))
            span = _spans(text).get(line)
            start = span[0] if span else -1
            row = {"memory_sha": final, "line_no": n, "level": run.level, "run_id": run.run_id,
                   "query_id": run.query_id, "store": run.store, "text": line,
                   "turn": turn, "evidence_sha": chunk_sha, "via_sha": "", "source": attrs.source,
                   "position": attrs.position, "span_start": start,
                   "span_end": span[1] if span else -1,
                   "chunk_line": _line_of(text, start) if start >= 0 else -1}
            if run.level == Level.L2.value:
                inner = by_text.get((chunk_sha, line))
                if inner:
                    row.update({k: inner[k] for k in ("evidence_sha", "source", "position", "span_start", "span_end",
                                                      "chunk_line")}, via_sha=chunk_sha)
            else:
                by_text[(final, line)] = row
            rows.append(row)
    # A memory final in two runs (same text) is listed once, from its first run.
    seen, out = set(), []
    for row in rows:
        if (row["memory_sha"], row["line_no"]) not in seen:
            seen.add((row["memory_sha"], row["line_no"]))
            out.append(row)
    return out


def unit_rows(ctx: "BuildContext") -> Rows:
    """L0 and R units of current runs' chunks, and every memory line (kind 'memory')."""
    rows: dict[tuple, dict] = {}
    done: set[str] = set()

    def chunks():
        """(event, its units): the recorded streams and documents first, each read in order, so a chunk's units
        stand under the headings its predecessors left open (a runbook section cut over two chunks heads the
        second chunk's units too); runs by id, so a chunk two streams share is read the same way whatever order
        the runs were sealed in. Then the chunks loop runs hold that no record does (a log from before records),
        each read alone: a loop run holds only the chunks its gates opened on, not what stood between them."""
        runs = [r for r in ctx.runs if r.run_id in ctx.current_runs]
        records = [r for r in runs if r.start.run_kind != P.LOOP_KIND]
        for run in sorted(records, key=lambda r: r.run_id):
            outline = Outline()
            for e in run.events:
                if e.kind == EventKind.EVIDENCE and e.level in (Level.L0, Level.R):
                    units, outline = split_units_under(e.text, outline)
                    yield e, units
        for run in runs:
            for e in run.events:
                if run.start.run_kind == P.LOOP_KIND and e.kind == EventKind.EVIDENCE and e.level in (Level.L0, Level.R):
                    yield e, None

    for e, units in chunks():
        if e.sha in done:
            continue
        done.add(e.sha)
        units = split_units(e.text) if units is None else units
        a = P.Evidence.from_event(e)
        for u in units:
            rows[(e.sha, 0, u.start)] = {"owner_sha": e.sha, "line_no": 0, "start": u.start, "kind": "reference" if e.level == Level.R else "evidence",
                         "level": str(e.level), "text": u.text, "text_sha": sha256_text(u.text),
                         "source": a.source, "position": a.position,
                         "chunk_line": _line_of(e.text, u.start), "evidence_sha": e.sha, "query_id": "", "store": "",
                         "heading": u.heading}
    for m in ctx.table("memory_line").to_pylist():
        rows[(m["memory_sha"], m["line_no"], m["span_start"])] = {
            "owner_sha": m["memory_sha"], "line_no": m["line_no"], "start": m["span_start"], "kind": "memory", "level": m["level"],
            "text": m["text"], "text_sha": sha256_text(m["text"]), "source": m["source"], "position": m["position"],
            "chunk_line": m["chunk_line"], "evidence_sha": m["evidence_sha"], "query_id": m["query_id"],
            "store": m["store"], "heading": ""}  # a memory line's heading is its evidence unit's, same text
    return list(rows.values())


def unit_vector_rows(ctx: "BuildContext") -> Rows:
    """One vector per distinct unit text, of its ``embedding_text`` (what the offline gate's scorer embeds too)."""
    texts = {r["text_sha"]: r["text"] for r in ctx.table("unit").to_pylist()}
    shas = sorted(texts)
    keys = sorted({embedding_text(texts[s]) for s in shas})
    by_key = dict(zip(keys, embed_texts(ctx.embedder, keys))) if keys else {}
    vectors = [by_key[embedding_text(texts[s])] for s in shas]
    return [{"text_sha": s, "model_id": ctx.embedder.model_id, "vector": v} for s, v in zip(shas, vectors)]
