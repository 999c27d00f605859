"""``mem rebuild``, ``mem lookup``, ``mem sql``, ``mem reference``: the DuckDB projection and the read path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import (DbOpt, EmbedderOpt, LogOpt, NoIndexOpt, RootOpt, err, fail, follow_log, index_embedder,
                                index_paths, out, root_of)
from poimen.errors import PoimenError
from poimen.index.sql import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT
from poimen.settings import SQL_MEMORY_LIMIT, SQL_TIMEOUT

MAX_DRIFT = 20  # lines of an index's drift `mem rebuild` prints before it overwrites that index

app = typer.Typer()


@app.command()
def rebuild(
    from_log: bool = typer.Option(True, "--from-log", help="Rebuild from the event log (the only source)."),
    log: Optional[Path] = LogOpt,
    db: Optional[Path] = DbOpt,
    embedder: Optional[str] = EmbedderOpt,
    accept: bool = typer.Option(False, "--accept", help="Record this build as the manifest, even if it differs."),
) -> None:
    """Drop every projection, rebuild it from the sealed log, and compare with the hashes beside the log.

    Rows of runs sealed since the manifest are new, not drift: exit 0, and the manifest is extended.
    Exits 1 and names the rows that drifted (model id, embedder, projection code changed); --accept
    records such a build on purpose. The first build records the manifest.

    Example: mem rebuild --from-log --log .poimen
    """
    from poimen.index.rebuild import rebuild as run_rebuild

    root, db_path = index_paths(log, db)
    if not (root / "index.jsonl").exists():
        fail(f"{root}: no event log here (no index.jsonl); run `mem run` first or pass --log")
    def drift(problems: list[str]) -> None:  # printed before the rebuild overwrites the index they name
        for line in problems[:MAX_DRIFT]:
            out.print(f"drift: {line}", highlight=False, soft_wrap=True)
        if len(problems) > MAX_DRIFT:
            out.print(f"drift: … and {len(problems) - MAX_DRIFT} more", highlight=False)

    try:
        with err.status("checking the index, then rebuilding projections from the log"):
            report = run_rebuild(root, db_path, index_embedder(embedder, root), accept=accept, on_drift=drift)
    except PoimenError as exc:
        fail(exc)
    out.print(str(report), highlight=False, soft_wrap=True)
    out.print(f"index: {db_path}", highlight=False)
    if report.replaced and not accept:
        err.print("[red]error:[/red] the index this rebuild replaced was not the build its heads record, or the "
                  "log lost runs they name (the drift lines above); the index now holds what the log gives: "
                  "find out who changed it", highlight=False, soft_wrap=True)
    if not report.ok and not accept:
        err.print("[red]error:[/red] rows above differ from the manifest and no new run explains them; if the "
                  "model, embedder or projection code changed on purpose, record this build with "
                  "`mem rebuild --from-log --accept`", highlight=False, soft_wrap=True)
    if (report.replaced or not report.ok) and not accept:  # --accept: recorded on purpose, drift and all
        raise typer.Exit(1)


@app.command()
def lookup(
    text: str = typer.Argument(..., help="What you are looking for: a question, an error message, a log line."),
    db: Optional[Path] = DbOpt,
    log: Optional[Path] = LogOpt,
    k: int = typer.Option(10, "-k", min=1, max=1000, help="Hits to return."),
    explain: bool = typer.Option(False, "--explain", help="Show why each hit ranked where it did."),
    lines: int = typer.Option(4, "--lines", min=1, help="Lines shown per hit (its lines that match best)."),
    as_json: bool = typer.Option(False, "--json", help="JSON Lines: one hit per line, with its provenance and "
                                                       "its best lines (the shape `mem serve --http` returns)."),
    embedder: Optional[str] = typer.Option(None, "--embedder",
                                           help="Query embedder (default: the one that built the index)."),
) -> None:
    """Find memories and reference chunks for TEXT, each with its provenance (level, query, run, evidence).

    Uses a running `mem serve --http` for this log when there is one (the same hits, warm).

    Example: mem lookup "413 Request Entity Too Large on upload" --explain
    """
    from poimen.cli.readout import print_hits, print_json
    from poimen.serve.client import read

    root, db_path = index_paths(log, db)
    try:
        emb = index_embedder(embedder, root) if embedder else None
        shapes = read(root, db_path, "lookup", {"text": text, "k": k, "explain": explain, "lines": lines}, emb)
    except PoimenError as exc:
        fail(exc)
    if as_json:
        print_json(shapes)
    else:
        print_hits(out, shapes, explain)


@app.command()
def sql(
    query: Optional[str] = typer.Argument(None, help="SQL to run; read from stdin when omitted."),
    db: Optional[Path] = DbOpt,
    log: Optional[Path] = LogOpt,
    csv: bool = typer.Option(False, "--csv", help="Print CSV instead of a table."),
    allow_files: bool = typer.Option(False, "--allow-files",
                                     help="Let the SQL read other files (read_parquet, read_csv …); off by default."),
    memory_limit: str = typer.Option(DEFAULT_MEMORY_LIMIT, "--memory-limit", envvar=SQL_MEMORY_LIMIT,
                                     help="Memory the query may use (DuckDB sizes: 256MB, 2GB, 512MiB)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", min=0.001, envvar=SQL_TIMEOUT,
                                  help="Seconds the statements may run in all before they are stopped."),
) -> None:
    """Run read-only DuckDB SQL on the index (SELECT, EXPLAIN, PRAGMA; writes are refused; no other files),
    within --memory-limit and --timeout.

    Example: mem sql "SELECT query_id, avg(acceptance_rate) FROM run WHERE level = 'L1' GROUP BY 1"
    """
    import csv as csvlib

    from poimen.index.sql import run_sql

    _, db_path = index_paths(log, db)
    text = query if query is not None else sys.stdin.read()
    try:
        results = run_sql(db_path, text, allow_files, memory_limit, timeout)
    except PoimenError as exc:
        fail(exc)
    for cols, rows in results:
        if not cols:
            out.print("ok", highlight=False)
        elif csv:
            writer = csvlib.writer(sys.stdout)
            writer.writerow(cols)
            writer.writerows(rows)
        else:
            from poimen.cli.terminal import print_table

            print_table(out, cols, [["" if v is None else str(v) for v in row] for row in rows])


@app.command()
def reference(
    paths: list[Path] = typer.Argument(..., help="Reference documents (.md .txt …): runbooks, READMEs."),
    log: Optional[Path] = LogOpt,
    max_tokens: int = typer.Option(1000, "--chunk-tokens", min=16, help="Token bound per chunk."),
    root: Optional[Path] = RootOpt,
    no_index: bool = NoIndexOpt,
) -> None:
    """Record reference docs (tier R) in the log: chunked, never run through the loop. Idempotent.

    Example: mem reference examples/reference/*.md
    """
    from poimen.write.reference import ingest_reference

    try:
        run_ids = ingest_reference(root_of(log), list(paths), max_tokens, root)
    except PoimenError as exc:
        fail(exc)
    for path, run_id in zip(paths, run_ids):
        out.print(f"{run_id[:12]} {path}", highlight=False)
    if not no_index and not follow_log(root_of(log)):
        raise typer.Exit(1)
