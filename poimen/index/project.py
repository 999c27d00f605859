"""The projections: DuckDB tables replayed from the sealed events of the log.

To add a projection, write one function ``rows(ctx) -> list[dict]`` and append
a ``Projection`` to ``PROJECTIONS`` below (its place in the list is its build
order; a later projection may read ``ctx.table(name)`` of an earlier one).
``build_projections`` then creates, fills, hashes, exports and checks it like
every other table; nothing else needs to change. The tool-context projections
(``symptom``, ``failure_signature`` and the ``kind='symptom'`` rows of
``memory_vector``) live in ``tool_context``; the typed stores add their own
tables the same way. A projection may declare the event kinds it ignores
(``Projection.ignores``), so that the index update after ``mem run`` or
``mem remember`` rebuilds only the tables the new runs can change.

Which memories get a text vector: the *final* memory of each *current* run
(the latest sealed run per level, query and stream, in log order), plus every
R chunk of each current reference document. Intermediate memory versions stay
in ``memory`` and ``edge`` for lineage but get no vector: they are drafts of
the final memory and would crowd it out of lookup results; an older run of the
same (query, stream) is superseded by the newer one (a changed source or model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa

from poimen.domain import EventKind, Level, sha256_text
from poimen.index.schema import BuildContext, Projection, Rows, fixed, vector
from poimen.index.stores import STORE_PROJECTIONS
from poimen.index.incidents import incident_line_rows, incident_member_rows, incident_rows
from poimen.index.tool_context import failure_signature_rows, stream_chunks, symptom_rows, symptom_vector_rows
from poimen.index.units import memory_line_rows, unit_rows, unit_vector_rows
from poimen.log import payloads as P
from poimen.relevance.units import headline

S, I, B, D = pa.string(), pa.int64(), pa.bool_(), pa.float64()
LEVEL_ORDER = {"L0": 0, "L1": 1, "L2": 2, "R": 3}


# -- the projections ---------------------------------------------------------

def evidence_rows(ctx: BuildContext) -> Rows:
    """L0 chunks the loop accepted and R chunks: one row per sha, at its first (level, source, position)."""
    best: dict[str, dict] = {}
    for _, e in ctx.events(EventKind.EVIDENCE):
        if e.level not in (Level.L0, Level.R):
            continue  # at L2 the "evidence" is an L1 memory: it lives in `memory`
        a = P.Evidence.from_event(e)
        row = {"sha": e.sha, "level": e.level, "source": a.source, "position": a.position, "tokens": a.chunk_tokens,
               "text": e.text}
        old = best.get(e.sha)
        if old is None or (row["level"], row["source"], row["position"]) < (old["level"], old["source"], old["position"]):
            best[e.sha] = row
    return list(best.values())


def memory_rows(ctx: BuildContext) -> Rows:
    """Every memory version the loop accepted, one row per (sha, run), at its first turn."""
    rows: dict[tuple, dict] = {}
    for run, e in ctx.events(EventKind.MEMORY):
        if (e.sha, run.run_id) in rows:
            continue
        a = P.Memory.from_event(e)
        rows[(e.sha, run.run_id)] = {
            "sha": e.sha, "level": e.level, "query_id": a.query_id or run.query_id, "store": run.store,
            "run_id": run.run_id, "turn": e.turn, "tokens": a.tokens, "text": e.text,
            "final": e.sha == run.final_memory_sha,
        }
    return list(rows.values())


def edge_rows(ctx: BuildContext) -> Rows:
    """Memory → its chunk ('evidence': L0, or an L1 memory at L2) and → the memory it replaced ('previous'); an
    incident's card → every chunk it copies a line from (all 'evidence')."""
    rows = set()
    for run, e in ctx.events(EventKind.MEMORY):
        card = P.Memory.from_event(e).is_card
        for i, parent in enumerate(e.parents):
            rows.add((e.sha, parent, run.run_id, "evidence" if i == 0 or card else "previous"))
    return [dict(zip(("child_sha", "parent_sha", "run_id", "kind"), r)) for r in rows]


def run_rows(ctx: BuildContext) -> Rows:
    rows = []
    for run in ctx.runs:
        if not run.is_loop_run:
            continue
        rows.append({
            "run_id": run.run_id, "level": run.level, "query_id": run.query_id, "query_text": run.query_text,
            "stream_id": run.stream_id, "model_id": run.model_id,
            "prompt_template_sha": run.start.prompt_template_sha or "", "chunks_seen": run.chunks_seen,
            "chunks_used": run.chunks_used, "final_memory_sha": run.final_memory_sha,
            "acceptance_rate": run.acceptance_rate, "log_position": run.n, "current": run.run_id in ctx.current_runs,
        })
    return rows


