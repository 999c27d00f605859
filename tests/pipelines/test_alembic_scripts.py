"""Dagster's schema check reads its migration scripts once per process (pipelines.alembic_scripts)."""

import dagster as dg
import dagster._core.storage.sql as dagster_sql
from alembic.script import ScriptDirectory
from dagster._core.instance.ref import InstanceRef

from pipelines.alembic_scripts import SharedScriptDirectory, share_migration_scripts


def _open_existing_instance(folder, times: int) -> None:
    for _ in range(times):
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(folder))) as instance:
            instance.get_runs()  # connects to the run storage, which checks its schema revision


def test_opening_an_instance_again_does_not_read_the_migrations_again(tmp_path, monkeypatch):
    share_migration_scripts()
    _open_existing_instance(tmp_path, 1)  # creates and stamps the databases (alembic's own commands: not counted)
    monkeypatch.setattr(SharedScriptDirectory, "_directories", {})
    loads = []
    original = ScriptDirectory._load_revisions

    def counting(self):
        loads.append(self.dir)
        yield from original(self)

    monkeypatch.setattr(ScriptDirectory, "_load_revisions", counting)
    _open_existing_instance(tmp_path, 3)
    assert len(loads) == 1, f"the migrations were read {len(loads)} times for 3 opens of one instance"


def test_the_shared_directory_reports_the_same_head_as_alembic():
    share_migration_scripts(warm=True)
    assert dagster_sql.ScriptDirectory is SharedScriptDirectory
    import dagster._core.storage.runs.sqlite.sqlite_run_storage as runs

    config = dagster_sql.get_alembic_config(runs.__file__)
    shared = SharedScriptDirectory.from_config(config)
    assert SharedScriptDirectory.from_config(config) is shared
    assert shared.get_heads() == ScriptDirectory.from_config(config).get_heads()
