"""Fixtures of the model clients' tests."""

import pytest


@pytest.fixture
def fake_api_key(monkeypatch):
    """A dummy OPENAI_API_KEY, for modules that call the loopback server through litellm's ``openai/`` route.

    Not autouse: test_model_config tests what happens when the key is missing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-loopback")
