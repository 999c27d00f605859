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

from poimen import settings
from poimen.errors import PoimenError
from poimen.log.store import EventLog


class EventLogResource(dg.ConfigurableResource):
    """The hash-chained event log under ``root``, and the local folder its per-run derivatives are kept in.

    ``root``: a local folder or ``file://`` (unset: ``POIMEN_HOME``, else ``./.poimen``), or an object store,
    ``s3://bucket/prefix`` or ``gs://bucket/prefix`` (docs/scale.md). The log (segments, ``index.jsonl``,
    journals) is the only authority and lives there. The chunk files, the projections' Parquet copies, the
    manifest and the writer turn are derivatives of one machine, rebuilt from the log and the sources, so they
    live in ``work_dir``: unset, the log's own folder (a local log keeps them beside it, as always); a log on
    an object store needs one named (``EventLogResource(root="s3://…", work_dir="/var/lib/poimen")``).
    """

    root: Optional[str] = None
    work_dir: Optional[str] = None

    @property
    def log_root(self) -> Path | str:
        """The log as ``EventLog`` takes it (``poimen.settings.log_root``, the rule every entry reads a root by): a
        local folder, or the object store URI as written."""
        return settings.log_root(self.root)

    @property
    def path(self) -> Path:
        """The local work folder: chunk files, projections, manifest, the writer turn."""
        if self.work_dir:
            return Path(self.work_dir).expanduser()
        if isinstance(self.log_root, str):
            raise PoimenError(f"event log root {self.root}: a log on an object store needs a local work_dir for the "
                              "chunk files, projections and manifest (EventLogResource(work_dir=...); docs/deploy.md)")
        return self.log_root

    def log(self) -> EventLog:
        return EventLog(self.log_root)

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
    from poimen.index import default_db

    return settings.database() or Path(default_db(settings.default_root()))


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
