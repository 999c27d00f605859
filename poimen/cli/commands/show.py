"""``mem show SHA``: the lineage of a memory, line, evidence chunk or store write, as a tree (or one JSON object)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import DbOpt, LogOpt, SourcesOpt, fail, index_paths, out
from poimen.errors import PoimenError

app = typer.Typer()

def rich_tree(node):
    """The display tree (``poimen.read.lineage_tree``) as a rich Tree; memory text is never read as markup."""
    from rich.text import Text
    from rich.tree import Tree

    def label(n):
        text = Text(n.label, style="bold" if n.kind in ("memory", "line", "evidence", "store_write") else "")
        if n.text:
            text.append("\n" + n.text, style="dim")
        return text

    def add(parent, n):
        branch = parent.add(label(n))
        for child in n.children:
            add(branch, child)

    root = Tree(label(node))
    for child in node.children:
        add(root, child)
    return root


@app.command()
def show(
    sha: str = typer.Argument(..., help="A memory, memory line, evidence or store-write sha, or a unique prefix."),
    log: Optional[Path] = LogOpt,
    db: Optional[Path] = DbOpt,
    sources: Optional[list[Path]] = SourcesOpt,
    kind: Optional[str] = typer.Option(None, "--kind", help="memory, line, evidence or store_write: which node "
                                                             "a sha names when it names several (a one-line "
                                                             "memory is also its line)."),
    as_json: bool = typer.Option(False, "--json", help="The same lineage as one JSON object."),
) -> None:
    """Show where a memory came from: its lines, the turn and gate behind each, the evidence chunk and unit,
    and the source file with its line numbers. Shas in the tree are prefixes `mem show` accepts.

    Examples:
      mem show 95c6fa31
      mem show 95c6fa31 --sources examples/sources --json
    """
    from dataclasses import asdict

    from poimen.read.lineage import lineage
    from poimen.read.lineage_tree import tree
    from poimen.inputs.source_lines import SourceFinder, default_roots, noted_readings_of

    log_root, db_path = index_paths(log, db)
    try:
        roots = list(sources) if sources else default_roots(log_root)
        lin = lineage(db_path, sha, SourceFinder(roots, noted_readings_of(log_root)), kind)
    except PoimenError as exc:
        fail(exc)
    if as_json:
        print(json.dumps(asdict(lin), ensure_ascii=False))
        return
    out.print(rich_tree(tree(lin)), highlight=False)
