"""Shared fixtures: everything offline, everything under tmp_path."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test writes to the working directory: POIMEN_HOME points into tmp_path."""
    monkeypatch.setenv("POIMEN_HOME", str(tmp_path / "poimen-home"))
    monkeypatch.delenv("POIMEN_MODEL", raising=False)
    yield
