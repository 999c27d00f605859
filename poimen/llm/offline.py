"""The offline engine: a deterministic extractive baseline that answers poimen's prompts.

It is *not* a language model. It scores units (lines, chat turns, sentences)
with the fused relevance scorer of ``poimen.relevance`` (embedding cosine plus
a rarity-weighted share of the query's words) and copies units verbatim; it
never writes a word of its own. It exists so
that poimen runs end to end with no network and no weights, and so that
benchmarks have an honest floor to compare real models against. It answers the
same rendered prompts a real model gets, through litellm (provider
``poimen``, model ``poimen/extractive``), and its replies go through the same
parser.

Each prompt template starts its system text with ``poimen-task: NAME``; the
engine dispatches on that name through ``TASKS``, one explicit table of every
task it answers. A handler is named by its import path and loaded on first use,
so what the engine can answer never depends on which modules happen to be
imported, and the engine imports none of its callers (the router's handler
lives with the router's rules).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from poimen.errors import ConfigError
from poimen.llm.prompts import escape, sections, task_name
from poimen.text.tokens import count_tokens

MODEL_ID = "poimen/extractive"
_BUDGET = re.compile(r"Stay under (\d+) tokens")

TaskFn = Callable[[str, str], str]
TASKS: dict[str, str] = {  # prompt task -> "module:function" answering it with (system, user) -> reply
    "gate": "poimen.llm.offline:gate",
    "answer": "poimen.llm.offline:answer",
    "symptom": "poimen.llm.offline_symptom:symptom",
    "incident": "poimen.llm.offline_incident:incident",
    "router": "poimen.agent.router:offline_route",
}


def task(name: str) -> TaskFn:
    """The handler of one prompt task, loaded from ``TASKS``."""
    if name not in TASKS:
        raise ConfigError(f"offline engine: no handler for prompt task {name!r} (it answers {', '.join(TASKS)})")
    module, _, fn = TASKS[name].partition(":")
    return getattr(importlib.import_module(module), fn)


def respond(system: str, user: str) -> str:
    """The engine's reply to one rendered prompt."""
    return task(task_name(system) or "(none)")(system, user)


_scorer = None
_reader = None
_explicit = False


def configure(embedder=None) -> None:
    """Use ``embedder`` for the engine's relevance scores (``None``: ``$POIMEN_EMBEDDER``, else all-MiniLM-L6-v2)."""
    global _scorer, _reader, _explicit
    from poimen.relevance import Scorer

    _scorer, _reader = Scorer(embedder), None
    _explicit = embedder is not None


def reader():
    """The answer task's scorer: the engine's scorer over the read path's flavour of its embedder.

    An answer is a read. The lines it weighs are a context's (scored untagged, so mostly the index's own units,
    whose vectors the disk cache holds), and embedding any others with sentence-transformers made a cold
    ``mem ask`` import torch (~20 s on 2 loaded cores) where the rest of the read needs only the numpy encoder.
    So vectors the disk cache holds serve first, and the rest come from the
    numpy encoder (``queries=True``: equal to sentence-transformers' to float32 rounding, never cached). The gate,
    whose choices the log records, keeps ``scorer()``; an embedder set by ``configure`` serves both.
    """
    global _reader
    from poimen.embedding.embedders import configured_embedder_id, default_embedder
    from poimen.relevance import Scorer

    if _explicit:
        return scorer()
    if _reader is None or _reader.embedder.model_id != configured_embedder_id():
        _reader = Scorer(default_embedder(queries=True))
    return _reader


def scorer():
    """The engine's scorer; rebuilt when ``$POIMEN_EMBEDDER`` names another embedder than the one it holds."""
    from poimen.embedding.embedders import configured_embedder_id

    if _scorer is None or (not _explicit and _scorer.embedder.model_id != configured_embedder_id()):
        configure()
    return _scorer


def model_id(model: str = MODEL_ID) -> str:
    """The engine's model id names its scorer and embedder: replies change when either does, so runs must too."""
    from poimen.embedding.embedders import configured_embedder_id
    from poimen.relevance import SCORER_VERSION

    embedder = _scorer.embedder.model_id if _scorer is not None and _explicit else configured_embedder_id()
    return f"{model}@{SCORER_VERSION}/{embedder.split('/')[-1]}"


def _budget(system: str) -> int:
    m = _BUDGET.search(system)
    return int(m.group(1)) if m else 1024


