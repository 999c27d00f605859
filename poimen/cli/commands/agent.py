"""``mem remember | blocks | recall | tool | tools | compose | stores``: typed memory from the shell (``mem serve
--mcp`` serves the same tools: ``poimen.cli.commands.serve``).

A thin layer over ``poimen.agent.Memory``: parse options, call, print. The
namespace is ``--ns``, else ``$POIMEN_NAMESPACE``, else ``default``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import (ArchiveOpt, JsonOpt, LogUriOpt as LogOpt, NoIndexOpt, NsOpt, err, fail, follow_log,
                                out, root_of)
from poimen.cli.terminal import print_json_lines

app = typer.Typer()


def open_memory(ns: Optional[str], log: Optional[Path | str], archive: Optional[str] = None):
    """The ``Memory`` of a namespace (``--ns``, else the one ``poimen.settings.namespace`` gives every entry) over
    the log ``--log`` names, a folder or an object store; a refused namespace, log or archive is one error line."""
    from poimen.agent.facade import Memory
    from poimen.agent.stores import MemoryRefused

    root = root_of(log)
    try:
        return Memory(ns, root=root, archive=_archive(archive, root))
    except (MemoryRefused, ValueError, ImportError) as exc:
        fail(exc)


def _archive(spec: Optional[str], root: Path | str):
    from poimen.agent.archive import IndexArchive, load_factory

    if spec:
        return IndexArchive(Path(spec[len("index:"):])) if spec.startswith("index:") else load_factory(spec)
    if not isinstance(root, Path):  # a log on an object store keeps no index beside it
        return None
    try:
        from poimen.index import default_db
    except ImportError:
        return None
    path = Path(default_db(root))
    return IndexArchive(path) if path.exists() else None


def _follow(log: Optional[Path | str], no_index: bool) -> None:
    """After a write: bring an existing index up to date (the store tables), so `mem sql` sees the write."""
    if not no_index and not follow_log(root_of(log), only_if_built=True):
        raise typer.Exit(1)


def say(text: str, to=None) -> None:
    """Memory text verbatim: no rich markup (it holds [store/...] tags), no wrapping."""
    (to or out).print(text, highlight=False, markup=False, soft_wrap=True)


@app.command()
def remember(text: str = typer.Argument(..., help="The item to file."), ns: Optional[str] = NsOpt,
             log: Optional[str] = LogOpt, no_index: bool = NoIndexOpt) -> None:
    """File an item in exactly one typed store and print the store the router chose.

    Example: mem remember --ns dana "Hi, I'm Dana and I prefer email contact."
    """
    from poimen.agent.stores import MemoryRefused

    try:
        r = open_memory(ns, log).remember(text)
    except MemoryRefused as exc:
        fail(exc)
    say(r.store)
    say(f"{r.where} sha:{r.sha[:12]} ({r.route.by}: {r.route.reason})", err)
    _follow(log, no_index)


@app.command()
def blocks(ns: Optional[str] = NsOpt, log: Optional[str] = LogOpt, as_json: bool = JsonOpt) -> None:
    """Print the core blocks (always in context) with their store, version and sha.

    Examples:
      mem blocks --ns dana
      mem blocks --ns dana --json | jq -r 'select(.label == "user_profile") | .text'
    """
    memory = open_memory(ns, log)
    if as_json:
        return print_json_lines({"namespace": memory.namespace, **asdict(b)} for b in memory.blocks().values())
    for b in memory.blocks().values():
        say(f"{b.label} ({b.store}, v{b.version}, sha:{b.sha[:12] or '-'}): {b.text!r}")


@app.command()
def recall(ns: Optional[str] = NsOpt, log: Optional[str] = LogOpt,
           n: int = typer.Option(5, "-n", min=1, help="How many events."),
           page: int = typer.Option(0, min=0, help="0: the newest n; 1: the n before those."),
           as_json: bool = JsonOpt) -> None:
    """Print recent episodic memories, newest first.

    Examples:
      mem recall --ns dana -n 3
      mem recall --ns dana --json | jq -r .sha
    """
    memory = open_memory(ns, log)
    items = memory.recall(n, page)
    if as_json:
        print_json_lines({"namespace": memory.namespace, **asdict(i)} for i in items)
    else:
        for i in items:
            say(f"{i.ts}  sha:{i.sha[:12]}  {i.text}")
    if not items:
        say("no episodic memories", err)


@app.command()
def tool(name: str = typer.Argument(..., help="memory_append, memory_replace, recall, archival_search or remember."),
         json_args: str = typer.Argument("{}", metavar="JSON_ARGS", help="The arguments as a JSON object."),
         ns: Optional[str] = NsOpt, log: Optional[str] = LogOpt, archive: Optional[str] = ArchiveOpt,
         no_index: bool = NoIndexOpt) -> None:
    """Run one memory tool call and print its observation (an error observation and exit 1 for a bad call).

    Example: mem tool --ns dana memory_replace '{"block": "user_profile", "old": "prefers email", "new": "prefers phone"}'
    """
    observation = open_memory(ns, log, archive).call(name, json_args)
    say(observation)
    if observation.startswith("[error]"):
        raise typer.Exit(1)
    _follow(log, no_index)


@app.command()
def tools(fmt: str = typer.Option("openai", "--format", help="openai (tools= list) or mcp (name, inputSchema).")) -> None:
    """Print the memory tools' JSON schemas.

    Example: mem tools --format openai > tools.json
    """
    from poimen.agent.tools import TOOLS, openai_tools

    if fmt == "openai":
        data = openai_tools()
    elif fmt == "mcp":
        data = [{"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]} for t in TOOLS]
    else:
        fail(f"--format {fmt}: expected openai or mcp")
    print(json.dumps(data, indent=2, ensure_ascii=False))


@app.command()
def compose(query: str = typer.Argument(..., help="What the agent is about to answer."),
            ns: Optional[str] = NsOpt, log: Optional[str] = LogOpt, archive: Optional[str] = ArchiveOpt,
            budget: int = typer.Option(1000, min=1, help="Token budget of the context block.")) -> None:
    """Print the context block for a query: core blocks, then the most relevant memories within a budget.

    Example: mem compose --ns dana "refund for ORD-3300 returned after the window"
    """
    ctx = open_memory(ns, log, archive).compose(query, budget)
    say(ctx.text)
    for note in ctx.notes:
        say(f"note: {note}", err)
    say(f"{len(ctx.lines)} lines, {ctx.tokens} tokens (budget {budget}), {len(ctx.dropped)} left out", err)


@app.command("stores")
def stores(action: str = typer.Argument(..., help="rebuild (replay the stores from the log) or import "
                                        "(copy final pipeline memories into --ns)."),
           ns: Optional[str] = NsOpt, log: Optional[str] = LogOpt,
           queries: Optional[Path] = typer.Option(None, help="queries.yaml naming each query's store (import).")) -> None:
    """Rebuild the typed stores from the log, or import pipeline memories into them.

    Example: mem stores rebuild
    """
    memory = open_memory(ns, log)
    if action == "rebuild":
        report = memory.rebuild()
        for store in report.differing:
            say(f"differs after rebuild: {store}", err)
        say(f"{'ok' if report.ok else 'changed'}: {report.events} store writes replayed")
        if not report.ok:
            raise typer.Exit(1)
    elif action == "import":
        from poimen.agent.pipeline import import_pipeline

        for i in import_pipeline(memory, queries):
            say(f"{'skip' if i.skipped else 'add '} {i.level} {i.query_id} -> {i.store} sha:{i.sha[:12]}")
        _follow(log, False)
    else:
        fail(f"stores {action}: expected rebuild or import")
