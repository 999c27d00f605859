"""``mem ask``: answer a question from the memory, with the provenance of what the answer used."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import ApiBaseOpt, LogOpt, ModelOpt, TimeoutOpt, fail, out, root_of
from poimen.errors import PoimenError

app = typer.Typer()


@app.command()
def ask(
    question: Optional[str] = typer.Argument(None, help="A question, answered from the index's best lines."),
    query: Optional[str] = typer.Option(None, help="Or: a standing query (its text or id), answered from its final memories."),
    log: Optional[Path] = LogOpt,
    model: Optional[str] = ModelOpt,
    api_base: Optional[str] = ApiBaseOpt,
    timeout: Optional[float] = TimeoutOpt,
    budget: int = typer.Option(2000, "--budget", min=16, help="Token budget of the context a QUESTION is answered from."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object: the answer, the shas it drew on, the model "
                                                       "and the prompt sha (the shape `mem serve --http` returns)."),
) -> None:
    """Answer a question from the memory, with the provenance of what it used.

    Uses a running `mem serve --http` for this log when there is one (the same answer, warm).

    Examples:
      mem ask "how was the 413 on uploads fixed?"      (the context builder over the index `mem run` keeps)
      mem ask --query root-causes                       (a standing query, from its final memories)
    """
    from poimen.index import default_db
    from poimen.cli.readout import print_answer, print_json
    from poimen.serve.client import read

    if (question is None) == (query is None):
        fail("mem ask: give a QUESTION or --query, not both and not neither")
    root = root_of(log)
    params = {"question": question, "query": query, "budget": budget, "model": model, "api_base": api_base,
              "timeout": timeout}
    try:
        shape = read(root, default_db(root), "ask", params)
    except PoimenError as exc:
        fail(exc)
    if as_json:
        print_json(shape)
    else:
        print_answer(out, shape)
