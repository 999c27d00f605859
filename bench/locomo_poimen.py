"""LoCoMo through poimen: standing queries, L1 runs, the index, and the context an agent gets from it.

The path, as a user would set it up:

1. Each conversation is one ``.jsonl`` source (``locomo_data.write_jsonl``) in
   its own log and index (one user's history is one namespace; the baselines
   also search only the question's own conversation).
2. Standing queries run as L1 over the source with the offline engine (chunk
   bound ``chunk_tokens``, memory budget ``memory_budget``). ``execute`` also
   records every chunk of the source in the log, so the index holds each turn
   as an L0 unit beside the memory lines (L1 units). L2 is not run: with one
   source per conversation an L2 run would read one memory per query.
3. ``build_projections`` into DuckDB, then ``ContextEngine.context(question,
   budget)`` fills the budget with memory lines and turns ranked together by
   poimen's fused scorer. Coverage is measured on ``Context.render()``, the text
   the agent gets, like every other method: a turn counts when the context
   holds its text or cites its dia_id.

Variants, each filled to the same budgets:

- ``poimen`` (the realistic design, the headline): the standing queries are
  eight topics (``TOPICS``), the same for every conversation, because at build
  time nobody knows the questions. Topics rather than one query per speaker:
  every rendered turn starts ``[date] Name:``, so a speaker query would match
  every line that speaker says.
- ``poimen-per-question``: each question of the conversation is a standing
  query (all of them in the conversation's one log and index, so one index
  build per conversation), then the same context builder. An upper bound on
  what knowing the question at build time buys; it costs one L1 run per
  question, so a run may measure it on the first questions of each
  conversation only (the section notes say so).
- ``poimen-untagged`` (a diagnostic, not a design): the same engine's
  ranking filled by the line text alone, without the provenance tag each
  rendered line carries. The gap between ``poimen`` and it is what the tags
  cost in budget; the gap between it and ``poimen-scorer`` is the ranking.
- ``poimen-no-memory`` / ``poimen-no-memory-untagged``: the same context
  builder over the raw units alone (``raw_units_engine``: memory lines, the
  memory prior and the memories' signatures left out), rendered as ``poimen``
  / as ``poimen-untagged``. ``poimen`` against the first is what the memory
  adds as the agent gets it (its ``*`` marks and closing note included); the
  untagged pair compares the rankings at equal rendering
  (``bench.locomo_memory``: paired intervals, the prior's dev sweep).
- ``poimen-scorer``: poimen's scorer as a plain retriever, ``Scorer.rank``
  over the conversation's turns rendered as the context holds them
  (``[date] speaker: text``, the chunker's line) with neighbour mixing, filled
  with ``baselines.fill``. The context builder should never cover less: the
  gap between the two is what the memories add.

Why the old variants went: they ranked memory blobs, then let RRF fuse the
turns those memories quote with dense search, so a quoted turn got two votes
and the fusion came out below dense alone.

``memory ceiling``: the share of evidence turns that some final topic memory
quotes (coverage of all the conversation's memories joined), the most a
context built only from memory lines could hold.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench import baselines, locomo_memory, report
from bench.locomo_data import CATEGORIES, Conversation, LoCoMo, QAItem, write_jsonl
from poimen.read.context import ContextEngine
from poimen.read.context_lines import kept_by_notes
from poimen.domain import Level, Query
from poimen.index import build_projections
from poimen.log.store import EventLog
from poimen.log.runs import acceptance
from poimen.write.loop import LoopConfig
from poimen.relevance import Scorer
from poimen.write.runner import RunPlan, execute, source_stream
from poimen.text.tokens import count_tokens

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
GOAL_MARGIN = {500: 0.08, 2000: 0.05}  # over the best baseline (issue 10)
GOAL_ABSOLUTE = {500: 0.63, 2000: 0.80}
BASELINES = ("bm25", "dense", "hybrid", "hybrid-linear")
# The conversations hybrid-linear's weights are chosen on (at least one other is always left to score them on).
DEV_CONVERSATIONS = ("conv-26", "conv-30")


class MemoEmbedder:
    """An embedder wrapper that keeps every vector in memory for the run.

    The scorer embeds a conversation's turns once per question; the disk cache
    would be read ~600 times per question otherwise.
    """

    def __init__(self, inner):
        self.inner = inner
        self._memo: dict[str, np.ndarray] = {}

    def __getattr__(self, name):  # model_id, dim, ...: the wrapped embedder's
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            for text, vec in zip(todo, self.inner.embed(todo)):
                self._memo[text] = vec
        if not texts:
            return self.inner.embed([])
        return np.stack([self._memo[t] for t in texts])


class ConversationContext:
    """One conversation's log and index under some standing queries, and the contexts built from them."""

    def __init__(self, conversation: Conversation, root: Path, queries: Sequence[Query], embedder, client,
                 chunk_tokens: int, memory_budget: int):
        root.mkdir(parents=True, exist_ok=True)
        self.conversation_id, self.queries = conversation.sample_id, list(queries)
        stream = source_stream(write_jsonl(conversation, root / "sources"), chunk_tokens)
        log = EventLog(root / "log")
        plans = [RunPlan(Level.L1, q, stream) for q in queries]
        start = time.perf_counter()
        with log.writer():
            self.outcomes = asyncio.run(execute(log, plans, client, LoopConfig(memory_budget=memory_budget), 1))
        self.loop_s = time.perf_counter() - start
        start = time.perf_counter()
        build_projections(root / "log", root / "index.duckdb", embedder)
        self.engine = ContextEngine.open(root / "index.duckdb", embedder)
        self.build_s = time.perf_counter() - start
        self.context_s = 0.0
        self.calls = 0
        self.levels: collections.Counter = collections.Counter()  # lines per level, over every context built
        self.tag_tokens: collections.Counter = collections.Counter()  # per budget: tokens spent on provenance tags
        self.memory_tokens: collections.Counter = collections.Counter()  # per budget: on the memory's * and its note
        self.context_tokens: collections.Counter = collections.Counter()
        self._bare: ContextEngine | None = None  # the same engine without memory lines, made on first use

    def context(self, question: str, budget: int) -> str:
        start = time.perf_counter()
        ctx = self.engine.context(question, budget=budget)
        self.context_s += time.perf_counter() - start
        self.calls += 1
        self.levels.update((budget, str(line.level)) for line in ctx.lines)
        self.tag_tokens[budget] += ctx.tokens - sum(count_tokens(line.text) + 1 for line in ctx.lines)
        kept = [o for line in ctx.lines for o in line.memories()[:1]]
        self.memory_tokens[budget] += len(kept) + sum(count_tokens(n) + 1 for n in kept_by_notes(kept))
        self.context_tokens[budget] += ctx.tokens
        return ctx.render()

    def untagged(self, question: str, budget: int, bare: bool = False) -> str:
        """Diagnostic: the engine's ranking (``bare``: without memory), de-duplicated and filled by the text alone
        (no provenance tags)."""
        engine, lines, used, seen = self._raw() if bare else self.engine, [], 0, set()
        for i, _ in engine.ranked(question):
            cost = count_tokens(engine.texts[i]) + 1
            if engine.keys[i] in seen or used + cost > budget:
                continue
            seen.add(engine.keys[i])
            lines.append(engine.texts[i])
            used += cost
        return "\n".join(lines)

    def bare(self, question: str, budget: int) -> str:
        """The same context builder over the raw units alone: what the context is without any memory."""
        return self._raw().context(question, budget=budget).render()

    def _raw(self) -> ContextEngine:
        if self._bare is None:
            self._bare = raw_units_engine(self.engine)
        return self._bare

    def memories(self) -> str:
        return "\n".join(o.final_memory for o in self.outcomes)


