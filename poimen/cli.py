"""``mem``: poimen from the command line. A thin layer: parse options, call the core, print.

User errors print one line to stderr and exit 1; nothing prints a traceback
for a bad input.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from poimen.errors import PoimenError

app = typer.Typer(help="poimen: gated memory over long streams, with evidence.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
log_app = typer.Typer(help="Read the event log.", no_args_is_help=True)
app.add_typer(log_app, name="log")
out = Console()
err = Console(stderr=True)

LogOpt = typer.Option(None, "--log", help="Event log folder (default: $POIMEN_HOME or ./.poimen).")
LogUriOpt = typer.Option(None, "--log", help="Event log folder or URI (file://, s3://bucket/prefix; default: "
                         "$POIMEN_HOME or ./.poimen).")
ModelOpt = typer.Option(None, help="litellm model string (default: $POIMEN_MODEL, else poimen/extractive).")
ApiBaseOpt = typer.Option(None, help="API base URL of an OpenAI-compatible server (default: $POIMEN_API_BASE); "
                                    "a server on 127.0.0.1 needs no API key.")
TimeoutOpt = typer.Option(None, min=0.001, help="Seconds a model call may take (default: $POIMEN_TIMEOUT, else 600, "
                                                "sized for a local model on CPU).")
ConstrainOpt = typer.Option(None, help="Constrained decoding of gate replies (default: $POIMEN_CONSTRAIN, else none): "
                                       "llamacpp (extra_body.grammar), vllm (guided_grammar), vllm-json (guided_json), "
                                       "openai (structured outputs).")


def _root(log: Optional[Path | str]) -> Path | str:
    """The log root: a folder, or a URI (``file://``, ``s3://``) kept as written."""
    from poimen.log.store import default_root

    if log and "://" in str(log):
        return str(log)
    return Path(log) if log else default_root()


def _hint(exc: BaseException) -> str:
    """What to do next, in this surface's words (the core's errors carry data, not CLI advice)."""
    from poimen.errors import IndexMissing, NoRuns, RunInterrupted, SourceChanged

    hints = {IndexMissing: "build it with `mem rebuild --from-log` (add --accept when the tables changed on purpose)",
             RunInterrupted: "rerun with --resume", NoRuns: "run `mem run` first (and `mem rebuild --from-log`)",
             SourceChanged: "rerun without --resume: a changed source is a new run"}
    return next((h for kind, h in hints.items() if isinstance(exc, kind)), "")


def explain(exc: BaseException) -> str:
    """An error as one line: its message, then the hint for it on the command line."""
    hint = _hint(exc)
    return f"{exc}; {hint}" if hint else str(exc)


def fail(message: str | BaseException) -> None:
    text = explain(message) if isinstance(message, BaseException) else message
    err.print(f"[red]error:[/red] {text}", highlight=False, soft_wrap=True)
    raise typer.Exit(1)


@app.command()
def run(
    sources: list[Path] = typer.Argument(None, help="Source files (.md .txt .log .jsonl); none at --level L2."),
    log: Optional[str] = LogUriOpt,
    model: Optional[str] = ModelOpt,
    api_base: Optional[str] = ApiBaseOpt,
    timeout: Optional[float] = TimeoutOpt,
    constrain: Optional[str] = ConstrainOpt,
    query: Optional[str] = typer.Option(None, help="One standing query, as text."),
    queries: Optional[Path] = typer.Option(None, help="queries.yaml with the standing queries."),
    level: str = typer.Option("L1", help="L1 reads sources; L2 reads the L1 memories of each query."),
    use_exit_gate: bool = typer.Option(False, "--use-exit-gate", help="Stop a run when the model signals it has enough."),
    resume: bool = typer.Option(False, "--resume", help="Continue runs that were interrupted."),
    concurrency: int = typer.Option(4, min=1, help="Runs in flight at once."),
    max_tokens: int = typer.Option(5000, "--chunk-tokens", min=16, envvar="POIMEN_CHUNK_TOKENS", help="Token bound per chunk."),
    memory_budget: int = typer.Option(1024, min=16, help="Token budget of a memory."),
) -> None:
    """Read sources with the gated loop and record every turn in the event log.

    Examples:
      mem run --queries examples/queries.yaml examples/sources/*
      mem run --model openai/SmolLM2-135M-Instruct.Q4_1 --api-base http://127.0.0.1:8080/v1 --constrain llamacpp ...
    """
    from poimen.core import RunRequest, run_loops

    if bool(query) == bool(queries):
        fail("give exactly one of --query TEXT or --queries FILE")
    if level not in ("L1", "L2"):
        fail(f"--level {level}: expected L1 or L2")
    req = RunRequest(root=_root(log), sources=list(sources or []), query=query, queries=queries, level=level,
                     model=model, api_base=api_base, timeout=timeout, constrain=constrain, use_exit_gate=use_exit_gate, resume=resume,
                     concurrency=concurrency, chunk_tokens=max_tokens, memory_budget=memory_budget)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False, disable=not err.is_terminal) as progress:
        task = progress.add_task("reading", total=None)
        stats = {"opened": 0, "tokens": 0}

        def on_start(total: int) -> None:
            progress.update(task, total=total)

        def on_turn(_plan, _t: int, opened: bool, memory_tokens: int) -> None:
            stats["opened"] += opened
            stats["tokens"] = max(stats["tokens"], memory_tokens)
            progress.update(task, advance=1, description=f"chunks read · gates opened {stats['opened']} · memory ≤{stats['tokens']} tok")

        try:
            result = run_loops(req, on_start=on_start, on_turn=on_turn)
        except PoimenError as exc:
            fail(exc)
    if level == "L2" and not result.outcomes:
        from poimen.errors import NoRuns

        fail(NoRuns(f"--level L2: no sealed L1 memory of {'these queries' if queries else 'this query'} in "
                    f"{_root(log)} to read"))
    for line in result.source_errors:
        err.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
    table = Table("run", "level", "query", "stream", "status", "seen", "used", "memory sha")
    for o in result.outcomes:
        table.add_row(o.run_id[:12], str(o.level), o.query_id, o.stream_id, o.status, str(o.chunks_seen),
                      str(o.chunks_used), o.final_memory_sha[:12])
    out.print(table)
    for o in result.outcomes:
        if o.problem:
            err.print(f"[red]error:[/red] {explain(o.problem)}", highlight=False, soft_wrap=True)
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def verify(log: Optional[str] = LogUriOpt) -> None:
    """Check the hash chains, parents, shas and that every run is sealed or resumable.

    Example: mem verify --log .poimen
    """
    from poimen.log.verify import verify as run_verify

    report = run_verify(_root(log))
    for note in report.notes:
        out.print(f"note: {note}", highlight=False)
    if not report.ok:
        fail(f"verify failed: {report.first}")
    out.print(f"ok: {report.sealed_runs} sealed runs, {report.resumable_runs} resumable, {report.events} events", highlight=False)


