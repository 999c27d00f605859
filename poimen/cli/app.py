"""``mem``: poimen from the command line. A thin layer: parse options, call the core, print.

The console script enters through ``poimen.cli.entry`` (light: a warm read skips this module); this is the typer app.

User errors print one line to stderr and exit 1; nothing prints a traceback
for a bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.args import TextGroup
from poimen.errors import PoimenError
from poimen.cli.readout import console
from poimen.cli.terminal import JsonOpt, print_json_lines, print_table, run_progress

MAX_PROBLEMS = 20  # problems `mem verify` lists; the first is the error line

app = typer.Typer(help="poimen: gated memory over long streams, with evidence.", no_args_is_help=True, cls=TextGroup,
                  add_completion=False, pretty_exceptions_enable=False)
log_app = typer.Typer(help="Read the event log.", no_args_is_help=True)
app.add_typer(log_app, name="log")
out = console()
err = console(stderr=True)


def _local_log(value: str) -> Path:
    """``--log`` of a command that reads a local log folder (and its index): a path, or a ``file://`` URI
    (``local_folder``, as the log itself reads its root).

    A log on an object store is refused by what was typed: read as a path, ``s3://b/p`` became the folder
    ``s3:/b/p``, and the error named a folder nobody typed and advised a command that cannot read it either."""
    from poimen.log.storage import local_folder

    try:
        return local_folder(value, "this command")
    except PoimenError:
        raise typer.BadParameter(f"{value}: this command reads a local log folder (copy a log on an object store "
                                 "to one first: docs/scale.md); only `mem run`, `mem verify` and `mem forget` take "
                                 "s3:// and gs:// logs") from None


LogOpt = typer.Option(None, "--log", parser=_local_log, help="Event log folder (default: $POIMEN_HOME or ./.poimen).")
LogUriOpt = typer.Option(None, "--log", help="Event log folder or URI (file://, s3://bucket/prefix, "
                         "gs://bucket/prefix; default: $POIMEN_HOME or ./.poimen).")
ModelOpt = typer.Option(None, help="litellm model string (default: $POIMEN_MODEL, else poimen/extractive).")
ApiBaseOpt = typer.Option(None, help="API base URL of an OpenAI-compatible server (default: $POIMEN_API_BASE); "
                                    "a server on 127.0.0.1 needs no API key.")
TimeoutOpt = typer.Option(None, min=0.001, help="Seconds a model call may take (default: $POIMEN_TIMEOUT, else 600, "
                                                "sized for a local model on CPU).")
ConstrainOpt = typer.Option(None, help="Constrained decoding of gate replies (default: $POIMEN_CONSTRAIN, else none): "
                                       "llamacpp (extra_body.grammar), vllm (guided_grammar), vllm-json (guided_json), "
                                       "openai (structured outputs).")

RootOpt = typer.Option(None, "--root", help="The sources root: a stream is named by its path relative to it "
                                           "(default: the folder the given files share).")
NoIndexOpt = typer.Option(False, "--no-index", help="Leave the index as it is (by default the runs this command "
                                                   "seals are projected into it, so lookup, sql and ask see them).")


def _root(log: Optional[Path | str]) -> Path | str:
    """The log root: a folder, or a URI (``file://``, ``s3://``, ``gs://``) kept as written (no pyarrow imported
    here)."""
    from poimen._env import default_root

    if log and "://" in str(log):
        return str(log)
    return Path(log) if log else default_root()


def _hint(exc: BaseException) -> str:
    """What to do next, in this surface's words (the core's errors carry data, not CLI advice)."""
    from poimen.errors import IndexMissing, NoRuns, RunInterrupted, SourceChanged

    hints = {IndexMissing: "build it with `mem rebuild --from-log` (add --accept when the tables changed on purpose)",
             RunInterrupted: "rerun with --resume", NoRuns: "run `mem run` first",
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
    sources: list[Path] = typer.Argument(None, help="Source files (.md .txt .log .jsonl .json .csv, "
                                    "or any text: the format is read from the content); none at --level L2."),
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
    root: Optional[Path] = RootOpt,
    fmt: Optional[str] = typer.Option(None, "--format", help="Read every source as this format (text, markdown, log, "
                                      "shell, jsonl, json, chat, csv) instead of detecting it."),
    fields: Optional[str] = typer.Option(None, "--fields", help="JSON record fields, e.g. text=body,time=created_at,"
                                         "author=user.login,thread=number."),
    no_index: bool = NoIndexOpt,
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the model every time: no model reply is read "
                                  "from or written to <log>/cache/llm."),
) -> None:
    """Read sources with the gated loop, record every turn in the event log, and project the sealed runs
    into the index (so lookup, sql and ask see them at once).

    A stream is named by its path relative to the sources root (--root, else the folder the sources share),
    so a/app.log and b/app.log stay two streams. A model's replies are cached in <log>/cache/llm by prompt
    (not the offline engine's, nor for a log on s3:// or gs://): a resumed or rebuilt run asks it only
    for what it has not answered; `mem forget` scrubs the cache with the log.

    Examples:
      mem run --queries examples/queries.yaml examples/sources/*
      mem run --model openai/SmolLM2-135M-Instruct.Q4_1 --api-base http://127.0.0.1:8080/v1 --constrain llamacpp ...
    """
    from poimen.write.core import RunRequest, run_loops

    if bool(query) == bool(queries):
        fail("give exactly one of --query TEXT or --queries FILE")
    if level not in ("L1", "L2"):
        fail(f"--level {level}: expected L1 or L2")
    from poimen.inputs.reading import Reading

    try:
        reading = Reading(format=fmt, fields=fields)
    except PoimenError as exc:
        fail(exc)
    req = RunRequest(root=_root(log), sources=list(sources or []), query=query, queries=queries, level=level,
                     model=model, api_base=api_base, timeout=timeout, constrain=constrain, use_exit_gate=use_exit_gate, resume=resume,
                     concurrency=concurrency, chunk_tokens=max_tokens, memory_budget=memory_budget, sources_root=root,
                     reading=reading, cache_replies=not no_cache)
    with run_progress(err) as (on_start, on_turn):
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
    print_table(out, ("run", "level", "query", "stream", "status", "seen", "used", "memory sha"),
                [(o.run_id[:12], str(o.level), o.query_id, o.stream_id, o.status, str(o.chunks_seen),
                  str(o.chunks_used), o.final_memory_sha[:12]) for o in result.outcomes])
    for o in result.outcomes:
        if o.problem:
            err.print(f"[red]error:[/red] {explain(o.problem)}", highlight=False, soft_wrap=True)
    indexed = True
    if not no_index:
        from poimen.cli.commands.index import follow_log

        indexed = follow_log(_root(log))
    if not result.ok or not indexed:
        raise typer.Exit(1)


@app.command()
def verify(log: Optional[str] = LogUriOpt,
           db: Optional[Path] = typer.Option(None, "--db", help="DuckDB index to check (default: <log>/index.duckdb).")
           ) -> None:
    """Check the hash chains, parents, shas and that every run is sealed or resumable; then the log's head against
    the heads the manifest and the index record (a dropped tail, an emptied log), and the index's rows against
    the manifest (an edited index).

    Example: mem verify --log .poimen
    """
    from poimen.index.audit import verify_all

    root = _root(log)  # a bad --log or POIMEN_HOME is a usage error, said as itself
    try:
        report = verify_all(root, db)
    except PoimenError as exc:
        fail(f"verify failed: {exc}")
    for note in report.notes:
        out.print(f"note: {note}", highlight=False, soft_wrap=True)
    for problem in report.problems[1:MAX_PROBLEMS]:
        err.print(f"also: {problem}", highlight=False, soft_wrap=True)
    if len(report.problems) > MAX_PROBLEMS:
        err.print(f"also: … and {len(report.problems) - MAX_PROBLEMS} more", highlight=False)
    if not report.ok:
        fail(f"verify failed: {report.first}")
    out.print(f"ok: {report.sealed_runs} sealed runs, {report.resumable_runs} resumable, {report.events} events", highlight=False)


@log_app.command("show")
def log_show(log: Optional[str] = LogUriOpt, run_id: Optional[str] = typer.Option(None, "--run", help="Run id or unique prefix."),
             as_json: bool = JsonOpt) -> None:
    """List runs, or show one run turn by turn: gate, exit flag, memory tokens, parse failures.

    Examples:
      mem log show --run 3fa2
      mem log show --json | jq -r 'select(.level == "L1") | .run_id'
    """
    from poimen.log.store import EventLog
    from poimen.log.runs import loop_runs, read_runs
    from poimen.log.timeline import resolve_run, run_header, run_record, turn_rows

    elog = EventLog(_root(log))
    try:
        if not run_id:
            runs = [run_record(s) for s in loop_runs(read_runs(elog))]
            runs += [{"run_id": p.stem, "status": "unfinished"} for p in elog.journals()]
            if as_json:
                return print_json_lines(runs)
            print_table(out, ("run", "level", "query", "stream", "seen", "used", "final memory"),
                        [(r["run_id"][:12], r.get("level", ""), r.get("query_id", ""), r.get("stream_id", ""),
                          str(r.get("chunks_seen", "")), str(r.get("chunks_used", "")),
                          (r["final_memory_sha"][:12] or "-") if r["status"] == "sealed" else "(unfinished)") for r in runs])
            return
        rid = resolve_run(elog, run_id)
        sealed = elog.is_sealed(rid)
        events = elog.run_events(rid) if sealed else elog.journal_events(rid)
    except PoimenError as exc:
        fail(exc)
    head, turns = run_header(rid, events, sealed), turn_rows(events)
    end = events[-1].attributes if events[-1].kind == "run_end" else None
    if as_json:
        return print_json_lines([head, *({"record": "turn", **t} for t in turns),
                                 *([{"record": "run_end", **end}] if end is not None else [])])
    out.print(f"run {rid}\nlevel {head['level']} · query {head['query_id']}: {head['query_text']}\n"
              f"stream {head['stream_id']} · model {head['model_id']} · template sha {head['prompt_template_sha'][:12]}"
              + (f" · {head['constrain']} grammar sha {head['grammar_sha'][:12]}" if head["grammar_sha"] else ""),
              highlight=False, soft_wrap=True)
    print_table(out, ("turn", "chunk", "gate", "exit", "memory tok", "note"),
                [(str(r["turn"]), r["chunk"], r["gate"], r["exit"], str(r["memory_tokens"]), r["note"]) for r in turns],
                wrap=("note",))
    if end is not None:
        out.print(f"run_end: {end}", highlight=False)


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
    root = _root(log)
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


def _register_commands() -> None:
    import importlib
    import pkgutil

    import poimen.cli.commands

    for info in sorted(pkgutil.iter_modules(poimen.cli.commands.__path__), key=lambda i: i.name):
        importlib.import_module(f"poimen.cli.commands.{info.name}").register(app)


_register_commands()


def main() -> None:
    try:
        app()
    except PoimenError as exc:  # a last net: user errors never show a traceback
        err.print(f"[red]error:[/red] {explain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
