"""``mem forget``: remove the text of everything that came from a source, a namespace or a sha; the log still verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import LogUriOpt, fail, out, root_of
from poimen.errors import PoimenError

app = typer.Typer()


@app.command()
def forget(
    source: Optional[str] = typer.Option(None, "--source", help="A source (its path or stream id): its chunks, "
                                         "and every memory, symptom and store fact derived from them."),
    ns: Optional[str] = typer.Option(None, "--ns", help="A namespace: every typed-store write it made."),
    sha: Optional[str] = typer.Option(None, "--sha", help="One evidence, memory, symptom or store-write sha "
                                                         "(or a unique prefix), and what was derived from it."),
    reason: str = typer.Option("", "--reason", help="Why, recorded on the forget event."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would go (events, runs, journals) and change nothing."),
    log: Optional[str] = LogUriOpt,
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB index to rebuild (default: <work dir>/index.duckdb)."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="The local folder of this machine's "
                                            "derivatives (chunk files, index, caches) to scrub (default: a local "
                                            "log's own folder; none for a log on s3:// or gs://)."),
) -> None:
    """Remove the text of a source, a namespace or a sha from the log, the index and the caches.

    Events keep their hashes (their text becomes a tombstone naming its sha256), so `mem verify`
    still passes; a `forget` event records what was removed, when, by whom and why. Runs that read
    the text are retired; the next `mem run` re-derives them without it.

    Examples:
      mem forget --ns dana --reason "asked to be forgotten"
      mem forget --source incidents/2024-03-payroll.md --reason "holds salaries"
      mem forget --source b/chan.txt --dry-run      (only the runs that read b/chan.txt, not a/chan.txt)
      mem forget --log s3://team/poimen --work-dir /var/lib/poimen --source payroll.md
    """
    from poimen.forget import Target, forget as run_forget

    try:
        report = run_forget(root_of(log), Target(source=source or "", namespace=ns or "", sha=sha or ""), reason,
                            db_path=db, work_dir=work_dir, dry_run=dry_run)
    except PoimenError as exc:
        fail(exc)
    out.print(str(report), highlight=False, markup=False, soft_wrap=True)
