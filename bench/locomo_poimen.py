"""LoCoMo through poimen: standing queries, L1 runs, the index, and the context an agent gets from lookup.

The path, as a user would set it up:

1. Each conversation is one ``.jsonl`` source (``locomo_data.write_jsonl``) in
   its own log and index (one user's history is one namespace; the baselines
   also search only the question's own conversation).
2. Standing queries: eight topic questions (``TOPICS``), the same for every
   conversation, run as L1 over the source with the offline engine (chunk
   bound ``chunk_tokens``, memory budget ``memory_budget``). Why topics and not
   one question per speaker: every rendered turn starts ``[date] Name:``, so
   with the offline engine's one-shared-term rule a query naming a speaker
   matches every line that speaker says and keeps only their first ~1K
   tokens. L2 is not run: with one source per conversation an L2 run would
   read one memory per query.
3. ``build_projections`` into DuckDB, then ``MemoryIndex.search(question)``
   returns the memories with their L0 provenance (the chunks they were built from).

Each memory line is traced to the turn it quotes: its provenance chunks are
re-chunked from the source (the same shas) and the line is looked up in the
turns those chunks hold. Context variants, each filled to the same budgets:

- ``poimen-memory``: the memory lines themselves, hits in lookup order, lines of
  a hit by dense similarity of their turn to the question, each line followed
  by the dia_id it quotes (provenance the agent can cite).
- ``poimen-turns``: the whole turns the retrieved memories quote, ranked by
  dense similarity to the question, rendered like the baselines' turns.
- ``poimen+dense``: reciprocal rank fusion of ``poimen-turns`` with dense search
  over every turn (memories as a prior, the raw turns as a fallback).

``memory ceiling``: the share of evidence turns quoted by any memory of the
conversation, the most a context built only from memories could hold.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench import baselines, report
from bench.locomo_data import CATEGORIES, LoCoMo, QAItem, Turn, write_jsonl
from poimen.chunking import iter_chunks
from poimen.domain import Level, Query
from poimen.index import MemoryIndex, build_projections
from poimen.log.store import EventLog
from poimen.loop import LoopConfig
from poimen.runner import RunPlan, execute, source_stream
from poimen.tokens import count_tokens

TOPICS = (
    ("family", "family, kids, partner and pets"),
    ("friends", "friends, relationships and community"),
    ("work", "work, job, career and school"),
    ("hobbies", "hobbies, art, music and books"),
    ("travel", "trips, travel, camping and places"),
    ("plans", "plans, goals and dreams"),
    ("health", "health, feelings and support"),
    ("events", "events, activities and sports"),
)
RRF_K = 60


def _squash(text: str) -> str:
    return " ".join(text.split())


class ConversationMemory:
    """One conversation's log, index, and the map from memory lines to the turns they quote."""

    def __init__(self, conversation, root: Path, embedder, client, chunk_tokens: int, memory_budget: int):
        self.sample_id = conversation.sample_id
        self.turns = list(conversation.turns)
        root.mkdir(parents=True, exist_ok=True)
        path = write_jsonl(conversation, root / "sources")
        stream = source_stream(path, chunk_tokens)
        log = EventLog(root / "log")
        plans = [RunPlan(Level.L1, Query(f"topic-{tid}", text, "episodic"), stream) for tid, text in TOPICS]
        start = time.perf_counter()
        with log.writer():
            self.outcomes = asyncio.run(execute(log, plans, client, LoopConfig(memory_budget=memory_budget), 1))
        self.loop_s = time.perf_counter() - start
        start = time.perf_counter()
        build_projections(root / "log", root / "index.duckdb", embedder)
        self.index = MemoryIndex.open(root / "index.duckdb", embedder)
        self.build_s = time.perf_counter() - start
        # Chunk position -> the turns it holds (a .jsonl chunk is one rendered turn per line, in order).
        # A turn's text may hold newlines, so turns are matched in order by their rendered text, not by line count.
        self.chunk_turns: dict[int, list[Turn]] = {}
        pending = list(self.turns)
        for chunk in iter_chunks(path, chunk_tokens):
            held, at = [], 0
            while pending and (found := chunk.text.find(pending[0].render().strip(), at)) >= 0:
                at = found + len(pending[0].render().strip())
                held.append(pending.pop(0))
            self.chunk_turns[chunk.position] = held
        self._hits: dict[str, list] = {}
        self._quotes: dict[str, list[tuple[str, Turn | None]]] = {}

    def hits(self, question: str) -> list:
        if question not in self._hits:
            self._hits[question] = self.index.search(question, k=10)
        return self._hits[question]

    def quotes(self, hit) -> list[tuple[str, Turn | None]]:
        """(memory line, the turn it quotes or None) for each line of a hit's memory."""
        if hit.sha not in self._quotes:
            candidates = [t for p in hit.evidence for t in self.chunk_turns.get(p.position, [])]
            out = []
            for line in (s.strip() for s in hit.text.split("\n")):
                if line:
                    flat = _squash(line)
                    out.append((line, next((t for t in candidates if flat in _squash(t.render())), None)))
            self._quotes[hit.sha] = out
        return self._quotes[hit.sha]

    def quoted_turns(self) -> set[str]:
        """dia_ids quoted by any final memory of this conversation (every indexed memory, not only hits)."""
        # MemoryIndex has no public "list everything with provenance"; its hit builder is used directly.
        every = self.index._with_provenance([self.index._hit(i, 0.0, "all", "") for i in range(len(self.index))])
        return {t.dia_id for hit in every for _, t in self.quotes(hit) if t}


