"""A run's chunk folder is removed when it exits; one a killed run left is swept by the next run, never one whose
run is alive, nor one poimen cannot tell the owner of (``poimen.write.scratch``)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from poimen.write.scratch import PREFIX, chunk_folder, sweep

HOLD = """
import sys, time
from pathlib import Path
from poimen.write.scratch import chunk_folder
with chunk_folder(Path(sys.argv[1])) as folder:
    (folder / "chunks.jsonl").write_text("{}")
    print(folder, flush=True)
    time.sleep(120)
"""


def _holder(parent: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(parent)], stdout=subprocess.PIPE, text=True)
    return proc, Path(proc.stdout.readline().strip())


def test_a_killed_runs_folder_is_swept_and_a_live_runs_is_not(tmp_path):
    dead, dead_folder = _holder(tmp_path)
    live, live_folder = _holder(tmp_path)
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait(30)
        assert dead_folder.is_dir()  # SIGKILL left it behind
        with chunk_folder(tmp_path) as mine:  # the next run sweeps it first
            assert not dead_folder.exists()
            assert live_folder.is_dir() and (live_folder / "chunks.jsonl").is_file()
            assert mine.is_dir() and mine.name.startswith(PREFIX)
            assert sweep(tmp_path) == []  # neither the live run's folder nor this one's
        assert not mine.exists()
        assert live_folder.is_dir()
    finally:
        live.kill()
        live.wait(30)
    assert sweep(tmp_path) == [live_folder] and not live_folder.exists()


def test_a_folder_with_no_owner_file_is_left_alone(tmp_path):
    old = tmp_path / (PREFIX + "abc123")  # an older poimen's folder
    old.mkdir()
    (old / "chunks.jsonl").write_text("{}")
    assert sweep(tmp_path) == []
    with chunk_folder(tmp_path):
        pass
    assert (old / "chunks.jsonl").is_file()