def gate(system: str, user: str) -> str:
    """Keep the most relevant units seen so far, within the budget (``poimen.relevance`` scores them).

    The memory is a ranked reservoir of whole units (lines, chat turns,
    sentences of prose): its lines and the chunk's units that reach
    the bar compete by fused score (older lines win ties), and the gate opens
    only when a new unit earns a place — which may push out a weaker old line
    rather than leave a full memory frozen. The bar is ``THRESHOLD``, raised by
    ``FILL_MARGIN`` as the memory fills; for a question after failures, the line
    that leaves a full memory is the weakest on its own merit, and a unit below
    the bar may still take a weaker line's place (``_select``, ``_displace``).
    A unit whose ``variant_key`` the
    memory (or an earlier unit of the chunk) already holds is not added again: the same log line on another host,
    node or pid is the same line.
    Units are copied whole or not at all; the engine never writes a word.
    """
    from poimen.relevance import FILL_MARGIN, THRESHOLD, split_units, unit_terms

    data = sections(user)
    memory = data.get("memory", "").strip()
    budget = _budget(system)
    old_lines = [line for line in memory.split("\n") if line.strip()]
    sc = scorer()
    split = split_units(data.get("chunk", ""))
    units, headings = [u.text for u in split], [u.heading for u in split]
    # The fuller the memory, the more a new unit must offer: the bar rises by FILL_MARGIN at a full budget, so
    # a long stream's tail of look-alike units stops reopening the gate while a strong unit still gets in.
    fill = min(1.0, sum(count_tokens(line) + 1 for line in old_lines) / budget) if budget else 1.0
    bar = THRESHOLD + FILL_MARGIN * fill
    q, chosen = _select(sc, data["question"], old_lines, old_lines, units, headings, bar, budget)
    if any(age == 1 for _, age, _, _ in chosen):
        # A bridge found in this chunk may pull in its second hop from the same chunk: score once more with the
        # chosen units in the memory (one more pass, not to a fixed point, so a chain of weak links stays out).
        lines = [text for _, _, _, text in chosen]
        q, chosen = _select(sc, data["question"], lines, old_lines, units, headings, bar, budget)
    terms = set(q.terms)
    if not any(age == 1 for _, age, _, _ in chosen):
        covered = bool(memory) and terms <= set().union(*map(unit_terms, old_lines or [""]))
        return f"<check>no</check>\n<update></update>\n<next>{'end' if covered else 'continue'}</next>"
    lines = [text for _, _, _, text in sorted(chosen, key=lambda u: (u[1], u[2]))]
    covered = terms <= set().union(*map(unit_terms, lines))
    return (
        f"<check>yes</check>\n<update>{escape(chr(10).join(lines))}</update>\n"
        f"<next>{'end' if covered else 'continue'}</next>"
    )


def _select(sc, question: str, context: list[str], old_lines: list[str], units: list[str], headings: list[str],
            bar: float, budget: int):
    """The query (expanded by ``context``) and the memory it chooses: old lines and chunk units (under their
    section ``headings``) above ``bar``, best first within ``budget``, then any units below the bar that take a
    weaker line's place (``_displace``), as (score, age, position, text) with age 0 for the memory, 1 for the chunk.

    Best first by fused score while all fit. For a question after failures over failure lines, when they do not,
    the lines that leave are the weakest on their own merit (``_merit``), and failure lines below the bar may
    displace. Only there: log lines stand alone, where on prose the memory's expansion terms bridge a second hop
    that its own merit would drop (``python -m bench.calibrate --displace``: at a 256-token memory on the dev split,
    the two cost 0.016 and 0.017 more supporting-fact retention on HotpotQA questions), and "which tornado killed
    the most people?" asks after failures in words only."""
    from poimen.relevance import THRESHOLD, severity, variant_key

    q = sc.query(question, context)
    unit_scores = sc.score(q, units, neighbours=True, headings=headings)
    old_scores = sc.score(q, old_lines)
    keys = {variant_key(line) for line in old_lines}
    pool = [(float(s), 0, j, line) for j, (line, s) in enumerate(zip(old_lines, old_scores))]
    below: list = []
    tiers = ((bar, float("inf"), pool), (THRESHOLD, bar, below))[:2 if q.failure else 1]
    for floor, top, into in tiers:  # the bar's units claim their keys first
        for i, (unit, s) in enumerate(zip(units, unit_scores)):
            key = variant_key(unit)
            if floor <= s < top and key not in keys:
                keys.add(key)
                into.append((float(s), 1, i, unit))
    below = [u for u in below if severity(u[3])]
    full = q.failure and any(severity(u[3]) for u in pool) and sum(map(_cost, pool)) > budget
    rank = _merit(sc, question, pool) if full else {u[1:3]: u[0] for u in pool}
    chosen, used = [], 0
    for unit in sorted(pool, key=lambda u: (-rank[u[1:3]], u[1], u[2])):
        if used + _cost(unit) <= budget:
            chosen.append(unit)
            used += _cost(unit)
    return q, _displace(sc, question, chosen, below, budget - used)