class PoimenContexts:
    """The context functions ``baselines.evaluate`` calls, over every conversation's memory."""

    def __init__(self, memories: dict[str, ConversationMemory], dense: baselines.DenseTurns):
        self.memories = memories
        self.dense = dense

    def _dense_rank(self, item: QAItem) -> dict[str, float]:
        turns = self.dense.turns[item.sample_id]
        scores = self.dense.scores(item.sample_id, item.question)
        return {t.dia_id: float(s) for t, s in zip(turns, scores)}

    def memory_lines(self, item: QAItem, budget: int) -> str:
        mem = self.memories[item.sample_id]
        score = self._dense_rank(item)
        lines, used, seen = [], 0, set()
        for hit in mem.hits(item.question):
            quoted = sorted(mem.quotes(hit), key=lambda q: -score.get(q[1].dia_id, -1.0) if q[1] else 1.0)
            for line, turn in quoted:
                text = f"{line} ({turn.dia_id})" if turn else line
                if text in seen:
                    continue
                cost = count_tokens(text + "\n")
                if used + cost <= budget:
                    lines.append(text)
                    seen.add(text)
                    used += cost
        return "\n".join(lines)

    def _memory_turns(self, item: QAItem) -> list[Turn]:
        mem = self.memories[item.sample_id]
        found: dict[str, Turn] = {}
        for hit in mem.hits(item.question):
            for _, turn in mem.quotes(hit):
                if turn:
                    found.setdefault(turn.dia_id, turn)
        score = self._dense_rank(item)
        return sorted(found.values(), key=lambda t: -score[t.dia_id])

    def memory_turns(self, item: QAItem, budget: int) -> list[Turn]:
        return baselines.fill(self._memory_turns(item), budget)

    def fused(self, item: QAItem, budget: int) -> list[Turn]:
        ranks: dict[str, float] = {}
        by_id = {}
        for ranking in (self._memory_turns(item), self.dense.rank(item)):
            for r, turn in enumerate(ranking, start=1):
                ranks[turn.dia_id] = ranks.get(turn.dia_id, 0.0) + 1.0 / (RRF_K + r)
                by_id[turn.dia_id] = turn
        order = sorted(ranks, key=lambda d: -ranks[d])
        return baselines.fill([by_id[d] for d in order], budget)


def _ceiling(items: Sequence[QAItem], memories: dict[str, ConversationMemory]) -> dict:
    quoted = {sid: m.quoted_turns() for sid, m in memories.items()}
    per: dict[str, list[float]] = {}
    for item in items:
        share = sum(d in quoted[item.sample_id] for d in item.evidence) / len(item.evidence)
        per.setdefault(item.category_name, []).append(share)
    flat = [s for v in per.values() for s in v]
    return {"overall": sum(flat) / len(flat) if flat else 0.0, **{c: sum(v) / len(v) for c, v in per.items()}}


