"""The JSON shapes of the read path, spelled once: ``mem lookup/context/ask --json`` and ``mem serve --http`` both
write them, and the CLI reads a server's reply back with them, so a result looks the same however it was made.

Each ``*_shape`` turns a result into plain JSON values and each ``*_from`` rebuilds the result from them without
loss (floats survive a JSON round trip exactly), which is what lets ``mem lookup`` print a server's hits with the
same code, and the same bytes, as hits it found itself.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from poimen.read.context_lines import Context, ContextLine, HitLines, Origin
from poimen.index.hits import Hit, Provenance

Shape = dict[str, Any]


def line_shape(line: ContextLine) -> Shape:
    return {"text": line.text, "score": line.score, "repeats": line.repeats,
            "origins": [asdict(o) for o in line.origins], "variants": list(line.variants)}


def line_from(d: Shape) -> ContextLine:
    return ContextLine(d["text"], d["score"], tuple(Origin(**o) for o in d["origins"]), d["repeats"],
                       tuple(d.get("variants", ())))


def hit_shape(hit: Hit, shown: HitLines | None = None, incident: Shape | None = None) -> Shape:
    """A hit with its provenance; ``lines``: the hit's lines that match best, less those a higher hit shows, and
    ``shown_above``: [hit number, lines] for each higher hit that showed some of them (``ContextEngine.hit_lines``);
    ``lines`` is None when the index has no units. ``incident``: for an incident's card, the card as a lookup shows
    it (``poimen.read.incidents.incident_shape``: its matched symptom, cause, fix and verification, with roles)."""
    shape = {**asdict(hit), "lines": None if shown is None else [line_shape(x) for x in shown.lines],
             "shown_above": [] if shown is None else [list(pair) for pair in shown.shown_above]}
    if incident is not None:
        shape["incident"] = incident
    return shape


def hit_from(d: Shape) -> tuple[Hit, HitLines | None]:
    names = {f.name for f in fields(Hit)}
    kw = {k: v for k, v in d.items() if k in names}
    kw["evidence"] = tuple(Provenance(**p) for p in d["evidence"])
    kw["via"], kw["signature_keys"] = tuple(d.get("via", ())), tuple(d.get("signature_keys", ()))
    kw["ranks"] = tuple(tuple(r) for r in d.get("ranks", ()))
    lines = d.get("lines")
    if lines is None:
        return Hit(**kw), None
    return Hit(**kw), HitLines(tuple(line_from(x) for x in lines), tuple((n, m) for n, m in d["shown_above"]))


def context_shape(ctx: Context) -> Shape:
    """The context's lines with their provenance, and ``text``: the rendered block an agent pastes."""
    return {"question": ctx.question, "budget": ctx.budget, "tokens": ctx.tokens, "text": ctx.render(),
            "lines": [line_shape(x) for x in ctx.lines]}


def context_from(d: Shape) -> Context:
    return Context(d["question"], d["budget"], [line_from(x) for x in d["lines"]], d["tokens"])


def answer_shape(answer, question: str | None = None, query: str | None = None) -> Shape:
    """ψ's answer: its text, the memories and chunks it drew on (best first), the model and the prompt sha."""
    return {"question": question, "query": query, **asdict(answer), "memory_shas": list(answer.memory_shas)}


def answer_from(d: Shape):
    from poimen.read.answer import Answer

    return Answer(d["text"], tuple(d["memory_shas"]), d["model_id"], d["prompt_sha"])
