"""The offline engine: a deterministic extractive baseline that answers poimen's prompts.

It is *not* a language model. It scores sentences by the query's content terms
and copies sentences verbatim; it never writes a word of its own. It exists so
that poimen runs end to end with no network and no weights, and so that
benchmarks have an honest floor to compare real models against. It answers the
same rendered prompts a real model gets, through litellm (provider
``poimen``, model ``poimen/extractive``), and its replies go through the same
parser.

Each prompt template starts its system text with ``poimen-task: NAME``; the
engine dispatches on that name. Tasks beyond gate and answer (symptom, router)
add themselves with ``register_task``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from poimen.prompts import escape, sections
from poimen.text import content_terms, split_sentences
from poimen.tokens import count_tokens

MODEL_ID = "poimen/extractive"
_TASK = re.compile(r"^poimen-task: ([a-z_]+)", re.M)
_BUDGET = re.compile(r"Stay under (\d+) tokens")

TaskFn = Callable[[str, str], str]
_TASKS: dict[str, TaskFn] = {}


def register_task(name: str, fn: TaskFn) -> None:
    _TASKS[name] = fn


def respond(system: str, user: str) -> str:
    """The engine's reply to one rendered prompt."""
    m = _TASK.search(system)
    if not m or m.group(1) not in _TASKS:
        raise ValueError(f"offline engine: no handler for prompt task {m.group(1) if m else '(none)'}")
    return _TASKS[m.group(1)](system, user)


def _score(sentence: str, terms: set[str]) -> int:
    return len(terms.intersection(content_terms(sentence)))


def relevance_threshold(terms: set[str]) -> int:
    """How many query terms a sentence must share to be relevant.

    Short standing questions ('What caused each failure, and how was it
    fixed?') rarely see two of their words in one sentence, so one suffices;
    longer, specific questions (most QA benchmarks) need two.
    """
    return 1 if len(terms) <= 4 else 2


def gate(system: str, user: str) -> str:
    """Keep the most relevant sentences seen so far, within the budget.

    The memory is a ranked reservoir: its lines and the chunk's relevant
    sentences compete by how many query terms they share (older lines win
    ties), and the gate opens only when a new sentence earns a place — which
    may push out a weaker old line rather than leave a full memory frozen.
    Sentences are copied whole or not at all.
    """
    data = sections(user)
    terms = set(content_terms(data["question"]))
    memory = data.get("memory", "").strip()
    budget = int(_BUDGET.search(system).group(1)) if _BUDGET.search(system) else 1024
    old_lines = [line for line in memory.split("\n") if line.strip()]
    known = set(old_lines)
    need = relevance_threshold(terms)
    # (score, age, position, text): age 0 for what the memory holds, 1 for the chunk's sentences
    pool = [(_score(line, terms), 0, j, line) for j, line in enumerate(old_lines)]
    pool += [(score, 1, i, s) for i, s in enumerate(split_sentences(data.get("chunk", "")))
             if s not in known and (score := _score(s, terms)) >= need]
    chosen, used = [], 0
    for unit in sorted(pool, key=lambda u: (-u[0], u[1], u[2])):
        cost = count_tokens(unit[3]) + 1
        if used + cost <= budget:
            chosen.append(unit)
            used += cost
    if not any(age == 1 for _, age, _, _ in chosen):
        covered = terms.issubset(content_terms(memory)) if terms else True
        return f"<check>no</check>\n<update></update>\n<next>{'end' if covered and memory else 'continue'}</next>"
    new_memory = "\n".join(text for _, _, _, text in sorted(chosen, key=lambda u: (u[1], u[2])))
    covered = terms.issubset(content_terms(new_memory))
    return (
        f"<check>yes</check>\n<update>{escape(new_memory)}</update>\n"
        f"<next>{'end' if covered else 'continue'}</next>"
    )


def answer(system: str, user: str) -> str:
    """The memory sentences that best cover the question, weighting rare terms above common ones."""
    import math

    data = sections(user)
    terms = set(content_terms(data["question"]))
    sentences = split_sentences(data.get("memory", ""))
    keys = [terms.intersection(content_terms(s)) for s in sentences]
    df = {t: sum(t in k for k in keys) for t in terms}
    weight = {t: math.log(1 + len(sentences) / df[t]) if df[t] else 0.0 for t in terms}
    ranked = sorted(
        ((i, s, sum(weight[t] for t in keys[i])) for i, s in enumerate(sentences)), key=lambda t: (-t[2], t[0])
    )
    best = [t for t in ranked[:3] if t[2] > 0]
    if not best:
        return "<answer>not in memory</answer>"
    return "<answer>" + escape(" ".join(s for _, s, _ in sorted(best))) + "</answer>"


register_task("gate", gate)
register_task("answer", answer)

_registered = False


def register() -> None:
    """Make ``poimen/extractive`` callable through litellm as a custom provider (idempotent)."""
    global _registered
    if _registered:
        return
    import litellm
    from litellm import CustomLLM

    class _Provider(CustomLLM):
        def _reply(self, model: str, messages: list) -> "litellm.ModelResponse":
            system = "\n".join(m["content"] for m in messages if m["role"] == "system")
            user = "\n".join(m["content"] for m in messages if m["role"] == "user")
            return litellm.completion(
                model=f"poimen/{model.split('/')[-1]}", messages=messages, mock_response=respond(system, user)
            )

        def completion(self, model, messages, *args, **kwargs):
            return self._reply(model, messages)

        async def acompletion(self, model, messages, *args, **kwargs):
            return self._reply(model, messages)

    handler = _Provider()
    providers = [p for p in (litellm.custom_provider_map or []) if p.get("provider") != "poimen"]
    litellm.custom_provider_map = providers + [{"provider": "poimen", "custom_handler": handler}]
    _registered = True

# Tasks defined in their own modules register themselves on import.
from poimen.llm import offline_symptom  # noqa: E402,F401