def gate_rows(ctx: BuildContext) -> Rows:
    """One row per turn: the gate decision (or the parse failure) and where its chunk came from."""
    over = {(run.run_id, e.turn) for run, e in ctx.events(EventKind.BUDGET_EXCEEDED)}
    rows = []
    for run, e in ctx.events(EventKind.GATE, EventKind.PARSE_FAILED):
        a = P.payload(e)
        rows.append({
            "run_id": run.run_id, "turn": e.turn, "kind": e.kind, "chunk_sha": e.sha, "source": a.source,
            "position": a.position, "update": bool(e.update), "exit": e.exit,
            "memory_tokens": a.memory_tokens if e.kind == EventKind.GATE else None, "attempts": a.attempts,
            "budget_exceeded": (run.run_id, e.turn) in over,
        })
    return rows


def lookup_docs(ctx: BuildContext) -> dict[str, tuple[str, str]]:
    """sha -> (level, text) of every distinct text lookup should find (see the module docstring for which).

    Also every chunk of each current L0 stream run, so a source no gate opened on is still found; a chunk
    whose text is a memory's (same sha) is listed once, as that memory.
    """
    docs: dict[str, tuple[str, str]] = {}
    current = ctx.current_runs
    for run, e in ctx.events(EventKind.EVIDENCE):
        if e.level == Level.R and run.run_id in current:
            docs.setdefault(e.sha, (Level.R.value, e.text))
    for sha, text in stream_chunks(ctx).items():
        docs.setdefault(sha, (Level.L0.value, text))
    for run, e in ctx.events(EventKind.MEMORY):
        if run.run_id in current and e.sha == run.final_memory_sha:
            old = docs.get(e.sha)
            if old is None or old[0] in (Level.R, Level.L0) or LEVEL_ORDER[e.level] > LEVEL_ORDER[old[0]]:
                docs[e.sha] = (e.level, e.text)  # a memory that is also final at L2 is listed once, as L2
    return docs


def text_vector_rows(ctx: BuildContext) -> Rows:
    """A 'text' vector per doc of ``lookup_docs``."""
    docs = lookup_docs(ctx)
    shas = sorted(docs)
    vectors = ctx.embedder.embed([docs[s][1] for s in shas]) if shas else []
    model = ctx.embedder.model_id
    return [{"sha": s, "level": docs[s][0], "kind": "text", "model_id": model, "text_sha": s, "vector": v}
            for s, v in zip(shas, vectors)]


def headline_vector_rows(ctx: BuildContext) -> Rows:
    """A 'headline' vector per doc of ``lookup_docs`` that is a titled text (``poimen.relevance.headline``):
    lookup compares a titled query's title with it, a field the body cannot drown."""
    docs = lookup_docs(ctx)
    titles = {sha: title for sha, (_, text) in docs.items() if (title := headline(text))}
    shas = sorted(titles)
    vectors = ctx.embedder.embed([titles[s] for s in shas]) if shas else []
    model = ctx.embedder.model_id
    return [{"sha": s, "level": docs[s][0], "kind": "headline", "model_id": model, "text_sha": sha256_text(titles[s]),
             "vector": v} for s, v in zip(shas, vectors)]


def memory_vector_rows(ctx: BuildContext) -> Rows:
    """The 'text' vectors, a 'headline' vector per titled doc, and a 'symptom' vector per current memory with a
    non-empty projection."""
    return text_vector_rows(ctx) + headline_vector_rows(ctx) + symptom_vector_rows(ctx)


