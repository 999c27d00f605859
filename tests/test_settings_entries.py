"""One set of settings from every entry (issues 25 and 26): the CLI, the Python facade, the servers and the Dagster
code location resolve what nobody named through ``poimen.settings``, so each gets the same default.

The namespace is the example: it was "default" on the command line and "team" in Dagster. Each entry is asked for
the namespace it would use, with the variable unset, with ``POIMEN_NAMESPACE`` set, and with settings.py's default
changed in place (an entry that kept a default of its own would not follow).
"""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from poimen import settings
from poimen.cli.app import app


def cli(tmp_path: Path) -> str:
    """`mem blocks --json` (every typed-memory command opens its Memory the same way)."""
    result = CliRunner().invoke(app, ["blocks", "--log", str(tmp_path / "log"), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[0])["namespace"]


def facade(tmp_path: Path) -> str:
    from poimen.agent.facade import Memory

    return Memory(root=tmp_path / "log").namespace


def pipeline(tmp_path: Path) -> str:
    """The `typed_stores` asset's config, which files the pipeline's memories."""
    from assets.typed_stores import TypedStoresConfig

    return TypedStoresConfig().resolved_namespace


def http_server(tmp_path: Path, monkeypatch) -> str:
    """`mem serve --http`, up to the service it would serve (the index is not loaded, nothing listens)."""
    import poimen.serve.http
    from poimen.serve.service import ReadService

    served = []
    monkeypatch.setattr(ReadService, "warm", lambda self: None)
    monkeypatch.setattr(poimen.serve.http, "serve", lambda service, *a, **k: served.append(service.namespace))
    result = CliRunner().invoke(app, ["serve", "--http", "--log", str(tmp_path / "log")])
    assert result.exit_code == 0, result.output
    return served[0]


def mcp_server(tmp_path: Path, monkeypatch) -> str:
    """`mem serve --mcp`, up to the memory it would serve over stdio."""
    import poimen.serve.mcp

    served = []
    monkeypatch.setattr(poimen.serve.mcp, "run", lambda memory: served.append(memory.namespace))
    result = CliRunner().invoke(app, ["serve", "--mcp", "--log", str(tmp_path / "log")])
    assert result.exit_code == 0, result.output
    return served[0]


ENTRIES = {"cli": cli, "facade": facade, "pipeline": pipeline, "http": http_server, "mcp": mcp_server}


def ask(entry: str, tmp_path: Path, monkeypatch) -> str:
    fn = ENTRIES[entry]
    return fn(tmp_path, monkeypatch) if entry in ("http", "mcp") else fn(tmp_path)


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_entry_resolves_the_namespace_through_settings(entry, tmp_path, monkeypatch):
    monkeypatch.delenv(settings.NAMESPACE, raising=False)
    assert ask(entry, tmp_path, monkeypatch) == settings.DEFAULT_NAMESPACE == "default"
    monkeypatch.setenv(settings.NAMESPACE, "ops")
    assert ask(entry, tmp_path, monkeypatch) == "ops"
    monkeypatch.delenv(settings.NAMESPACE)
    monkeypatch.setattr(settings, "DEFAULT_NAMESPACE", "through-settings")
    assert ask(entry, tmp_path, monkeypatch) == "through-settings"


# -- the Dagster code location takes its settings as dg.EnvVar -----------------------------------------------------

def test_the_code_location_hands_each_set_variable_to_its_resource_as_an_envvar(monkeypatch, tmp_path):
    from pipelines.definitions import default_resources

    for name in (settings.MODEL, settings.API_KEY, settings.DB, settings.SOURCES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(settings.CHUNK_TOKENS, "300")
    monkeypatch.setenv(settings.HOME, str(tmp_path / "home"))
    resources = default_resources()
    assert resources["corpus"].chunk_tokens.name == settings.CHUNK_TOKENS  # dg.EnvVar.int: the UI shows the name
    assert resources["event_log"].root.env_var_name == settings.HOME
    assert resources["embedder"].model.env_var_name == settings.EMBEDDER  # conftest sets it
    assert resources["llm"].model is None and resources["llm"].api_key is None  # unset: left to poimen.settings
    assert resources["duckdb"].database == "" and resources["corpus"].sources is None


def test_a_variable_is_resolved_when_a_step_runs_not_when_the_code_location_loads(monkeypatch, tmp_path):
    """An EnvVar resolves when Dagster initialises the resource for a step; an unset field, through settings.py."""
    from pipelines.definitions import default_resources

    monkeypatch.setenv(settings.CHUNK_TOKENS, "300")
    monkeypatch.setenv(settings.MODEL, "openai/at-load")
    monkeypatch.delenv(settings.DB, raising=False)
    resources = default_resources()
    monkeypatch.setenv(settings.CHUNK_TOKENS, "123")
    monkeypatch.setenv(settings.MODEL, "openai/at-step")
    monkeypatch.setenv(settings.DB, str(tmp_path / "elsewhere.duckdb"))
    with dg.build_resources(resources) as step:
        assert step.corpus.chunk_bound == 123
        assert step.llm.model_name == "openai/at-step"
        assert step.llm.client_config().model == "openai/at-step"
        assert step.duckdb.path == tmp_path / "elsewhere.duckdb"  # unset at load: settings.py when the step runs


def test_a_bad_chunk_bound_is_one_line_naming_the_variable(monkeypatch):
    from poimen.errors import ConfigError
    from resources import CorpusResource

    monkeypatch.setenv(settings.CHUNK_TOKENS, "many")
    with pytest.raises(ConfigError, match=settings.CHUNK_TOKENS):
        CorpusResource().chunk_bound
