"""``mem context``: the lines an agent should read for a question, within a token budget, each with provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import DbOpt, EmbedderOpt, LogOpt, fail, index_embedder, index_paths, out
from poimen.errors import PoimenError

app = typer.Typer()


@app.command()
def context(
    question: str = typer.Argument(..., help="The question, or a raw error message."),
    budget: int = typer.Option(2000, "--budget", min=16, help="Token budget of the context."),
    db: Optional[Path] = DbOpt,
    log: Optional[Path] = LogOpt,
    embedder: Optional[str] = EmbedderOpt,
    as_json: bool = typer.Option(False, "--json", help="One JSON object: the lines with their provenance, and "
                                                       "the rendered text (the shape `mem serve --http` returns)."),
) -> None:
    """Fill BUDGET tokens with the most relevant lines — memory lines, source units, reference units.

    Lines are ranked by the fused relevance scorer over every unit in the index (memories add a prior),
    de-duplicated, and tagged with store/level, sha and source#chunk:line.

    Uses a running `mem serve --http` for this log when there is one (the same lines, warm).

    Example: mem context "how was the 413 on uploads fixed?" --budget 500
    """
    from poimen.cli.readout import print_context, print_json
    from poimen.serve.client import read

    root, db_path = index_paths(log, db)
    try:
        emb = index_embedder(embedder, root) if embedder else None
        shape = read(root, db_path, "context", {"question": question, "budget": budget}, emb)
    except PoimenError as exc:
        fail(exc)
    if as_json:
        print_json(shape)
    else:
        print_context(out, shape, budget)
