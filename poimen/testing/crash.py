"""Start ``mem run`` as a real process and SIGKILL it at a chosen point.

Importing litellm costs about ten CPU seconds, so exec'ing ``mem`` forty times
would dominate the suite. Instead this module imports litellm and
``poimen.cli.entry`` once, and each ``mem`` process is *forked* from the warm test
process and runs ``poimen.cli.entry.main`` with its own argv, environment and output
file — the same code path as the console script, started in milliseconds. A
kill is ``SIGKILL`` to that process's pid: no handler runs, nothing is flushed.

``KILL_AT`` points make the kill exact instead of timed: the child kills itself
at a named place inside the write path (after a segment's rename, after its
index line, half way through a journal line, or as a loop run begins its seal:
its last turn answered, nothing of that turn written).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import poimen  # noqa: F401  (offline defaults before litellm)
import litellm  # noqa: F401,E402  (warm: the forked children inherit it)
import poimen.cli.entry  # noqa: E402
import poimen.cli.app  # noqa: E402,F401  (the typer app, loaded once: each forked `mem` runs it)
import poimen.log.journal as journal  # noqa: E402
import poimen.log.store as store  # noqa: E402


def context():
    return mp.get_context("fork")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(kill_at: str) -> None:
    """Make this process SIGKILL itself at one exact point of the first seal (or journal append)."""
    if kill_at == "after_segment_rename":
        original = store.put_segment

        def put_then_die(log_store, name, events):
            original(log_store, name, events)
            _die()

        store.put_segment = put_then_die  # the name ``EventLog._seal`` calls (imported from ``segments``)
    elif kill_at == "after_index_line":
        original_seal = store.EventLog._seal

        def seal_then_die(self, run_id, events, **how):
            original_seal(self, run_id, events, **how)
            _die()

        store.EventLog._seal = seal_then_die
    elif kill_at == "torn_journal_line":
        original_append = journal.RunJournal.append
        count = {"n": 0}

        def append_torn(self, drafts):
            count["n"] += 1
            if count["n"] == 3:
                with self.path.open("ab") as fh:  # half a turn reaches the disk, then the process dies
                    fh.write(b'[{"seq":')
                    fh.flush()
                    os.fsync(fh.fileno())
                _die()
            return original_append(self, drafts)

        journal.RunJournal.append = append_torn
    elif kill_at == "before_loop_seal":
        original_journal_seal = journal.RunJournal.seal

        def die_at_loop_seal(self, drafts):
            if self.events:  # a run with journaled turns: a loop's, not an L0 record's (``append_run``)
                _die()
            return original_journal_seal(self, drafts)

        journal.RunJournal.seal = die_at_loop_seal
    elif kill_at:
        raise ValueError(f"unknown kill point {kill_at}")


def _mem_main(argv: list[str], env: dict[str, str], out_path: str) -> None:
    os.environ.update(env)
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = ["mem", *argv]
    _arm(env.get("POIMEN_TEST_KILL_AT", ""))
    poimen.cli.entry.main()


@dataclass
class MemProcess:
    process: mp.process.BaseProcess
    out_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL this one process (by pid) and reap it."""
        if self.process.is_alive():
            os.kill(self.pid, signal.SIGKILL)
        self.process.join(10)

    def wait(self, timeout: float = 120) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            self.kill()
            raise TimeoutError(f"mem {self.out_path.stem} did not finish in {timeout}s:\n{self.output()[-2000:]}")
        return self.process.exitcode


def start_mem(argv: list[str], out_path: Path, env: dict[str, str] | None = None) -> MemProcess:
    """Fork a ``mem`` process from this warm process."""
    env = {"OPENAI_API_KEY": "sk-fake-loopback", "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    p = context().Process(target=_mem_main, args=(list(map(str, argv)), env, str(out_path)), daemon=True)
    p.start()
    return MemProcess(p, out_path)


def run_mem(argv: list[str], out_path: Path, env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str]:
    proc = start_mem(argv, out_path, env)
    code = proc.wait(timeout)
    return code, proc.output()


def kill_after_calls(proc: MemProcess, server, calls: int, jitter: float, rng: random.Random,
                     timeout: float = 60) -> bool:
    """SIGKILL ``proc`` once the fake model has received ``calls`` more requests, plus a random jitter.

    Returns True if the kill landed on a live process, False if it had already finished.
    """
    target = server.calls + calls
    deadline = time.monotonic() + timeout
    while server.calls < target and proc.process.is_alive():
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError(f"no model call {target} within {timeout}s:\n{proc.output()[-2000:]}")
        time.sleep(0.002)
    time.sleep(rng.uniform(0, jitter))
    alive = proc.process.is_alive()
    proc.kill()
    return alive and proc.process.exitcode == -signal.SIGKILL