def _cost(unit: tuple) -> int:
    return count_tokens(unit[3]) + 1


def _merit(sc, question: str, units: list) -> dict[tuple[int, int], float]:
    """Each unit's own merit by (age, position): its score for the question alone, no memory expansion, no neighbour.

    What a full memory keeps is decided on this, not on the fused scores: a kept line holds the very terms the
    memory expands the query with, and a chunk unit inherits its neighbour's score, so on those a memory's
    look-alikes (three lines of one incident) lift each other above a different, worse failure.
    """
    scores = sc.score(sc.query(question), [u[3] for u in units])
    return {u[1:3]: float(s) for u, s in zip(units, scores)}


def _displace(sc, question: str, kept: list, below: list, free: int) -> list:
    """``kept`` after the units of ``below`` (chunk units between ``THRESHOLD`` and the bar) that cannot fit in
    the ``free`` tokens left have taken the place of weaker lines.

    The bar rises as the memory fills, so that a long stream's tail of look-alikes stops churning it; but then a
    full memory of warnings shut out a later fatal error. Such a unit takes the place of the weakest lines it
    needs gone when its own merit (``_merit``) beats each of theirs by ``DISPLACE_MARGIN``. Best first (ties by
    position); a line out stays out.
    """
    from poimen.relevance import DISPLACE_MARGIN

    below = sorted((u for u in below if _cost(u) > free), key=lambda u: (-u[0], u[2]))
    if not below or not kept:
        return kept
    merit = _merit(sc, question, kept + below)
    weakest = sorted(kept, key=lambda u: (merit[u[1:3]], -u[1], -u[2]))  # who would lose a tie goes first
    for unit in below:
        need, k = _cost(unit) - free, 0
        while need > 0 and k < len(weakest) and merit[weakest[k][1:3]] + DISPLACE_MARGIN <= merit[unit[1:3]]:
            need -= _cost(weakest[k])
            k += 1
        if need <= 0:
            kept = [u for u in kept if u not in weakest[:k]] + [unit]
            del weakest[:k]
            free = -need
    return kept


ANSWER_LINES = 3


def answer(system: str, user: str) -> str:
    """The memory lines that best answer the question, verbatim (with any provenance tag they carry).

    Lines are scored like the gate scores units, by what they say: a context
    line's provenance tag is not scored (a source named
    ``postmortem-upload-413.md`` is no reason for each of its lines to match
    "uploads" or "413"). The best ``ANSWER_LINES`` that reach half the
    threshold are returned in memory order, and "not in memory" when none does.
    A heading or a bare label ("## Symptom: uploads fail with 413", "Caused by:") names a topic and states
    nothing, so it answers only when no other line does. An incident's card (``poimen.llm.tags.card_memory``) is
    answered with its cause and fix lines, labelled: the fix rarely shares a word with the question, and the card
    says which line it is (a card without a fix line, with its verification: "#499 bumps X. docs green.").
    """
    from poimen.llm.tags import card_lines, tagged_lines, untagged
    from poimen.relevance import THRESHOLD, split_units, titles_only

    data = sections(user)
    memory = data.get("memory", "")
    card = card_lines(memory)
    if card:  # an incident's card: what caused it and what fixed it, as the card says
        # without a fix line, the verification says what was done as it says it worked ("#499 bumps X. docs green.")
        told = ("cause", "fix") if any(label == "fix" for label, _ in card) else ("cause", "verified")
        said = [f"{label}: {line}" for label, line in card if label in told]
        return "<answer>" + escape("\n".join(said) or "not in memory") + "</answer>"
    lines = tagged_lines(memory) or [u.text for u in split_units(memory)]
    if not lines:
        return "<answer>not in memory</answer>"
    sc = reader()
    scores = sc.score(sc.query(data["question"]), [untagged(line) for line in lines])
    ranked = [i for i in sorted(range(len(lines)), key=lambda i: (-scores[i], i)) if scores[i] >= THRESHOLD / 2]
    statements = [i for i in ranked if not titles_only(untagged(lines[i]))]
    best = (statements or ranked)[:ANSWER_LINES]
    if not best:
        return "<answer>not in memory</answer>"
    return "<answer>" + escape("\n".join(lines[i] for i in sorted(best))) + "</answer>"


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
