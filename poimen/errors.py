"""The errors poimen raises on purpose. Each carries a one-line message naming its input."""


class PoimenError(Exception):
    """Base class: a user-facing error whose message is one readable line."""


class SourceError(PoimenError):
    """A source cannot be read as text (missing, binary, bad UTF-8, empty, outside the root)."""


class ParseError(PoimenError):
    """A model reply does not follow the gate format; ``reason`` says how."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ModelUnavailable(PoimenError):
    """A model call failed after the client's own retries: not a gate decision; the run stops resumably."""


class ModelRefused(PoimenError):
    """The model server refused the request itself (no or a bad key, a constraint it does not accept, an unknown
    model): asking again cannot help, so the whole command stops with this one line instead of retrying."""


class LogLocked(PoimenError):
    """Another writer holds the event log's lock."""


class RunBusy(LogLocked):
    """Another writer is writing this run right now (its journal is claimed): the run is left to it."""

    def __init__(self, run_id: str, root: str):
        super().__init__(f"{root}: run {run_id[:16]} is being written by another writer")
        self.run_id, self.root = run_id, root


class LogConflict(PoimenError):
    """A commit to the log's index lost the race to other writers too many times in a row."""


class SessionConflict(LogConflict):
    """An exclusive session on an object store lost to another writer: the index (or a segment it read) moved since
    the session began, so what it read is stale; ``EventLog.exclusive`` drops its unindexed writes and redoes it."""


class RunForgotten(PoimenError):
    """A ``mem forget`` committed while this run was being written, and names what the run read (its source, a chunk
    or memory it took in, or its journal): the run is dropped, not sealed, and nothing of it is kept."""

    def __init__(self, run_id: str, root: str, forget_run: str):
        super().__init__(f"{root}: run {run_id[:16]} read what {forget_run} forgot while it ran; it was dropped, "
                         "not sealed")
        self.run_id, self.root, self.forget_run = run_id, root, forget_run


class LogCorrupt(PoimenError):
    """The event log fails verification; the message names the first bad event."""


class ConfigError(PoimenError):
    """A configuration file (queries.yaml, a prompt template) is invalid."""


class IndexMissing(PoimenError):
    """The index database is absent, not a poimen index, or lacks a table a reader needs."""

    def __init__(self, db_path, what: str = "no index here"):
        super().__init__(f"{db_path}: {what}")
        self.db_path, self.what = db_path, what


class IndexAltered(PoimenError):
    """A text read from the index does not hash to the sha its row names: the index was edited after its build."""

    def __init__(self, db_path, table: str, key: str):
        super().__init__(f"{db_path}: table {table}, row {key}: its text does not hash to its sha, so the index was "
                         "edited after it was built; nothing read from it is shown. Run `mem verify`, then "
                         "`mem rebuild --from-log`")


class EmptyMemory(PoimenError):
    """A standing query ran and sealed, but no gate kept a line: there is no memory to answer from."""


class RunInterrupted(PoimenError):
    """A run stopped before its seal (killed, or its model stopped answering); its journal is kept."""

    def __init__(self, run_id: str, query_id: str, stream_id: str, events_kept: int = 0, cause: str = ""):
        why = f"{cause}; " if cause else ""
        super().__init__(f"{why}run {run_id[:16]} ({query_id} × {stream_id}) is unfinished, "
                         f"{events_kept} events kept")
        self.run_id, self.query_id, self.stream_id = run_id, query_id, stream_id
        self.events_kept, self.cause = events_kept, cause


class SourceChanged(PoimenError):
    """A source's chunk no longer has the sha recorded for it (edited while a run read it, or between resumes)."""

    def __init__(self, stream_id: str, turn: int, what: str = "changed since the run started (sha differs)"):
        super().__init__(f"stream {stream_id}: chunk {turn} {what}")
        self.stream_id, self.turn = stream_id, turn


class ShaNotFound(PoimenError):
    """A sha (or prefix) that names no memory, line, evidence chunk or store write in the index."""

    def __init__(self, sha: str, what: str = "no memory, line, evidence or store write has this sha"):
        super().__init__(f"{sha!r}: {what}")
        self.sha, self.what = sha, what


class AmbiguousSha(PoimenError):
    """A sha prefix that several shas start with."""

    def __init__(self, prefix: str, count: int):
        super().__init__(f"{prefix!r}: ambiguous prefix, {count} shas start with it; give more of the sha")
        self.prefix, self.count = prefix, count


class ProjectionError(PoimenError):
    """A projection produced rows that break its declared key: a bug in the projection, named by table and key."""


class NoRuns(PoimenError):
    """Nothing has been read yet for what was asked: no sealed run of the query, or an index with no docs."""
