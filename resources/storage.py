"""The event log (the only authority) and the DuckDB file its projections are rebuilt into."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from poimen.errors import PoimenError
from poimen.log.store import EventLog, default_root


class EventLogResource(dg.ConfigurableResource):
    """The hash-chained event log under ``root``: a local folder (``POIMEN_HOME``, else ``./.poimen``).

    ``file://`` URIs are accepted. The log itself also lives on ``s3://`` (``mem run --log s3://…``,
    ``mem verify``; docs/scale.md), but the pipeline keeps its chunk files, DuckDB index and projections beside
    the log, and the typed stores need the whole log to themselves, so its root is a local folder so far.
    """

    root: Optional[str] = None

    @property
    def path(self) -> Path:
        if not self.root:
            return default_root()
        if self.root.startswith("file://"):
            return Path(self.root[len("file://"):])
        if "://" in self.root:
            raise PoimenError(f"event log root {self.root}: the pipeline needs a local folder (or file://) so far; "
                              "`mem run --log` and `mem verify --log` take s3:// (docs/scale.md)")
        return Path(self.root).expanduser()

    def log(self) -> EventLog:
        return EventLog(self.path)

    @contextmanager
    def writer_turn(self, step: str, shared: bool = False) -> Iterator[None]:
        """Hold this log's writer turn (``<root>/WRITER``, a blocking flock) for one whole pipeline step.

        Steps that only append runs to the log take it *shared*: runs are claimed one by one and the index commit
        is safe for concurrent writers, so shards (and other runs' appenders) go at once. Steps that need the log
        or the DuckDB index to themselves (whole-log sessions, projections, checks) take it *exclusive*. The
        ``poimen_writer`` pool is what the UI shows as the queue of exclusive steps, but Dagster's SQLite storage
        hands out a pool slot with a read-then-write that two runs claiming at the same instant can both pass;
        this turn is the guarantee: a step waits here (and says whom for) instead of failing on a lock.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        log = dg.get_dagster_logger()
        mode = "shared" if shared else "exclusive"
        with (self.path / "WRITER").open("a+") as fh:
            try:
                fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                log.info(f"{step}: waiting for the writer turn on {self.path} (held by {fh.read().strip() or 'unknown'})")
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}, step {step}")
            fh.flush()
            log.info(f"{step}: writer turn taken ({mode})")
            try:
                yield
            finally:
                log.info(f"{step}: writer turn released ({mode})")
                if not shared:
                    fh.seek(0)
                    fh.truncate()
                    fh.flush()
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def default_database() -> Path:
    """``POIMEN_DB``, else the projection database inside the default log root (read when a step runs)."""
    env = os.environ.get("POIMEN_DB")
    if env:
        return Path(env)
    from poimen.index import default_db

    return Path(default_db(default_root()))


class IndexDatabaseResource(DuckDBResource):
    """DuckDB holding the projections; every table in it can be dropped and rebuilt from the log.

    ``database`` empty means ``POIMEN_DB``, else ``<log root>/index.duckdb``, resolved when a step
    connects rather than when the code location loads.
    """

    database: str = ""

    @property
    def path(self) -> Path:
        return Path(self.database) if self.database else default_database()

    @contextmanager
    def get_connection(self):
        con = duckdb.connect(str(self.path), config=dict(self.connection_config))
        try:
            yield con
        finally:
            con.close()


def duckdb_resource(database: str | Path | None = None) -> IndexDatabaseResource:
    """The projection database at ``database``, or (unset) wherever the environment says when a step runs."""
    return IndexDatabaseResource(database=str(database) if database else "")
