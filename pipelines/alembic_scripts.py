"""Read Dagster's schema migrations once per process, not once per SQLite database a step connects to.

Every time Dagster's SQLite storage connects to a database it has not opened in this process (the run storage,
the event log index, the run's own event-log shard, the schedule storage), it checks the database's schema
revision against the head of its migrations (``dagster._core.storage.sql.check_alembic_revision``). To know the
head it builds a new alembic ``ScriptDirectory`` and executes every migration script in it. A step process of the
multiprocess executor opens three or four such databases before its work starts, so each one re-read the same
scripts three or four times: measured with py-spy over a 64-source build, about 0.5 s of CPU per step process,
7 CPU-seconds of the 12 step processes' overhead (docs/scale.md).

The scripts are files of the installed Dagster release and do not change while a process runs, so
``share_migration_scripts`` hands Dagster one ``ScriptDirectory`` per script location, its revision map read at
the first check; in the fork server (``pipelines.preload``) that first check is made before any step forks, so
every step process starts with the map built. Only Dagster's revision check sees the shared directory: alembic's
own commands (a migration, a stamp of a new database) still build theirs.

It patches a Dagster internal, so only the scaled location opts in (``pipelines.scaled``: its executor when a run
starts, and ``pipelines.preload`` in the fork server); importing a code location patches nothing.
"""

from __future__ import annotations

import threading

from alembic.config import Config
from alembic.script import ScriptDirectory

_lock = threading.Lock()


class SharedScriptDirectory:
    """Stands in for ``ScriptDirectory`` where Dagster's revision check names it: one directory per location."""

    _directories: dict[tuple[str | None, tuple[str, ...]], ScriptDirectory] = {}

    @classmethod
    def from_config(cls, config: Config) -> ScriptDirectory:
        key = (config.get_main_option("script_location"), tuple(config.get_version_locations_list() or ()))
        with _lock:
            directory = cls._directories.get(key)
            if directory is None:
                directory = cls._directories[key] = ScriptDirectory.from_config(config)
            return directory


def share_migration_scripts(warm: bool = False) -> None:
    """Make Dagster's revision check use ``SharedScriptDirectory``; with ``warm``, read the head now."""
    import dagster._core.storage.event_log.sqlite.sqlite_event_log as sqlite_event_log
    import dagster._core.storage.sql as dagster_sql

    if getattr(dagster_sql, "ScriptDirectory", None) is None:
        # A Dagster release that no longer checks revisions this way: nothing to share, and nothing breaks.
        return
    dagster_sql.ScriptDirectory = SharedScriptDirectory
    if warm:
        SharedScriptDirectory.from_config(dagster_sql.get_alembic_config(sqlite_event_log.__file__)).get_heads()
