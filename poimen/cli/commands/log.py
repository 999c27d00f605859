"""``mem verify`` and ``mem log show``: check the event log, and read it run by run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import JsonOpt, LogUriOpt, err, fail, out, root_of
from poimen.cli.terminal import print_json_lines, print_table
from poimen.errors import PoimenError

MAX_PROBLEMS = 20  # problems `mem verify` lists; the first is the error line

app = typer.Typer()
log_app = typer.Typer(help="Read the event log.", no_args_is_help=True)


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

    root = root_of(log)  # a bad --log or POIMEN_HOME is a usage error, said as itself
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

    elog = EventLog(root_of(log))
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
