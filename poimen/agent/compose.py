"""``compose(query, budget)``: the context block an agent reads before it answers.

Order and selection:

1. core blocks, always (``user_profile``, ``task_state``; empty ones skipped);
2. then, most relevant first: recent episodes (the recall tier pages in the
   last few even when they share no word with the query), rules and facts
   that share a content term with the query, and archival hits;
3. stop adding lines when the next one would pass the token budget
   (``poimen.text.tokens.count_tokens`` of the rendered block); core blocks are
   never dropped, so a budget smaller than the core gives the core alone.

Relevance is one measure for every store — the rarity-weighted share of the
query's words a line holds (``poimen.relevance.lexical_share``: whole words
after stemming, identifiers exact, the incident synonyms) — so lines from
different stores compare fairly; ties go
to procedural, semantic, episodic, archival, then to the newer item. Each line
is tagged ``[store/label sha:…]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poimen.relevance.terms import lexical_share
from poimen.text.tokens import count_tokens

if TYPE_CHECKING:
    from poimen.agent.ports import StoreReader

RECENT = 3  # episodes paged in from the recall tier regardless of match
ARCHIVAL_K = 3
_TIE = {"procedural": 0, "semantic": 1, "episodic": 2, "archival": 3}


@dataclass(frozen=True)
class ContextLine:
    store: str   # working, semantic, episodic, procedural or archival
    label: str   # the core block, or fact / event / rule / chunk
    sha: str
    text: str
    score: float
    tier: str    # core, recall or archival (facts and rules: matched)

    def render(self) -> str:
        return f"[{self.store}/{self.label} sha:{self.sha[:12]}] {' '.join(self.text.split())}"  # one line per fact


@dataclass(frozen=True)
class Context:
    query: str
    budget: int
    lines: list[ContextLine]
    dropped: list[ContextLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(line.render() for line in self.lines)

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)

    def by_store(self, store: str) -> list[ContextLine]:
        return [line for line in self.lines if line.store == store]


def relevance(query: str, text: str) -> float:
    return round(lexical_share(query, text), 4)


def candidates(memory: "StoreReader", query: str, recent: int = RECENT, k: int = ARCHIVAL_K,
               notes: list[str] | None = None) -> list[tuple[tuple, ContextLine]]:
    """Every non-core line that may enter the context, with its sort key; problems go to ``notes``."""
    notes = notes if notes is not None else []
    out = []
    for age, item in enumerate(memory.items("episodic")):
        score = relevance(query, item.text)
        if age < recent or score > 0:
            out.append((item, ContextLine("episodic", "event", item.sha, item.text, score, "recall"), age))
    for store, label in (("procedural", "rule"), ("semantic", "fact")):
        for age, item in enumerate(memory.items(store)):
            score = relevance(query, item.text)
            if score > 0:
                out.append((item, ContextLine(store, label, item.sha, item.text, score, "matched"), age))
    keyed = [((-line.score, _TIE[line.store], age), line) for _, line, age in out]
    try:
        hits = memory.search(query, k)
    except Exception as exc:  # a broken archive costs the archival lines, not the agent's context
        notes.append(f"archival search failed: {type(exc).__name__}: {exc}")
        hits = []
    for rank, hit in enumerate(hits):
        line = ContextLine("archival", "chunk", hit.sha, hit.text, relevance(query, hit.text), "archival")
        keyed.append(((-line.score, _TIE["archival"], rank), line))
    return sorted(keyed, key=lambda t: t[0])


def compose(memory: "StoreReader", query: str, budget: int = 1000) -> Context:
    """Core blocks, then the most relevant other lines that fit in ``budget`` tokens."""
    core = [ContextLine(b.store, b.label, b.sha, b.text, 1.0, "core") for b in memory.blocks().values() if b.text]
    lines, dropped, notes = list(core), [], []
    used = count_tokens("\n".join(line.render() for line in lines))
    seen = {(line.store, line.sha) for line in lines}
    for _, line in candidates(memory, query, notes=notes):
        if (line.store, line.sha) in seen:
            continue
        cost = count_tokens(line.render()) + (1 if lines else 0)
        if used + cost <= budget:
            lines.append(line)
            used += cost
            seen.add((line.store, line.sha))
        else:
            dropped.append(line)
    return Context(query, budget, lines, dropped, notes)
