"""How ``mem lookup``, ``mem context`` and ``mem ask`` print a read's shape: spelled once, for the full CLI and for
the front door (``poimen.cli.front``) that hands a read to a warm ``mem serve --http`` without loading typer.

Both print the shape (``poimen.read.shapes``) the read returned, with the same calls on the same kind of rich console,
so a warm answer and a cold one are the same bytes. ``--json`` output bypasses rich: nothing wraps or styles it.
This module imports neither typer nor rich; the caller passes the console (``console()`` makes the one ``mem`` uses).
"""

from __future__ import annotations

import json
from typing import Any

Shape = dict[str, Any]


def console(stderr: bool = False):
    """The rich console ``mem`` prints through (rich loads here, only when something is printed through it)."""
    from rich.console import Console

    return Console(stderr=stderr)


def print_json(shapes: Shape | list[Shape]) -> None:
    """One JSON object per line: each hit of a lookup, or the one shape of a context or an answer."""
    for shape in shapes if isinstance(shapes, list) else [shapes]:
        print(json.dumps(shape, ensure_ascii=False))


def print_hits(out, shapes: list[Shape], explain: bool) -> None:
    """``mem lookup``: each hit's header, its best lines (else its text), what it came via and its evidence."""
    from poimen.read.shapes import hit_from

    if not shapes:
        out.print("no hits", highlight=False)
        return
    for n, shape in enumerate(shapes, start=1):
        h, shown = hit_from(shape)
        where = f"query {h.query_id} · run {h.run_id[:12]}" if h.kind == "memory" else f"run {h.run_id[:12]}"
        out.print(f"[bold]{n}. {h.level} {h.kind} {h.sha[:12]}[/bold] · {where} · {h.tier} {h.score:.4f}",
                  highlight=False, soft_wrap=True)  # one line a script can split on, at any terminal width
        if shape.get("incident"):  # an incident's card: the matched symptom, the cause, the fix, the verification
            from poimen.read.incidents import render_incident

            for line in render_incident(shape["incident"]):
                out.print("   " + line, highlight=False, markup=False, soft_wrap=True)
        elif shown is not None and (shown.lines or shown.shown_above):
            for line in shown.lines:  # the hit's lines that match: nearest in the stream to the failure, most relevant
                out.print("   " + line.render(), highlight=False, markup=False, soft_wrap=True)
            if shown.shown_above:  # the rest of its best lines are printed under a higher hit
                out.print(f"   ({shown.note()})", highlight=False, markup=False)
        else:  # none, or an index from before the unit projections: the hit's text
            body = h.text if len(h.text) <= 600 else h.text[:600] + "…"
            out.print("   " + body.replace("\n", "\n   "), highlight=False, markup=False, soft_wrap=True)
        if h.via:
            out.print("   via L1 " + ", ".join(v[:12] for v in h.via), highlight=False)
        for p in h.evidence[:8]:
            out.print(f"   evidence {p.source}#{p.position} ({p.sha[:12]})", highlight=False, markup=False)
        if len(h.evidence) > 8:
            out.print(f"   … {len(h.evidence) - 8} more evidence chunks", highlight=False)
        if explain:
            out.print(f"   why: {h.why}", highlight=False, markup=False, soft_wrap=True)


def print_context(out, shape: Shape, budget: int) -> None:
    """``mem context``: the rendered lines, then how many lines and tokens of the budget they take."""
    from poimen.read.shapes import context_from

    ctx = context_from(shape)
    if not ctx.lines:
        out.print("nothing in the index", highlight=False)
        return
    out.print(ctx.render(), highlight=False, markup=False, soft_wrap=True)
    out.print(f"({len(ctx.lines)} lines, {ctx.tokens}/{budget} tokens)", highlight=False)


def print_answer(out, shape: Shape) -> None:
    """``mem ask``: the answer, then what it drew on: for a question one line of the memory and chunk shas behind
    its context (12-character prefixes, which `mem show` takes; ``--json`` has them whole), for a standing query
    each final memory's sha on a line of its own."""
    from poimen.read.shapes import answer_from

    answer = answer_from(shape)
    out.print(answer.text, highlight=False, markup=False, soft_wrap=True)
    if shape.get("question") is not None:
        if answer.memory_shas:
            more = len(answer.memory_shas) - 10
            out.print("from " + " ".join(sha[:12] for sha in answer.memory_shas[:10]) + (f" (+{more})" if more > 0 else ""),
                      highlight=False)
        return
    for sha in answer.memory_shas[:10]:
        out.print(f"memory {sha}", highlight=False)