def raw_units_engine(engine: ContextEngine) -> ContextEngine:
    """``engine`` without its memory lines, its standing queries (the memory prior) and the memories' signatures:
    poimen's scorer, neighbour mixing and de-duplication over the raw units alone."""
    keep = [i for i, r in enumerate(engine.rows) if r["kind"] != "memory"]
    return ContextEngine(engine.db_path, engine.scorer, [engine.rows[i] for i in keep], engine.matrix[keep], {}, {})


def dev_split(data: LoCoMo) -> tuple[list[str], list[str]]:
    """(dev, test) conversation ids: ``DEV_CONVERSATIONS`` present in the run, the first one alone when that would
    leave nothing to test on."""
    ids = [c.sample_id for c in data.conversations]
    dev = [i for i in ids if i in DEV_CONVERSATIONS]
    if not dev or len(dev) == len(ids):
        dev = ids[:1]
    return dev, [i for i in ids if i not in dev]


class ScorerTurns(baselines._TurnRetriever):
    """poimen's fused scorer as a retriever over raw turns (whole turns as units, neighbour mixing on)."""

    def __init__(self, data: LoCoMo, embedder, skip: bool = True, dated: bool = True):
        super().__init__(data, skip, dated)
        self.scorer = Scorer(embedder)

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        """Minus the scorer's rank, so ``rank`` keeps the scorer's own order (ties included)."""
        units = [t.render(self.dated) for t in self.turns[sample_id]]
        out = np.full(len(units), -float(len(units)))
        for position, (i, _) in enumerate(self.scorer.rank(question, units, neighbours=True)):
            out[i] = -position
        return out