def run(data: LoCoMo, embedder, client, workdir: Path, budgets: Sequence[int] = baselines.BUDGETS,
        chunk_tokens: int = 1000, memory_budget: int = 1024, progress: Callable[[str], None] = print) -> dict:
    """Baselines and poimen's variants on the same items, budgets and embedder."""
    items = data.qa
    out: dict = {"chunk_tokens": chunk_tokens, "memory_budget": memory_budget, "model": client.model_id,
                 "conversations": len(data.conversations), "methods": {}}
    start = time.perf_counter()
    bm25 = baselines.BM25Turns(data)
    dense = baselines.DenseTurns(data, embedder)
    dense.warm([i.question for i in items])
    embedder.embed(sorted({i.question for i in items}))  # lookup embeds each question again: warm its cache too
    out["baseline_index_s"] = time.perf_counter() - start
    progress(f"  locomo baselines indexed in {out['baseline_index_s']:.1f}s")
    memories = {}
    for conv in data.conversations:
        memories[conv.sample_id] = ConversationMemory(conv, Path(workdir) / conv.sample_id, embedder, client,
                                                      chunk_tokens, memory_budget)
    runs = [o for m in memories.values() for o in m.outcomes]
    out["runs"] = len(runs)
    out["loop_s"] = sum(m.loop_s for m in memories.values())
    out["index_s"] = sum(m.build_s for m in memories.values())
    out["acceptance"] = sum(o.chunks_used for o in runs) / max(1, sum(o.chunks_seen for o in runs))
    out["memory_tokens"] = sum(count_tokens(o.final_memory) for o in runs) / max(1, len(runs))
    progress(f"  locomo poimen: {len(runs)} runs in {out['loop_s']:.1f}s, index {out['index_s']:.1f}s")
    ctx = PoimenContexts(memories, dense)
    t = time.perf_counter()
    for item in items:
        memories[item.sample_id].hits(item.question)
    out["lookup_ms"] = (time.perf_counter() - t) / max(1, len(items)) * 1e3
    methods = {"bm25": bm25.context, "dense": dense.context, "poimen-memory": ctx.memory_lines,
               "poimen-turns": ctx.memory_turns, "poimen+dense": ctx.fused}
    for name, fn in methods.items():
        out["methods"][name] = baselines.evaluate(fn, items, budgets)
    out["ceiling"] = _ceiling(items, memories)
    out["n"] = out["methods"]["bm25"]["n"]
    return out


def section(result: dict, assets: Path) -> dict:
    methods = result["methods"]
    budgets = list(next(iter(methods.values()))["coverage"])
    cats = [c for c in CATEGORIES.values() if c in result["n"]]
    rows = []
    for b in budgets:
        best_base = max(methods["bm25"]["coverage"][b]["overall"], methods["dense"]["coverage"][b]["overall"])
        best_name, best = max(((m, r["coverage"][b]["overall"]) for m, r in methods.items() if m.startswith("poimen")),
                              key=lambda t: t[1])
        rows.append((f"coverage @{b}: best poimen variant ({best_name}) vs better baseline",
                     f">= {best_base + 0.10:.3f} (+0.10)", f"{best:.3f} ({best - best_base:+.3f})", best >= best_base + 0.10))
        for m, r in methods.items():
            rows.append((f"coverage @{b}: {m}", "", r["coverage"][b]["overall"], None))
    rows += [("memory ceiling (evidence turns quoted by any memory)", "", result["ceiling"]["overall"], None),
             ("lookup latency per question (k=10, with provenance)", "", f"{result['lookup_ms']:.1f} ms", None),
             ("L1 runs / acceptance rate / mean final memory tokens", "",
              f"{result['runs']} / {result['acceptance']:.2f} / {result['memory_tokens']:.0f}", None)]
    table = [[m, b, *[r["coverage"][b][c] for c in ["overall", *cats]]] for m, r in methods.items() for b in budgets]
    table.append(["memory ceiling", "-", *[result["ceiling"].get(c, 0.0) for c in ["overall", *cats]]])
    plots = [report.grouped_bars(assets / f"locomo_coverage_{b}.png", ["overall", *cats],
                                 {m: [r["coverage"][b][c] for c in ["overall", *cats]] for m, r in methods.items()},
                                 f"LoCoMo evidence coverage at {b} tokens") for b in budgets]
    notes = (f"{result['conversations']} conversations, {result['n']['overall']} questions (category 5 left out). "
             f"Model `{result['model']}`, chunk bound {result['chunk_tokens']} tokens, memory budget "
             f"{result['memory_budget']}, {len(TOPICS)} topic queries per conversation (see `bench/locomo_poimen.py`). "
             "Baselines render turns with their date (`[date] speaker: text`). A turn counts when the context "
             "holds its text or cites its dia_id.")
    return {"title": "LoCoMo: evidence coverage of the context an agent gets", "rows": rows, "notes": notes,
            "tables": [{"title": f"coverage per category (n = {result['n']})",
                        "columns": ["method", "budget", "overall", *cats], "rows": table}], "plots": plots}