@log_app.command("show")
def log_show(log: Optional[str] = LogUriOpt, run_id: Optional[str] = typer.Option(None, "--run", help="Run id or unique prefix.")) -> None:
    """List runs, or show one run turn by turn: gate, exit flag, memory tokens, parse failures.

    Example: mem log show --run 3fa2
    """
    from poimen.log.store import EventLog
    from poimen.log.payloads import RunStart
    from poimen.log.runs import loop_runs, read_runs
    from poimen.timeline import resolve_run, turn_rows

    elog = EventLog(_root(log))
    try:
        if not run_id:
            table = Table("run", "level", "query", "stream", "seen", "used", "final memory")
            for s in loop_runs(read_runs(elog)):
                table.add_row(s.run_id[:12], s.level, s.query_id, s.stream_id, str(s.chunks_seen), str(s.chunks_used),
                              s.final_memory_sha[:12] or "-")
            for p in elog.journals():
                table.add_row(p.stem[:12], "", "", "", "", "", "(unfinished)")
            out.print(table)
            return
        rid = resolve_run(elog, run_id)
        events = elog.run_events(rid) if elog.is_sealed(rid) else elog.journal_events(rid)
    except PoimenError as exc:
        fail(exc)
    start = RunStart.from_event(events[0])
    out.print(f"run {rid}\nlevel {events[0].level} · query {start.query_id}: {start.query_text}\n"
              f"stream {start.stream_id} · model {events[0].model_id} · template sha {(start.prompt_template_sha or '')[:12]}"
              + (f" · {start.constrain} grammar sha {start.grammar_sha[:12]}" if start.grammar_sha else ""),
              highlight=False)
    table = Table("turn", "chunk", "gate", "exit", "memory tok", "note")
    for r in turn_rows(events):
        table.add_row(str(r["turn"]), r["chunk"], r["gate"], r["exit"], str(r["memory_tokens"]), r["note"])
    out.print(table)
    if events[-1].kind == "run_end":
        out.print(f"run_end: {events[-1].attributes}", highlight=False)


@app.command()
def ask(
    question: Optional[str] = typer.Argument(None, help="A question, answered from the index's best lines."),
    query: Optional[str] = typer.Option(None, help="Or: a standing query (its text or id), answered from its final memories."),
    log: Optional[Path] = LogOpt,
    model: Optional[str] = ModelOpt,
    api_base: Optional[str] = ApiBaseOpt,
    timeout: Optional[float] = TimeoutOpt,
    budget: int = typer.Option(2000, "--budget", min=16, help="Token budget of the context a QUESTION is answered from."),
) -> None:
    """Answer a question from the memory, with the provenance of what it used.

    Examples:
      mem ask "how was the 413 on uploads fixed?"      (the context builder over the index: run `mem rebuild` first)
      mem ask --query root-causes                       (a standing query, from its final memories)
    """
    from poimen.answer import answer_question
    from poimen.answer import ask as run_ask
    from poimen.index import default_db
    from poimen.llm import ModelConfig, client_for
    from poimen.log.store import EventLog

    if (question is None) == (query is None):
        fail("mem ask: give a QUESTION or --query, not both and not neither")
    try:
        client = client_for(ModelConfig(model, api_base, timeout))
        if question is not None:
            answer = asyncio.run(answer_question(default_db(_root(log)), question, client, budget))
        else:
            answer = asyncio.run(run_ask(EventLog(_root(log)), query, client))
    except PoimenError as exc:
        fail(exc)
    out.print(answer.text, highlight=False, markup=False, soft_wrap=True)
    for sha in answer.memory_shas[:10]:
        out.print(f"{'from' if question is not None else 'memory'} {sha}", highlight=False)


def _register_commands() -> None:
    import importlib
    import pkgutil

    import poimen.commands

    for info in sorted(pkgutil.iter_modules(poimen.commands.__path__), key=lambda i: i.name):
        importlib.import_module(f"poimen.commands.{info.name}").register(app)


_register_commands()


def main() -> None:
    try:
        app()
    except PoimenError as exc:  # a last net: user errors never show a traceback
        err.print(f"[red]error:[/red] {explain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