def _context_fn(by_conversation: dict[str, ConversationContext], untagged: bool = False, bare: bool = False):
    if untagged:
        return lambda item, budget: by_conversation[item.sample_id].untagged(item.question, budget, bare)
    if bare:
        return lambda item, budget: by_conversation[item.sample_id].bare(item.question, budget)
    return lambda item, budget: by_conversation[item.sample_id].context(item.question, budget)


def _run_stats(contexts: dict[str, ConversationContext]) -> dict:
    runs = [o for c in contexts.values() for o in c.outcomes]
    calls = sum(c.calls for c in contexts.values())
    levels: collections.Counter = sum((c.levels for c in contexts.values()), collections.Counter())
    tags: collections.Counter = sum((c.tag_tokens for c in contexts.values()), collections.Counter())
    marks: collections.Counter = sum((c.memory_tokens for c in contexts.values()), collections.Counter())
    spent: collections.Counter = sum((c.context_tokens for c in contexts.values()), collections.Counter())
    return {"runs": len(runs), "loop_s": sum(c.loop_s for c in contexts.values()),
            "index_s": sum(c.build_s for c in contexts.values()),
            "acceptance": acceptance(runs).rate,
            "memory_tokens": sum(count_tokens(o.final_memory) for o in runs) / max(1, len(runs)),
            "context_ms": sum(c.context_s for c in contexts.values()) / max(1, calls) * 1e3,
            "levels": {f"{b}:{lvl}": n for (b, lvl), n in sorted(levels.items())},
            "tag_share": {b: tags[b] / spent[b] for b in sorted(spent) if spent[b]},
            "memory_tag_share": {b: marks[b] / spent[b] for b in sorted(spent) if spent[b]}}


