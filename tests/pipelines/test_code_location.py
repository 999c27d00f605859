"""The Dagster code location stays at the repository's top and is imported from there, never installed (issue 26).

Only ``poimen`` goes into site-packages: ``pipelines``, ``assets`` and ``resources`` are names too generic to
install. Dagster finds them through its working directory (workspace.yaml's ``working_directory``, or `dg launch`
and `dagster dev` run from the root), and the scaled location's executor gives a fork server the root on
``PYTHONPATH``. The shared development virtualenv has an editable install that maps every name to one checkout, so
the tests that say what a fresh install sees run in a virtualenv of their own: the same third-party packages (a
``.pth`` line, so their ``.pth`` files, the editable finder among them, are not run) and this checkout's ``poimen``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CODE_LOCATION = ("pipelines", "assets", "resources")


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory) -> Path:
    """The python of a virtualenv that sees the third-party packages and ``poimen``, as a fresh install would."""
    root = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=120)
    python = root / "venv" / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (root / "library").mkdir()
    (root / "library" / "poimen").symlink_to(REPO / "poimen")
    (site / "shared.pth").write_text(f"{root / 'library'}\n{sysconfig.get_paths()['purelib']}\n")
    return python


def run(python: Path, code: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(python), "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_only_poimen_is_packaged():
    from setuptools import find_packages

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(where=str(REPO), include=config["include"])
    assert packages and all(p == "poimen" or p.startswith("poimen.") for p in packages), packages


@pytest.mark.slow
def test_the_wheel_holds_only_poimen(tmp_path):
    """`pip wheel` of a copy of the project (a build writes build/ and *.egg-info beside the sources)."""
    project = tmp_path / "project"
    shutil.copytree(REPO, project, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "bench", "tests",
                                                                 "examples", ".poimen", ".dagster_home", "build"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", str(project),
                    "-w", str(tmp_path / "dist")], check=True, timeout=600, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("poimen-*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"poimen", next(t for t in tops if t.endswith(".dist-info"))}, tops


def test_a_fresh_install_imports_the_code_location_from_the_repository_root_only(fresh_python, tmp_path):
    code = "import importlib.util, sys; print([m for m in sys.argv[1:] if importlib.util.find_spec(m)])"
    assert run(fresh_python, code, tmp_path, "poimen", *CODE_LOCATION).stdout.strip() == "['poimen']"
    assert run(fresh_python, code, REPO, *CODE_LOCATION).stdout.strip() == str(list(CODE_LOCATION))


# In the run's process (code location importable, as Dagster's working directory makes it), start a fork server
# that preloads a code location module; a forked child exits 0 if the preload is in its modules, 3 if it was skipped.
FORK = """
import multiprocessing, sys
sys.path.insert(0, sys.argv[1])
from pipelines.forkserver import fork_server_imports_the_code_location
if sys.argv[2] == "export":
    fork_server_imports_the_code_location()
ctx = multiprocessing.get_context("forkserver")
ctx.set_forkserver_preload(["pipelines.forkserver"])
child = ctx.Process(target=exec, args=("import sys; sys.exit(0 if 'pipelines.forkserver' in sys.modules else 3)",))
child.start()
child.join()
print(child.exitcode)
"""


def test_a_fork_server_imports_the_code_location_from_any_working_directory(fresh_python, tmp_path):
    """Python 3.11's fork server ignores the sys.path it is handed and swallows the preload's ImportError: outside
    the repository the preload is skipped without a word, unless the executor puts the root on PYTHONPATH."""
    assert run(fresh_python, FORK, tmp_path, str(REPO), "no").stdout.strip() == "3", "the control: skipped"
    done = run(fresh_python, FORK, tmp_path, str(REPO), "export")
    assert done.stdout.strip() == "0", done.stderr[-800:]


def test_importing_a_code_location_patches_nothing():
    code = ("import pipelines.definitions, pipelines.scaled, dagster._core.storage.sql as sql;"
            "from alembic.script import ScriptDirectory; print(sql.ScriptDirectory is ScriptDirectory)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.stdout.strip() == "True", done.stderr[-800:]


def test_the_scaled_executor_applies_the_speed_patches_when_a_run_starts(monkeypatch, tmp_path):
    import dagster as dg
    import dagster._core.storage.sql as dagster_sql
    from alembic.script import ScriptDirectory

    from pipelines.alembic_scripts import SharedScriptDirectory
    from pipelines.forkserver import CODE_ROOT
    from pipelines.scaled import defs, execution_config, multiprocess_preloaded

    monkeypatch.setattr(dagster_sql, "ScriptDirectory", ScriptDirectory)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    job = defs.resolve_job_def("full_build")
    assert job.executor_def is multiprocess_preloaded
    config = {**execution_config(2)["execution"]["config"], "retries": {"enabled": {}}}  # the schema's default
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        executor = multiprocess_preloaded.executor_creation_fn(
            dg.InitExecutorContext(job=dg.reconstructable(_scaled_job), executor_def=multiprocess_preloaded,
                                   executor_config=config, instance=instance))
    assert executor.__class__.__name__ == "MultiprocessExecutor"
    assert dagster_sql.ScriptDirectory is SharedScriptDirectory
    assert os.environ["PYTHONPATH"] == os.pathsep.join([str(CODE_ROOT), "/elsewhere"])


def _scaled_job():
    from pipelines.scaled import full_build_job

    return full_build_job()
