"""The chunk folder a ``mem run`` reads its sources' chunks from, and the sweep of those a killed run left behind.

Each run writes its sources' chunks to a temporary folder and removes it on exit. A run killed by SIGKILL (or by the
machine going down) cannot, so ``poimen-chunks-*`` folders gathered in the temp folder (306 in one day of the
reliability bench's kills). Each folder now holds an ``.owner`` file its run keeps ``flock``-ed while it lives: the
kernel drops the lock with the process however it ends, so a folder whose ``.owner`` can be locked has no run left
and the next run removes it. A folder without ``.owner`` (made by an older poimen, or being made this instant) is
left alone: ``.owner`` appears, already locked, by a rename.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PREFIX = "poimen-chunks-"
OWNER = ".owner"


@contextlib.contextmanager
def chunk_folder(parent: Path | None = None) -> Iterator[Path]:
    """A fresh chunk folder under ``parent`` (the temp folder by default), owned while the block runs, then
    removed; the stale folders of dead runs are swept first."""
    parent = Path(parent or tempfile.gettempdir())
    sweep(parent)
    with tempfile.TemporaryDirectory(prefix=PREFIX, dir=parent) as folder:
        path = Path(folder)
        fd = os.open(path / ".owner-new", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(path / ".owner-new", path / OWNER)
            yield path
        finally:
            os.close(fd)


def sweep(parent: Path) -> list[Path]:
    """Remove the chunk folders under ``parent`` whose run is gone; returns them."""
    swept = []
    for folder in parent.glob(PREFIX + "*"):
        try:
            fd = os.open(folder / OWNER, os.O_RDWR)
        except OSError:  # no owner file (an older poimen's folder, or not ours to open): left alone
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # its run is alive
            continue
        else:
            shutil.rmtree(folder, ignore_errors=True)  # another sweeper may be removing it too
            swept.append(folder)
        finally:
            os.close(fd)
    return swept
