"""Shared fixtures: everything offline, everything under tmp_path."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Module-scoped fixtures (a fake model server, a baseline run) start before the autouse fixture below, and the
# offline engine follows $POIMEN_EMBEDDER: set it at import too, so a fixture and its tests score alike.
os.environ["POIMEN_EMBEDDER"] = "hash"
# Likewise the incident stage, which the incident tests turn on themselves (see ``_isolated_home``).
os.environ["POIMEN_INCIDENTS"] = "0"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test writes to the working directory: POIMEN_HOME points into tmp_path."""
    monkeypatch.setenv("POIMEN_HOME", str(tmp_path / "poimen-home"))
    monkeypatch.delenv("POIMEN_MODEL", raising=False)
    monkeypatch.delenv("POIMEN_NAMESPACE", raising=False)  # every entry's default, unless a test names one
    # The offline engine and the index embed with the hash embedder unless a test asks for the real model
    # (monkeypatch.setenv("POIMEN_EMBEDDER", "all-MiniLM-L6-v2")): fast, deterministic, no weights loaded.
    monkeypatch.setenv("POIMEN_EMBEDDER", "hash")
    # The incident stage is tested by the tests that say so (RunRequest(incidents=True), or POIMEN_INCIDENTS=1):
    # the others test the loop, the log and the index, and script the model for the gate alone.
    monkeypatch.setenv("POIMEN_INCIDENTS", "0")
    yield


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """The index tests' log (L1 and L2 runs, a runbook), made once; tests copy it with ``index_helpers.built``."""
    from index_helpers import make_log

    return make_log(tmp_path_factory.mktemp("template"))


@pytest.fixture(scope="module")
def _loopback(request):
    """One loopback OpenAI-compatible server per test module; a module sets ``SERVER_DELAY`` for a slow model."""
    from poimen.testing.openai_server import FakeOpenAI

    with FakeOpenAI(delay=getattr(request.module, "SERVER_DELAY", 0.0)) as s:
        yield s


@pytest.fixture
def server(_loopback):
    """The module's loopback server with an empty script and no requests seen."""
    _loopback.reset()
    return _loopback