def run(data: LoCoMo, embedder, client, workdir: Path, budgets: Sequence[int] = baselines.BUDGETS,
        chunk_tokens: int = 1000, memory_budget: int = 1024, per_question_limit: int | None = None,
        progress: Callable[[str], None] = print) -> dict:
    """Baselines and poimen's variants on the same items, budgets and embedder.

    ``per_question_limit``: the per-question variant runs only the first that
    many questions of each conversation (None: all); its items are reported
    with the realistic variant on the same subset.
    """
    items = data.qa
    embedder = MemoEmbedder(embedder)
    out: dict = {"chunk_tokens": chunk_tokens, "memory_budget": memory_budget, "model": client.model_id,
                 "conversations": len(data.conversations), "methods": {}, "per_question_limit": per_question_limit}
    start = time.perf_counter()
    bm25 = baselines.BM25Turns(data)
    dense = baselines.DenseTurns(data, embedder)
    dense.warm([i.question for i in items])
    hybrid = baselines.HybridTurns(bm25, dense)
    linear = baselines.LinearTurns(data, embedder)
    linear.warm(items)
    dev_ids, test_ids = dev_split(data)
    dev_items = [i for i in items if i.sample_id in dev_ids]
    out["linear"] = {"dev": dev_ids, "test": test_ids, **linear.tune(dev_items, budgets)}
    out["baseline_index_s"] = time.perf_counter() - start
    progress(f"  locomo baselines indexed in {out['baseline_index_s']:.1f}s")
    scorer = ScorerTurns(data, embedder)
    for name, retriever in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid), ("hybrid-linear", linear),
                            ("poimen-scorer", scorer)):
        out["methods"][name] = baselines.evaluate(retriever.context, items, budgets)
        progress(f"  locomo {name}: " + " / ".join(f"{r['overall']:.3f}" for r in out["methods"][name]["coverage"].values()))

    topics = [Query(f"topic-{tid}", text, "episodic") for tid, text in TOPICS]
    realistic = {c.sample_id: ConversationContext(c, Path(workdir) / "topics" / c.sample_id, topics, embedder, client,
                                                  chunk_tokens, memory_budget) for c in data.conversations}
    out["prior"] = {"dev": dev_ids, **locomo_memory.sweep_prior({s: c.engine for s, c in realistic.items()},
                                                                 dev_items, budgets)}
    progress(f"  locomo memory prior on {', '.join(dev_ids)}: best weight {out['prior']['weight']}, closeness "
             f"{out['prior']['closeness']} (committed {out['prior']['committed']})")
    for name, untagged, bare in (("poimen", False, False), ("poimen-untagged", True, False),
                                 ("poimen-no-memory", False, True), ("poimen-no-memory-untagged", True, True)):
        out["methods"][name] = baselines.evaluate(_context_fn(realistic, untagged, bare), items, budgets)
    out["memory"] = locomo_memory.contribution(out["methods"], items, {"dev": dev_ids, "held-out": test_ids})
    out["topics"] = _run_stats(realistic)
    out["ceiling"] = locomo_memory.ceiling(items, {sid: c.memories() for sid, c in realistic.items()})
    progress(f"  locomo poimen: {out['topics']['runs']} runs in {out['topics']['loop_s']:.1f}s, index "
             f"{out['topics']['index_s']:.1f}s; " + " / ".join(f"{r['overall']:.3f}" for r in out["methods"]["poimen"]["coverage"].values()))

    asked: dict[str, list[QAItem]] = {}
    for item in items:
        asked.setdefault(item.sample_id, []).append(item)
    subset = [i for c in data.conversations for i in asked.get(c.sample_id, [])[:per_question_limit]]
    per_question = {}
    for conv in data.conversations:
        mine = [i for i in subset if i.sample_id == conv.sample_id]
        if mine:
            queries = [Query(f"question-{n}", i.question, "episodic") for n, i in enumerate(mine)]
            per_question[conv.sample_id] = ConversationContext(conv, Path(workdir) / "questions" / conv.sample_id, queries,
                                                               embedder, client, chunk_tokens, memory_budget)
    out["methods"]["poimen-per-question"] = baselines.evaluate(_context_fn(per_question), subset, budgets)
    out["questions"] = _run_stats(per_question)
    built = {(c.conversation_id, q.text): o.final_memory for c in per_question.values()
             for q in c.queries for o in c.outcomes if o.query_id == q.id}
    out["loop_vs_ranking"] = locomo_memory.loop_vs_ranking(built, subset, scorer.context)
    if len(subset) < len(items):
        out["subset"] = {"poimen": baselines.evaluate(_context_fn(realistic), subset, budgets),
                         "hybrid": baselines.evaluate(hybrid.context, subset, budgets)}
    progress(f"  locomo poimen-per-question ({len(subset)} questions): {out['questions']['runs']} runs in "
             f"{out['questions']['loop_s']:.1f}s; " + " / ".join(f"{r['overall']:.3f}" for r in out["methods"]["poimen-per-question"]["coverage"].values()))
    out["n"] = out["methods"]["bm25"]["n"]
    return out


def _overall(result: dict, method: str, budget: int) -> float:
    return result["methods"][method]["coverage"][budget]["overall"]


def goal_rows(result: dict) -> list[tuple]:
    """Per budget: poimen (realistic) against the best baseline + margin, and against the absolute goal."""
    rows = []
    for b in result["methods"]["poimen"]["coverage"]:
        best_name, best = max(((m, _overall(result, m, b)) for m in BASELINES if m in result["methods"]),
                             key=lambda t: t[1])
        got, margin, floor = _overall(result, "poimen", b), GOAL_MARGIN.get(b, 0.05), GOAL_ABSOLUTE.get(b)
        rows.append((f"coverage @{b}: poimen (topic queries) vs best baseline ({best_name})",
                     f">= {best + margin:.3f} (+{margin:.2f})", f"{got:.3f} ({got - best:+.3f})", got >= best + margin))
        if floor is not None:
            rows.append((f"coverage @{b}: poimen (topic queries)", f">= {floor:.2f}", f"{got:.3f}", got >= floor))
    return rows


