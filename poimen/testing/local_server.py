"""A local object store server for tests and the bench, in a process of its own on a free port of 127.0.0.1.

The server module prints its URL on its first line of stdout, then serves until terminated. Clients reach it
through the environment (``env``), so forked and spawned writer processes find it too.
"""

from __future__ import annotations

import signal
import subprocess
import sys

BUCKET = "poimen-log"


class LocalServer:
    """``with Local…() as server:`` a fresh server with one bucket; ``server.env`` reaches it, ``server.uri(p)``
    names a log under it."""

    module: str  # the server's module, run as ``python -m``
    scheme: str  # the log URI's scheme

    def __init__(self, bucket: str = BUCKET):
        self.bucket = bucket
        self.process: subprocess.Popen | None = None
        self.url = ""

    @property
    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def uri(self, prefix: str) -> str:
        return f"{self.scheme}://{self.bucket}/{prefix}"

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-m", self.module, self.bucket], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("http://"):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the local {self.scheme}:// server did not start (it said {line!r})")
        self.url = line
        self.started()
        return self

    def started(self) -> None:
        """Anything to do once the server answers (S3: create the bucket)."""

    def __exit__(self, *exc) -> None:
        if not self.process:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:  # deaf to SIGTERM (see ``serving``): a test server holds nothing to save
                self.process.kill()
                self.process.wait(10)
        if self.process.stdout:  # the pipe its URL came through; left open, it leaks a descriptor per server
            self.process.stdout.close()


def serving() -> None:
    """Called first by a server module: stop on SIGTERM even if the process that started it ignored SIGTERM (an
    ignored signal stays ignored across exec, and one offline pytest run left its servers deaf to ``terminate``)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
