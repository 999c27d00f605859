"""The offline engine in process (``OfflineClient``, what ``client_for`` builds) equals the engine through litellm.

``mem ask`` and ``mem run`` with no model configured call the engine in process so that a cold command does not
import litellm; the engine stays registered as litellm's ``poimen`` provider. These hold the two paths to the same
replies, model id, prompt sha and log events, so which path ran is invisible in the log and in every answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from index_helpers import built, make_log

from poimen.read.answer import answer_question
from poimen.domain import Chunk, Query, Stream
from poimen.embedding.embedders import HashEmbedder
from poimen.llm.client import LiteLLMClient, ModelConfig, OfflineClient, client_for
from poimen.write.loop import ListSink, run_loop
from poimen.llm.prompts import render
from poimen.text.tokens import count_tokens

REPO = Path(__file__).resolve().parents[2]
QUESTION = "What caused the outage and how was it fixed?"
TEXTS = ["Lunch is at noon. The weather is nice today.",
         "09:14 uploads failed with 413 Request Entity Too Large.\nThe outage was caused by a full disk on db-1.",
         "Bagels in the kitchen.\nThe outage was fixed by rotating logs and raising client_max_body_size."]


def _stream() -> Stream:
    return Stream.of("incident.log", [Chunk(text=t, source="incident.log", position=i, tokens=count_tokens(t))
                                      for i, t in enumerate(TEXTS)])


def _events(client) -> list:
    sink = ListSink()
    asyncio.run(run_loop("L1", Query("q1", QUESTION), _stream(), client, sink))
    return sink.events


def test_client_for_builds_the_in_process_engine_and_litellm_for_the_rest(monkeypatch):
    monkeypatch.delenv("POIMEN_MODEL", raising=False)
    assert isinstance(client_for(), OfflineClient)
    assert isinstance(client_for(ModelConfig("poimen/extractive")), OfflineClient)
    assert isinstance(client_for(ModelConfig("openai/any", api_base="http://127.0.0.1:9/v1")), LiteLLMClient)


def test_a_gated_run_records_the_same_events_either_way():
    direct, via = _events(OfflineClient()), _events(LiteLLMClient("poimen/extractive"))
    assert any(e.kind == "gate" and e.update for e in direct), "the fixture must open the gate at least once"
    assert [e.to_row() for e in direct] == [e.to_row() for e in via]


def test_every_task_replies_the_same_either_way():
    prompts = [render("gate", question=QUESTION, memory="", chunk=TEXTS[1], budget=1024),
               render("answer", question=QUESTION, memory="\n".join(TEXTS)),
               render("answer", question=QUESTION, memory="Lunch is at noon.")]

    async def both(r):
        return (await OfflineClient().complete(r.system, r.user, 1024),
                await LiteLLMClient("poimen/extractive").complete(r.system, r.user, 1024))

    for r in prompts:
        direct, via = asyncio.run(both(r))
        assert (direct.text, direct.model_id) == (via.text, via.model_id), r.system.splitlines()[0]


def test_an_answer_over_the_index_is_the_same_either_way(tmp_path):
    """ψ over the context builder: the text, the shas it drew on, the model id and the prompt sha."""
    embedder = HashEmbedder(64)
    _, db = built(tmp_path, make_log(tmp_path / "template"), embedder)
    question = "how was the 413 on uploads fixed?"
    direct = asyncio.run(answer_question(db, question, OfflineClient(), embedder=embedder))
    via = asyncio.run(answer_question(db, question, LiteLLMClient("poimen/extractive"), embedder=embedder))
    assert direct.text != "not in memory" and direct.memory_shas and direct == via


def test_the_in_process_engine_does_not_import_litellm():
    code = ("import asyncio, json, sys\nfrom poimen.llm import client_for\nfrom poimen.llm.prompts import render\n"
            "r = render('answer', question='why?', memory='The disk was full.')\n"
            "asyncio.run(client_for().complete(r.system, r.user, 64))\n"
            "print(json.dumps('litellm' in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != "POIMEN_MODEL"} | {"PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) is False