def section(result: dict, assets: Path) -> dict:
    methods = result["methods"]
    budgets = list(methods["poimen"]["coverage"])
    cats = [c for c in CATEGORIES.values() if c in result["n"]]
    memory = locomo_memory.section_rows(result)
    head = goal_rows(result) + [r for r in memory if r[3] is not None]
    rows = list(head)

    def named(m: str, r: dict) -> str:
        return m if r["n"]["overall"] == result["n"]["overall"] else f"{m} (n = {r['n']['overall']})"

    for b in budgets:
        rows += [(f"coverage @{b}: {named(m, r)}", "", r["coverage"][b]["overall"], None) for m, r in methods.items()]
    rows += [r for r in memory if r[3] is None]
    for name, r in result.get("subset", {}).items():
        rows += [(f"coverage @{b}: {name} on the per-question subset", "", r["coverage"][b]["overall"], None) for b in budgets]
    t, q = result["topics"], result["questions"]
    rows += [("memory ceiling (evidence turns quoted by any topic memory)", "", result["ceiling"]["overall"], None),
             ("context build latency per call (topic index)", "", f"{t['context_ms']:.1f} ms", None),
             ("topic L1 runs / acceptance rate / mean final memory tokens", "",
              f"{t['runs']} / {t['acceptance']:.2f} / {t['memory_tokens']:.0f}", None),
             ("per-question L1 runs / acceptance rate / loop time", "",
              f"{q['runs']} / {q['acceptance']:.2f} / {q['loop_s']:.0f} s", None),
             ("share of context tokens spent on provenance tags (of which on the memory's * and note), per budget",
              "", ", ".join(f"@{b} {v:.1%} ({t['memory_tag_share'].get(b, 0.0):.1%})" for b, v in t["tag_share"].items()),
              None),
             ("context lines by budget:level (topic index, all questions)", "",
              ", ".join(f"{k} {v}" for k, v in t["levels"].items()), None)]
    table = [[named(m, r), b, *[r["coverage"][b].get(c, "") for c in ["overall", *cats]]]
             for m, r in methods.items() for b in budgets]
    table.append(["memory ceiling", "-", *[result["ceiling"].get(c, 0.0) for c in ["overall", *cats]]])
    plots = [report.grouped_bars(assets / f"locomo_coverage_{b}.png", ["overall", *cats],
                                 {m: [r["coverage"][b].get(c, 0.0) for c in ["overall", *cats]] for m, r in methods.items()},
                                 f"LoCoMo evidence coverage at {b} tokens") for b in budgets]
    limit = result.get("per_question_limit")
    notes = (f"{result['conversations']} conversations, {result['n']['overall']} questions (category 5 left out). "
             f"Model `{result['model']}`, chunk bound {result['chunk_tokens']} tokens, memory budget "
             f"{result['memory_budget']}, {len(TOPICS)} topic queries per conversation (see `bench/locomo_poimen.py`). "
             "Baselines render turns with their date (`[date] speaker: text`); hybrid is RRF(BM25, dense), k = 60; "
             "hybrid-linear is Snowball-stemmed BM25 + dense, min-max linear fusion and neighbour mixing (`bench/hybrid.py`), "
             + (f"alpha = {result['linear']['alpha']}, w = {result['linear']['w']}, chosen on the dev conversations "
                f"{', '.join(result['linear']['dev'])} only (held out: {', '.join(result['linear']['test']) or 'none'}). "
                if "linear" in result else "")
             + "`poimen-no-memory` is the same context builder over the raw units alone (memory lines, the memory "
             "prior and the memories' signatures left out), rendered as `poimen`; `poimen-no-memory-untagged` is its "
             "ranking filled as `poimen-untagged`: the pair compares the rankings at equal rendering. Intervals are "
             "paired bootstrap 95% intervals over questions. The memory prior's weight and closeness floor "
             "(`poimen/read/context.py`) were chosen on the same dev conversations only, by "
             "`bench.locomo_memory.sweep_prior` (the grid's best mean of both budgets, ties to the smaller weight; "
             "this run's pick is shown beside the committed constants); nothing else in poimen's scoring was chosen "
             "on LoCoMo. "
             "`poimen` is the context builder over the topic index (the headline); `poimen-scorer` is poimen's "
             "scorer over the raw turns; `poimen-untagged` (a diagnostic) is the same context builder's ranking "
             "filled without the provenance tag each rendered line carries. A turn counts when the context holds "
             "its text or cites its dia_id."
             + (f" `poimen-per-question` ran on the first {limit} questions of each conversation only "
                f"(n = {methods['poimen-per-question']['n']['overall']}, one L1 run each); the rows `... on the "
                "per-question subset` give the other methods on the same questions." if "subset" in result else ""))
    return {"title": "LoCoMo: evidence coverage of the context an agent gets", "rows": rows, "notes": notes,
            "headline": head,
            "tables": [{"title": f"coverage per category (n = {result['n']})",
                        "columns": ["method", "budget", "overall", *cats], "rows": table}], "plots": plots}
