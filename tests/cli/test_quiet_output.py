"""No third-party progress bar or banner in poimen's output, whatever the environment or import order.

transformers draws "Loading weights" while it reads a checkpoint and sentence-transformers "Batches" while it
encodes; both go to stderr, between poimen's own lines. These run ``mem`` as a user does, in a subprocess, with the
variables that would hide the bars (HF_HUB_DISABLE_PROGRESS_BARS, TQDM_DISABLE) unset, and look at stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = "2026-11-12T08:47:03Z ERROR upload failed: HTTP/1.1 413 Request Entity Too Large\n" \
         "Root cause: client_max_body_size was 1m on the ingress. Fixed by raising it to 64m.\n"
# A progress bar: tqdm's "Batches:  50%|█████" or its ascii form, rich's ━ bar, or the words the libraries use.
BAR = re.compile(r"Loading|Batches|\d+%\||it/s\]|[█━▏▎▍▌▋▊▉]|Give Feedback|LiteLLM")


def quiet_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE",
                                                            "TRANSFORMERS_VERBOSITY")}
    return {**env, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(home), **extra}


def mem(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "poimen.cli.entry", *args], capture_output=True, text=True, timeout=600,
                          env=quiet_env(home, **env), cwd=home.parent, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"mem {args[0]} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


@pytest.mark.slow
def test_run_rebuild_and_lookup_print_no_progress_bars(tmp_path):
    home = tmp_path / "home"
    src = tmp_path / "upload.log"
    src.write_text(SOURCE)
    steps = [
        mem(home, "run", "--query", "What caused the upload failure?", str(src), POIMEN_EMBEDDER="hash"),
        # the model loads and encodes every unit: "Loading weights" and "Batches" would show here
        mem(home, "rebuild", "--from-log", "--embedder", "all-MiniLM-L6-v2"),
        mem(home, "lookup", "-k", "2", "HTTP/1.1 413 Request Entity Too Large"),  # the read path's encoder
        mem(home, "lookup", "-k", "2", "--embedder", "all-MiniLM-L6-v2", "why did uploads fail?"),  # the model
    ]
    assert "413" in steps[2].stdout and "413" in steps[3].stdout  # the lookups found the source
    for proc in steps:
        assert not BAR.search(proc.stderr), f"`{' '.join(proc.args[3:5])}` printed on stderr:\n{proc.stderr[-2000:]}"


@pytest.mark.slow
def test_model_load_is_quiet_when_the_host_imported_huggingface_first(tmp_path):
    """An agent that embeds poimen may have imported huggingface_hub (and so fixed its progress-bar setting) before
    poimen could set its environment: the embedder still loads without a bar."""
    child = ("import huggingface_hub, transformers.utils.logging\n"
             "from poimen.embedding.embedders import SentenceTransformerEmbedder\n"
             "print(SentenceTransformerEmbedder().embed(['a', 'b']).shape)")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600,
                          env=quiet_env(tmp_path / "home"), cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "(2, 384)"
    assert not BAR.search(proc.stderr), proc.stderr[-2000:]


def test_a_model_call_warns_nothing_after_the_host_resets_warning_filters(server):
    """litellm hides pydantic's 13 warnings about its own TypedDicts with filters it installs at import; a host that
    resets the filters afterwards (pytest does before every test: these were the test run's 14 warnings) saw them
    all on its first completion. poimen's client filters that one message itself, at each call."""
    from poimen.testing.openai_server import status

    child = ("import asyncio, sys, warnings\n"
             "import litellm\n"
             "warnings.resetwarnings()\n"  # what a test runner does between tests
             "warnings.simplefilter('always')\n"
             # litellm keeps its async HTTP client for the next call and never closes it; Python (and so mem)
             # ignores ResourceWarning by default
             "warnings.simplefilter('ignore', ResourceWarning)\n"
             "from poimen.errors import ModelUnavailable\n"
             "from poimen.llm.client import LiteLLMClient\n"
             "client = LiteLLMClient('openai/any', api_base=sys.argv[1], num_retries=0)\n"
             "try:\n"
             "    asyncio.run(client.complete('system', 'user', 16))\n"
             "except ModelUnavailable as exc:\n"
             "    print(type(exc).__name__)")
    server.script(status(503))
    proc = subprocess.run([sys.executable, "-c", child, server.api_base], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ModelUnavailable" and server.calls == 1
    assert "Warning" not in proc.stderr and not BAR.search(proc.stderr), proc.stderr[-3000:]
