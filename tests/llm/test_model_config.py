"""Clear failures and opt-in constrained decoding, over real HTTP to a loopback fake server (never a provider).

- No key: a loopback server that answers 401 makes ``mem run`` fail once, with
  one line naming the variable to set, no retries and no litellm banner; a
  remote provider with its key unset fails before any request is made.
- A loopback ``api_base`` needs no dummy key.
- ``--constrain`` sends the pinned grammar or schema the way the server's mode
  says, records its sha, and a server that rejects it gets one clear line.
- Timeouts come from ``--timeout``, ``$POIMEN_TIMEOUT`` or the default.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from poimen.testing.openai_server import status, text
from helpers import QUERY, loop_run_ids, stream

from poimen.domain import sha256_text
from poimen.errors import ConfigError, ModelRefused
from poimen.llm.client import DEFAULT_TIMEOUT, LiteLLMClient, ModelConfig, client_for
from poimen.log.store import EventLog
from poimen.write.loop import ListSink, run_loop
from poimen.llm.prompts import prompts_dir

MEM = Path(sys.executable).with_name("mem")
PARAGRAPHS = ["At 09:14 uploads failed with 413 Request Entity Too Large.",
              "The lunch order was pizza.",
              "The cause: client_max_body_size fell back to 1m after the chart upgrade."]


@pytest.fixture
def source(tmp_path) -> Path:
    p = tmp_path / "incident.md"
    p.write_text("\n\n".join(PARAGRAPHS) + "\n")
    return p


def mem(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "POIMEN_MODEL", "POIMEN_API_BASE")}
    env.update(env_extra or {})
    return subprocess.run([str(MEM), *args], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_no_key_against_a_server_that_answers_401_fails_once_with_one_line(tmp_path, server, source):
    server.default = status(401)
    result = mem("run", "--log", str(tmp_path / "log"), "--model", "openai/any", "--api-base", server.api_base,
                 "--query", QUERY.text, "--chunk-tokens", "30", str(source))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "OPENAI_API_KEY" in lines[0] and "401" in lines[0]
    assert server.calls == 1, "a refused request is not retried, and no other turn is asked"
    assert "Give Feedback" not in result.stdout + result.stderr and "\x1b[1;31m" not in result.stdout
    assert result.stdout.strip() == ""


def test_a_remote_provider_with_no_key_fails_before_any_request(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelRefused, match="set OPENAI_API_KEY"):
        LiteLLMClient("openai/gpt-4o-mini")


def test_a_loopback_server_needs_no_key(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = LiteLLMClient("openai/any", api_base=server.api_base, num_retries=0)
    outcome = asyncio.run(run_loop("L1", QUERY, stream(2), client, ListSink()))
    assert outcome.status == "sealed" and server.calls == 2
    assert "grammar" not in server.requests[0].payload, "unconstrained unless asked"


def test_llamacpp_mode_sends_the_pinned_grammar_and_records_its_sha(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    grammar = (prompts_dir() / "gate.gbnf").read_text(encoding="utf-8")
    client = LiteLLMClient("openai/any", api_base=server.api_base, num_retries=0, constrain="llamacpp")
    sink = ListSink()
    asyncio.run(run_loop("L1", QUERY, stream(2), client, sink))
    assert [r.payload.get("grammar") for r in server.requests] == [grammar, grammar]
    start = sink.events[0].attributes
    assert start["constrain"] == "llamacpp" and start["grammar_sha"] == sha256_text(grammar)
    assert all(e.attributes["grammar_sha"] == sha256_text(grammar) for e in sink.events if e.kind == "gate")
    unconstrained = ListSink()
    asyncio.run(run_loop("L1", QUERY, stream(2), LiteLLMClient("openai/any", api_base=server.api_base), unconstrained))
    assert unconstrained.run_id != sink.run_id, "another reply format names another run"


@pytest.mark.parametrize("mode, where", [("vllm", "guided_grammar"), ("vllm-json", "guided_json"),
                                         ("openai", "response_format")])
def test_each_mode_puts_the_format_where_its_server_reads_it(monkeypatch, server, mode, where):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.default = text(json.dumps({"check": "yes", "update": "uploads failed with 413", "next": "end"})
                          if mode != "vllm" else "<check>no</check>\n<update></update>\n<next>continue</next>")
    client = LiteLLMClient("openai/any", api_base=server.api_base, num_retries=0, constrain=mode)
    outcome = asyncio.run(run_loop("L1", QUERY, stream(1), client, ListSink()))
    payload = server.requests[0].payload
    assert where in payload
    if mode == "openai":
        assert payload["response_format"]["json_schema"]["schema"]["required"] == ["check", "update", "next"]
    if mode != "vllm":
        assert outcome.final_memory == "uploads failed with 413", "a JSON reply parses into the same gate"


def test_a_server_that_rejects_the_constraint_gets_one_clear_error(monkeypatch, server, tmp_path, source):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.default = status(400)
    result = mem("run", "--log", str(tmp_path / "log"), "--model", "openai/any", "--api-base", server.api_base,
                 "--constrain", "llamacpp", "--query", QUERY.text, "--chunk-tokens", "30", str(source))
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "--constrain llamacpp" in lines[0] and "extra_body.grammar" in lines[0]
    assert server.calls == 1


def test_an_unknown_constraint_mode_is_one_line(tmp_path, source):
    result = mem("run", "--log", str(tmp_path / "log"), "--constrain", "grammar", "--query", "q", str(source))
    assert result.returncode == 1 and "--constrain grammar: expected one of llamacpp" in result.stderr


def test_timeout_from_option_env_or_default(monkeypatch):
    monkeypatch.delenv("POIMEN_TIMEOUT", raising=False)
    assert client_for(ModelConfig("openai/any", "http://127.0.0.1:9/v1")).timeout == DEFAULT_TIMEOUT
    monkeypatch.setenv("POIMEN_TIMEOUT", "42")
    assert client_for(ModelConfig("openai/any", "http://127.0.0.1:9/v1")).timeout == 42.0
    assert client_for(ModelConfig("openai/any", "http://127.0.0.1:9/v1", timeout=7)).timeout == 7
    monkeypatch.setenv("POIMEN_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="POIMEN_TIMEOUT"):
        client_for(ModelConfig("openai/any", "http://127.0.0.1:9/v1"))


def test_the_timeout_option_reaches_the_call(tmp_path, server, source):
    from poimen.testing.openai_server import hang

    server.default = hang(3)
    result = mem("run", "--log", str(tmp_path / "log"), "--model", "openai/any", "--api-base", server.api_base,
                 "--timeout", "0.5", "--query", QUERY.text, "--chunk-tokens", "30", str(source))
    assert result.returncode == 1 and "Timeout" in result.stderr and "--resume" in result.stderr
    assert not loop_run_ids(EventLog(tmp_path / "log")), "the run stopped resumably, nothing sealed"


def test_mem_model_serve_names_a_bad_model_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    for spec, says in ((str(tmp_path / "missing.gguf"), "no such GGUF file, folder or installed package"),
                       (str(tmp_path / "notes.txt"), "not a .gguf file"),
                       (str(tmp_path), "expected one .gguf file in this folder, found 0")):
        result = mem("model", "serve", "--model", spec, "--port", "0")
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 1 and len(lines) == 1 and says in lines[0], result.stderr


def test_the_default_local_model_is_the_gguf_inside_its_wheel():
    from poimen.llm.local import alias, resolve_model

    path = resolve_model(None)
    assert path.is_file() and path.suffix == ".gguf" and "site-packages" in str(path)
    assert alias(path) == "SmolLM2-135M-Instruct.Q4_1"


def test_a_constrained_run_replays_from_its_log_with_the_same_format_and_run_id(monkeypatch, server):
    """The replay client reads the run's constraint mode, so a JSON-reply run re-parses as JSON and keeps its id."""
    from poimen.llm.replay import ReplayClient

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.default = text(json.dumps({"check": "yes", "update": "uploads failed with 413", "next": "continue"}))
    recorded = ListSink()
    asyncio.run(run_loop("L1", QUERY, stream(2), LiteLLMClient("openai/any", api_base=server.api_base,
                                                               constrain="openai"), recorded))
    replayed = ListSink()
    client = ReplayClient.of_run(recorded.events)
    assert client.constrain == "openai"
    asyncio.run(run_loop("L1", QUERY, stream(2), client, replayed))
    assert replayed.run_id == recorded.run_id and client.calls == 2
    assert [e.to_row() for e in replayed.events] == [e.to_row() for e in recorded.events]
