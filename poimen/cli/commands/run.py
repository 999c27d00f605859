"""``mem run``: read sources with the gated loop, record every turn in the event log, and index the sealed runs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import (ApiBaseOpt, ConstrainOpt, LogUriOpt, ModelOpt, NoIndexOpt, RootOpt, TimeoutOpt, err,
                                explain, fail, follow_log, out, root_of)
from poimen.cli.terminal import print_table, run_progress
from poimen.errors import PoimenError
from poimen.settings import CHUNK_TOKENS, INCIDENTS

app = typer.Typer()


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
    max_tokens: int = typer.Option(5000, "--chunk-tokens", min=16, envvar=CHUNK_TOKENS, help="Token bound per chunk."),
    memory_budget: int = typer.Option(1024, min=16, help="Token budget of a memory."),
    root: Optional[Path] = RootOpt,
    fmt: Optional[str] = typer.Option(None, "--format", help="Read every source as this format (text, markdown, wiki, "
                                      "html, log, shell, jsonl, json, chat, csv) instead of detecting it."),
    fields: Optional[str] = typer.Option(None, "--fields", help="JSON record fields, e.g. text=body,time=created_at,"
                                         "author=user.login,thread=number."),
    no_index: bool = NoIndexOpt,
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the model every time: no model reply is read "
                                  "from or written to <log>/cache/llm."),
    incidents: Optional[bool] = typer.Option(None, "--incidents/--no-incidents", help="At L1, also cut each source "
                                             "into incidents and card each (symptom, cause, fix); default: on, "
                                             f"or ${INCIDENTS}."),
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
    from poimen.settings import ModelConfig
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
    req = RunRequest(root=root_of(log), sources=list(sources or []), query=query, queries=queries, level=level,
                     model=ModelConfig(model, api_base, timeout, constrain), use_exit_gate=use_exit_gate, resume=resume,
                     concurrency=concurrency, chunk_tokens=max_tokens, memory_budget=memory_budget, sources_root=root,
                     reading=reading, cache_replies=not no_cache,
                     **({} if incidents is None else {"incidents": incidents}))
    with run_progress(err) as (on_start, on_turn):
        try:
            result = run_loops(req, on_start=on_start, on_turn=on_turn)
        except PoimenError as exc:
            fail(exc)
    if level == "L2" and not result.outcomes:
        from poimen.errors import NoRuns

        fail(NoRuns(f"--level L2: no sealed L1 memory of {'these queries' if queries else 'this query'} in "
                    f"{root_of(log)} to read"))
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
        indexed = follow_log(root_of(log))
    if not result.ok or not indexed:
        raise typer.Exit(1)
