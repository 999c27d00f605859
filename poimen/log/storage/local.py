"""A log in a local folder (or ``file://``).

Puts are temp-file, fsync, rename; put-if-absent is a hard link of a fsynced temp file (``O_EXCL`` with whole
content); the commit is an exclusive ``flock`` on ``index.jsonl`` held while the writer reads the tail and appends
its line. Journals are one file per run, appended with fsync and claimed by a non-blocking ``flock`` on that file
(one writer per run). Writer sessions are ``LOCK``: shared by writers of runs, exclusive for whole-log writers,
which then keep every other writer out.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from poimen.errors import LogLocked, RunBusy
from poimen.log.storage.base import JOURNAL, LogStore, Update


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _durable_temp(path: Path, data: bytes) -> Path:
    """``data`` written and fsynced under a temp name beside ``path``, ready to be renamed or linked into place (a
    name must never reach the disk before its bytes do)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def _flock(fh, mode: int) -> bool:
    try:
        fcntl.flock(fh.fileno(), mode)
        return True
    except BlockingIOError:
        return False


class LocalStore(LogStore):
    def __init__(self, root: Path):
        self.root = Path(root)
        self.uri = str(self.root)

    def where(self, name: str) -> Path:
        return self.root / name

    def exists_root(self) -> bool:
        return self.root.exists()

    def read(self, name: str) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def put(self, name: str, data: bytes) -> None:
        path = self.root / name
        _durable_temp(path, data).replace(path)
        _fsync_dir(path.parent)

    def replace(self, name: str, data: bytes) -> None:
        self.put(name, data)  # the exclusive writer session (LOCK) keeps other writers out meanwhile

    def confirm_session(self) -> None:
        """Nothing to check: the exclusive ``LOCK`` kept every other writer out of the whole session."""

    def stamp(self, name: str) -> tuple[int, int]:
        try:
            st = (self.root / name).stat()
        except FileNotFoundError:
            return (0, 0)
        return (st.st_size, st.st_mtime_ns)

    def put_if_absent(self, name: str, data: bytes) -> bool:
        path = self.root / name
        tmp = _durable_temp(path, data)  # its bytes on disk before its name: an index line may name it next
        try:
            os.link(tmp, path)  # O_EXCL semantics with whole content: the name appears only with all its bytes
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        _fsync_dir(path.parent)
        return True

    def names(self, folder: str, suffix: str) -> list[str]:
        d = self.root / folder
        return sorted(p.name for p in d.glob(f"*{suffix}") if not p.name.startswith(".")) if d.exists() else []

    def delete(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def commit(self, name: str, update: Update) -> bytes | None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # blocking: a commit is one short append
            try:
                fh.seek(0)
                raw = fh.read()
                if raw and not raw.endswith(b"\n"):  # a committer died mid-line; we hold the lock, so it is dead
                    raw = raw[: raw.rfind(b"\n") + 1]
                    fh.truncate(len(raw))
                    os.fsync(fh.fileno())
                line = update(raw)
                if line:
                    fh.write(line)
                    fh.flush()
                    os.fsync(fh.fileno())
                return line
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _journal(self, run_id: str) -> Path:
        return self.root / JOURNAL / f"{run_id}.jsonl"

    def journal_ids(self) -> list[str]:
        return [n[: -len(".jsonl")] for n in self.names(JOURNAL, ".jsonl")]

    def journal_read(self, run_id: str) -> bytes | None:
        return self.read(f"{JOURNAL}/{run_id}.jsonl")

    def journal_append(self, run_id: str, line_no: int, line: bytes) -> None:
        with self._journal(run_id).open("ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def journal_cut(self, run_id: str, good: int) -> None:
        with self._journal(run_id).open("r+b") as fh:
            fh.truncate(good)
            os.fsync(fh.fileno())

    def journal_drop(self, run_id: str, lines: int | None = None) -> None:
        self._journal(run_id).unlink(missing_ok=True)  # one file: the claim's flock keeps other writers out

    @contextmanager
    def claim(self, run_id: str, wait: bool = False) -> Iterator[None]:
        path = self._journal(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as fh:  # creates it: an empty journal is a run that has not finished a turn yet
            if not _flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)):
                raise RunBusy(run_id, str(self.root))
            yield

    @contextmanager
    def session(self, shared: bool) -> Iterator[None]:
        """``LOCK``: shared by writers of runs (each run claimed on its own), exclusive for whole-log writers."""
        self.root.mkdir(parents=True, exist_ok=True)
        for sub in (JOURNAL, "segments"):
            (self.root / sub).mkdir(exist_ok=True)
        with (self.root / "LOCK").open("a+") as fh:
            if not _flock(fh, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB):
                fh.seek(0)
                holder = fh.read().strip() or "unknown"
                raise LogLocked(f"{self.root}: another writer holds the log lock (pid {holder}); wait for it or stop it")
            fh.seek(0)
            fh.truncate()  # shared holders overwrite each other: the error names the latest of them
            fh.write(str(os.getpid()))
            fh.flush()
            yield