# What the loop, the sources and the symptom projections wrote; no table here reads a typed-store write.
_FROM_RUNS: list[Projection] = [
    Projection("evidence", fixed(("sha", S), ("level", S), ("source", S), ("position", I), ("tokens", I), ("text", S)),
               ("sha",), evidence_rows, "L0 evidence chunks the loop accepted, and R reference chunks"),
    Projection("memory", fixed(("sha", S), ("level", S), ("query_id", S), ("store", S), ("run_id", S), ("turn", I),
                               ("tokens", I), ("text", S), ("final", B)),
               ("sha", "run_id"), memory_rows, "every accepted L1/L2 memory version; final marks a run's last"),
    Projection("edge", fixed(("child_sha", S), ("parent_sha", S), ("run_id", S), ("kind", S)),
               ("child_sha", "parent_sha", "run_id", "kind"), edge_rows, "memory lineage: evidence and previous"),
    Projection("run", fixed(("run_id", S), ("level", S), ("query_id", S), ("query_text", S), ("stream_id", S),
                            ("model_id", S), ("prompt_template_sha", S), ("chunks_seen", I), ("chunks_used", I),
                            ("final_memory_sha", S), ("acceptance_rate", D), ("log_position", I), ("current", B)),
               ("run_id",), run_rows, "one row per sealed run; current marks the latest per (level, query, stream)"),
    Projection("gate", fixed(("run_id", S), ("turn", I), ("kind", S), ("chunk_sha", S), ("source", S),
                             ("position", I), ("update", B), ("exit", B), ("memory_tokens", I), ("attempts", I),
                             ("budget_exceeded", B)),
               ("run_id", "turn"), gate_rows, "the gate timeline: one row per turn"),
    Projection("memory_vector", lambda dim: pa.schema([("sha", S), ("level", S), ("kind", S), ("model_id", S),
                                                       ("text_sha", S), ("vector", vector(dim))]),
               ("sha", "kind", "text_sha"), memory_vector_rows, "embeddings: kind 'text', 'headline' and 'symptom'"),
    Projection("symptom", fixed(("memory_sha", S), ("level", S), ("text", S), ("model_id", S), ("prompt_sha", S)),
               ("memory_sha", "model_id", "prompt_sha"), symptom_rows, "symptoms an accepted memory would explain"),
    Projection("failure_signature", fixed(("key", S), ("kind", S), ("tool", S), ("span", S), ("memory_sha", S),
                                          ("evidence_sha", S), ("streams", I)),
               ("key", "memory_sha", "evidence_sha"), failure_signature_rows,
               "normalised error signatures in L0 chunks → the current memory whose lineage holds it, or the "
               "L0 stream chunk itself; streams: how many streams hold the key"),
    Projection("memory_line", fixed(("memory_sha", S), ("line_no", I), ("level", S), ("run_id", S), ("query_id", S),
                                    ("store", S), ("text", S), ("turn", I), ("evidence_sha", S), ("via_sha", S),
                                    ("source", S), ("position", I), ("span_start", I), ("span_end", I),
                                    ("chunk_line", I)),
               ("memory_sha", "line_no"), memory_line_rows,
               "each line of a current final memory with the turn, evidence chunk and span that introduced it"),
    Projection("unit", fixed(("owner_sha", S), ("line_no", I), ("start", I), ("kind", S), ("level", S), ("text", S),
                             ("text_sha", S), ("source", S), ("position", I), ("chunk_line", I), ("evidence_sha", S),
                             ("query_id", S), ("store", S), ("heading", S)),
               ("owner_sha", "line_no", "start"), unit_rows,
               "what the context builder ranks: L0 and R units of current chunks, and every memory line; heading: "
               "the title of the section an L0/R unit stands in"),
    Projection("unit_vector", lambda dim: pa.schema([("text_sha", S), ("model_id", S), ("vector", vector(dim))]),
               ("text_sha",), unit_vector_rows, "one embedding per distinct unit text"),
    Projection("incident", fixed(("memory_sha", S), ("run_id", S), ("stream_id", S), ("incident", S), ("title", S),
                                 ("summary", S), ("first_time", S), ("last_time", S), ("symptoms", I), ("causes", I),
                                 ("actions", I), ("verifications", I)),
               ("memory_sha",), incident_rows, "one row per current incident card: title, summary, time span"),
    Projection("incident_line", fixed(("memory_sha", S), ("line_no", I), ("role", S), ("text", S), ("text_sha", S),
                                      ("evidence_sha", S), ("source", S), ("position", I), ("span_start", I),
                                      ("span_end", I), ("chunk_line", I)),
               ("memory_sha", "line_no"), incident_line_rows,
               "each line of a current incident card with its role (symptom, cause, action, verification) and "
               "the evidence chunk and span it was copied from"),
    Projection("incident_member", fixed(("memory_sha", S), ("chunk_sha", S), ("line_from", I), ("line_to", I)),
               ("memory_sha", "chunk_sha", "line_from"), incident_member_rows,
               "the chunk lines each current card's whole incident stands on (kept on the card or not), one row per "
               "run of consecutive lines"),
]
STORE_WRITES = frozenset({EventKind.STORE_WRITE.value})

PROJECTIONS: list[Projection] = [*(replace(p, ignores=STORE_WRITES) for p in _FROM_RUNS), *STORE_PROJECTIONS]


def projection(name: str) -> Projection:
    for p in PROJECTIONS:
        if p.name == name:
            return p
    raise KeyError(name)


def table_names(projections: Sequence[Projection] | None = None) -> tuple[str, ...]:
    return tuple(p.name for p in (PROJECTIONS if projections is None else projections))
