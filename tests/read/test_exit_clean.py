"""An empty memory is told apart from no run: the one line says which, and what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = "2026-11-12T08:47:03Z ERROR upload failed: HTTP/1.1 413 Request Entity Too Large\n" \
         "Root cause: client_max_body_size was 1m on the ingress. Fixed by raising it to 64m.\n"


def mem(home: Path, *args: str) -> subprocess.CompletedProcess:
    """``mem`` as its console script runs it (``poimen.cli.entry:main``)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(home), "POIMEN_EMBEDDER": "hash"}
    return subprocess.run([sys.executable, "-c", "from poimen.cli.entry import main; main()", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=home.parent, stdin=subprocess.DEVNULL)


def test_a_query_that_kept_nothing_says_so_and_an_unknown_one_says_it_never_ran(tmp_path):
    home, src = tmp_path / "home", tmp_path / "upload.log"
    src.write_text(SOURCE)
    ran = mem(home, "run", "--query", "Which lattice gauge theory results were discussed?", str(src))
    assert ran.returncode == 0, ran.stderr
    empty = mem(home, "ask", "--query", "Which lattice gauge theory results were discussed?")
    assert empty.returncode == 1
    assert empty.stderr.count("\n") == 1 and "kept nothing" in empty.stderr and "0 of 1 chunks" in empty.stderr
    assert "mem run` first" not in empty.stderr  # it did run: telling the user to run it would send them in a circle
    unknown = mem(home, "ask", "--query", "nosuch")
    assert unknown.returncode == 1 and "no sealed run" in unknown.stderr and "mem run` first" in unknown.stderr
