"""What ``mem``'s commands share: their common options, the two consoles, and how a command fails, explains an
error and brings the index up to date after a write.

Every command module imports from here and from nothing above it (``poimen.cli.app`` lists the commands; the
commands never import it back), so the import graph of the CLI runs one way: entry -> app -> commands -> options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from poimen import settings
from poimen.cli.readout import console
from poimen.errors import PoimenError

out = console()
err = console(stderr=True)


def _local_log(value: str) -> Path:
    """``--log`` of a command that reads a local log folder (and its index): a path, or a ``file://`` URI
    (``local_folder``, as the log itself reads its root).

    A log on an object store is refused by what was typed: read as a path, ``s3://b/p`` became the folder
    ``s3:/b/p``, and the error named a folder nobody typed and advised a command that cannot read it either."""
    from poimen.settings import local_folder

    try:
        return local_folder(value, "this command")
    except PoimenError:
        raise typer.BadParameter(f"{value}: this command reads a local log folder (copy a log on an object store "
                                 "to one first: docs/scale.md); only `mem run`, `mem verify`, `mem forget`, "
                                 "`mem log show` and the typed-memory commands take s3:// and gs:// logs") from None


LogOpt = typer.Option(None, "--log", parser=_local_log, help="Event log folder (default: $POIMEN_HOME or ./.poimen).")
LogUriOpt = typer.Option(None, "--log", help="Event log folder or URI (file://, s3://bucket/prefix, "
                         "gs://bucket/prefix; default: $POIMEN_HOME or ./.poimen).")
DbOpt = typer.Option(None, "--db", help="DuckDB index file (default: <log>/index.duckdb).")
ModelOpt = typer.Option(None, help="litellm model string (default: $POIMEN_MODEL, else poimen/extractive).")
ApiBaseOpt = typer.Option(None, help="API base URL of an OpenAI-compatible server (default: $POIMEN_API_BASE); "
                                    "a server on 127.0.0.1 needs no API key.")
TimeoutOpt = typer.Option(None, min=0.001, help="Seconds a model call may take (default: $POIMEN_TIMEOUT, else 600, "
                                                "sized for a local model on CPU).")
ConstrainOpt = typer.Option(None, help="Constrained decoding of gate replies (default: $POIMEN_CONSTRAIN, else none): "
                                       "llamacpp (extra_body.grammar), vllm (guided_grammar), vllm-json (guided_json), "
                                       "openai (structured outputs).")
EmbedderOpt = typer.Option(None, "--embedder", envvar=settings.EMBEDDER,
                           help="Embedding model id, e.g. sentence-transformers/all-MiniLM-L6-v2 or poimen/hash-bow-384 "
                                "(default: the one the manifest records, else all-MiniLM-L6-v2).")
RootOpt = typer.Option(None, "--root", help="The sources root: a stream is named by its path relative to it "
                                           "(default: the folder the given files share).")
NoIndexOpt = typer.Option(False, "--no-index", help="Leave the index as it is (by default the runs this command "
                                                   "seals are projected into it, so lookup, sql and ask see them).")
SourcesOpt = typer.Option(None, "--sources", help="Folder the stream ids are relative to, for file line numbers "
                                                  "(repeatable; default: $POIMEN_SOURCES, then the working directory).")
NsOpt = typer.Option(None, "--ns", help="Namespace (user or agent id; default $POIMEN_NAMESPACE or 'default').")
ArchiveOpt = typer.Option(None, "--archive", help="Archival tier: 'index:PATH' (the lookup's DuckDB), or "
                          "'module:callable' returning an object with search(query, k). Default: the index "
                          "beside the log if it exists, else none.")
JsonOpt = typer.Option(False, "--json", help="JSON Lines on stdout (one object per line, full ids), for scripts.")


def root_of(log: Optional[Path | str]) -> Path | str:
    """The log root ``--log`` names (``poimen.settings.log_root``: a folder, or an ``s3://``/``gs://`` URI as
    written; unset: ``$POIMEN_HOME``); a URI no log takes is one error line naming it."""
    try:
        return settings.log_root(log)
    except PoimenError as exc:
        fail(exc)


def index_paths(log: Optional[Path], db: Optional[Path]) -> tuple[Path, Path]:
    """The log folder and the index a read command uses: ``--db``, else the index beside the log."""
    from poimen.index import default_db

    root = root_of(log)
    return root, Path(db) if db else default_db(root)


def index_embedder(model_id: Optional[str], root: Path):
    from poimen.index.update import index_embedder as embedder

    return embedder(root, model_id)


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


def follow_log(root: Path | str, only_if_built: bool = False) -> bool:
    """Project the runs a command just sealed into the index (``mem run``, ``reference``, ``remember``, ``tool``).

    One line on stderr says what changed. Returns False after an error line when the index could not be
    updated (the runs stay sealed; ``mem rebuild --from-log`` catches up). ``only_if_built``: leave a log with
    no index alone (an agent's write needs no index; its stores are read from their own replica).
    """
    from poimen.errors import LogLocked
    from poimen.index import default_db
    from poimen.index.update import update_index
    from poimen.log.storage.local import LocalStore
    from poimen.log.store import EventLog

    log = EventLog(root)
    if not isinstance(log.store, LocalStore):  # the index is a local DuckDB file; one beside an s3:// log is not kept
        if not only_if_built:
            err.print(f"note: index not updated: {log.root} is not a local log; build the index from a local copy "
                      "(docs/scale.md)", highlight=False, soft_wrap=True)
        return True
    root = log.root
    if only_if_built and not default_db(root).exists():
        return True
    try:
        with log.writer():  # one index writer at a time, and no run sealing half-way through the read
            result = update_index(root)
    except LogLocked as exc:
        err.print(f"note: index not updated yet: {exc}; the next write or `mem rebuild --from-log` projects these runs",
                  highlight=False, soft_wrap=True)
        return True
    except PoimenError as exc:
        err.print(f"[red]error:[/red] the runs are sealed, but the index was not updated: {explain(exc)}; "
                  "run `mem rebuild --from-log` when it is free", highlight=False, soft_wrap=True)
        return False
    if result.built or result.new_runs:
        err.print(str(result), highlight=False, soft_wrap=True)
    return True
