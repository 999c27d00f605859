"""Which store a log root opens (``poimen.log.storage.open_store``), and a root that names no store it can take or
no folder where one is needed, refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from poimen.errors import PoimenError
from poimen.log.storage import open_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("root, says", [("gs://", "no bucket named (gs://bucket/prefix)"),
                                        ("s3:///log", "no bucket named (s3://bucket/prefix)"),
                                        ("ftp://host/log", "only local folders, file://, s3:// and gs://")])
def test_a_log_uri_the_stores_cannot_take_is_refused_in_one_line(root, says):
    with pytest.raises(PoimenError) as err:
        open_store(root)
    assert str(err.value).startswith(f"event log root {root}: ") and says in str(err.value)
    assert "\n" not in str(err.value)


def test_poimen_home_naming_an_object_store_is_refused_in_one_line(monkeypatch, tmp_path):
    """POIMEN_HOME is one machine's folder (the log with its index and caches); a URI there is not a folder named
    "s3:" but a mistake, said in one line. file:// is a folder."""
    from poimen.settings import default_root

    monkeypatch.setenv("POIMEN_HOME", "s3://team/poimen")
    with pytest.raises(PoimenError) as err:
        default_root()
    assert str(err.value).startswith("POIMEN_HOME=s3://team/poimen: ") and "\n" not in str(err.value)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POIMEN_HOME": "s3://team/poimen", "COLUMNS": "400"}
    done = subprocess.run([sys.executable, "-m", "poimen.cli.entry", "verify"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and out.startswith("error: POIMEN_HOME=s3://team/poimen: "), out
    assert len(out.splitlines()) == 1 and not (tmp_path / "s3:").exists(), out
    monkeypatch.setenv("POIMEN_HOME", "file:///tmp/poimen-home")
    assert default_root() == Path("/tmp/poimen-home")


def test_a_log_uri_no_store_takes_is_refused_by_mem_remember_in_one_line(tmp_path, monkeypatch):
    """The typed-memory commands read --log by the one rule (``poimen.settings.log_root``): a URI no store takes is
    one error line naming it, and nothing is written."""
    from typer.testing import CliRunner

    from poimen.cli.app import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["remember", "--log", "ftp://host/log", "a note"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["error: event log root ftp://host/log: only local folders, file://, "
                                                  "s3:// and gs:// are supported"]
    assert not list(tmp_path.iterdir())
