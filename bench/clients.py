"""Model clients for the benchmarks: the offline engine in process, a call counter, and an always-update loop.

Why in process: litellm's mock transport costs 60-150 ms a call on this
machine, against ~5 ms for the offline engine itself, so poimen proper calls
the engine in process too (``poimen.llm.client.OfflineClient``, what
``client_for`` builds for it). The replies are those of the engine's litellm
custom provider (the same ``respond`` function, the same model id, so the same
run ids); only the transport is skipped, which turns a 448K-token item from
minutes into seconds. ``litellm_overhead`` measures what was skipped, and the
report states it. Any other model string goes through litellm unchanged
(``--model``).

``AlwaysUpdateClient`` is the MemAgent-style comparison: MemAgent rewrites its
memory on every chunk. Here each turn the offline engine's reply is kept when
it says yes; when it says no, the reply becomes a yes whose memory is the old
memory plus the chunk's two best sentences by query-term overlap (ties: first
in the chunk), as many as fit under the budget. Every turn is an update, so
the memory grows every turn until the budget stops it.
"""

from __future__ import annotations

import asyncio
import time

from poimen.llm.client import Completion, LiteLLMClient, ModelConfig, OfflineClient, client_for
from poimen.llm.offline import MODEL_ID
from poimen.llm.prompts import escape, sections
from poimen.text.words import content_terms, split_sentences
from poimen.text.tokens import count_tokens

BEST_SENTENCES = 2


class CountingClient:
    """Counts calls (gate calls with their retries, answer calls) of the client it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = inner.model_id
        self.constrain = getattr(inner, "constrain", None)
        self.calls = 0

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        self.calls += 1
        return await self.inner.complete(system, user, max_tokens)


def _budget(system: str) -> int:
    import re

    m = re.search(r"Stay under (\d+) tokens", system)
    return int(m.group(1)) if m else 1024


class AlwaysUpdateClient:
    """Every gate turn is an update (see the module docstring); answer prompts pass through."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = f"{inner.model_id}+always-update"
        self.constrain = getattr(inner, "constrain", None)

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        reply = await self.inner.complete(system, user, max_tokens)
        if "poimen-task: gate" not in system or "<check>yes</check>" in reply.text:
            return reply
        data = sections(user)
        memory = data.get("memory", "").strip()
        terms = set(content_terms(data["question"]))
        known = set(split_sentences(memory))
        ranked = sorted(((-len(terms & set(content_terms(s))), i, s)
                         for i, s in enumerate(split_sentences(data.get("chunk", ""))) if s not in known))
        used, budget, chosen = count_tokens(memory), _budget(system), []
        for _, i, s in ranked[:BEST_SENTENCES]:
            cost = count_tokens(s) + 1
            if used + cost <= budget:
                chosen.append((i, s))
                used += cost
        new = "\n".join([memory] * bool(memory) + [s for _, s in sorted(chosen)])
        text = f"<check>yes</check>\n<update>{escape(new)}</update>\n<next>continue</next>"
        return Completion(text, self.model_id)


def bench_client(model: str | None = None, api_base: str | None = None, constrain: str | None = None,
                 timeout: float | None = None):
    """The offline engine in process by default (whatever ``$POIMEN_MODEL`` says); any litellm model string otherwise."""
    if model in (None, "", MODEL_ID):
        return OfflineClient()
    return client_for(ModelConfig(model, api_base, timeout, constrain))


def litellm_overhead(calls: int = 20) -> dict:
    """Per-call time of the offline engine through litellm next to the same call in process."""
    from poimen.llm.prompts import render

    rendered = render("gate", question="Which magazine was started first?", memory="",
                      chunk="Arthur's Magazine was an American literary periodical. " * 200, budget=1024)
    via = LiteLLMClient(MODEL_ID)

    async def go(client) -> float:
        await client.complete(rendered.system, rendered.user, 1280)  # warm: litellm imports, provider registration
        start = time.perf_counter()
        for _ in range(calls):
            await client.complete(rendered.system, rendered.user, 1280)
        return (time.perf_counter() - start) / calls

    litellm_s = asyncio.run(go(via))
    direct_s = asyncio.run(go(OfflineClient()))
    return {"calls": calls, "litellm_ms": litellm_s * 1e3, "in_process_ms": direct_s * 1e3}
