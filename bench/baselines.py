"""The baselines a user would pick for LoCoMo, and the evidence-coverage metric poimen is held to.

Why: before poimen's memories can be called useful, they must beat what a user
gets for free: keyword search (BM25), dense search, or the usual hybrid of the
two (reciprocal rank fusion, RRF) over the raw turns, with the top turns pasted
into the context up to a token budget. All search only the question's own
conversation, as each conversation is one user's history.

The hybrid fuses the two full rankings with RRF, ``1/(k + rank)`` summed over
BM25 and dense, ``k = 60`` (``poimen.index.lookup.RRF_K``, Cormack et al.
2009: the same constant poimen's own lookup fuses with). It is the strongest
of the three on LoCoMo, so it is the one poimen's goal line must clear.

Filling the budget: turns are taken in rank order, each rendered as
``[date] speaker: text`` plus a newline and counted with ``count_tokens``; a
turn that does not fit is skipped and the next one tried (``skip=True``), so a
long low-ranked turn never leaves the rest of the budget empty.
``skip=False`` stops at the first turn that does not fit instead (it scores
within 0.001 of skipping on LoCoMo: turns are short).

The date costs about 10 tokens a line. ``dated=False`` renders
``speaker: text`` instead; ``run`` reports both, since the reference figures
measured earlier on this machine (BM25 ~0.55 / 0.68, dense ~0.51 / 0.72 at 500
/ 2000 tokens) match the undated rendering, and poimen's context should be
compared with the dated one (a temporal question needs the date).

Evidence coverage: the share of a question's evidence turns that the context
holds; a turn counts when the context cites its dia_id (``D3:12``) or contains
its raw text (whitespace-insensitive). Averaged per category and over all
items (micro: every question weighs the same).

Run ``python -m bench.baselines`` to score all three on all ten conversations.
"""

from __future__ import annotations

import argparse
import functools
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from bench.text import squash
from bench.locomo_data import CATEGORIES, LoCoMo, QAItem, Turn
from poimen.text.tokens import count_tokens

BUDGETS = (500, 2000)
ContextFn = Callable[[QAItem, int], "str | Sequence[Turn]"]


@functools.lru_cache(maxsize=1 << 16)
def turn_cost(turn: Turn, dated: bool = True) -> int:
    """Tokens of the turn's rendered line with its newline (turns repeat across questions: cached)."""
    return count_tokens(turn.render(dated) + "\n")


def fill(ranked: Iterable[Turn], budget_tokens: int, skip: bool = True, dated: bool = True) -> list[Turn]:
    """The top turns, in rank order, whose rendered lines fit in ``budget_tokens`` together."""
    out, used = [], 0
    for turn in ranked:
        cost = turn_cost(turn, dated)
        if used + cost > budget_tokens:
            if skip:
                continue
            break
        out.append(turn)
        used += cost
        if budget_tokens - used < 8:  # no rendered turn is shorter than its "[date] name:" prefix
            break
    return out


def render_context(turns: Sequence[Turn], dated: bool = True) -> str:
    return "\n".join(t.render(dated) for t in turns)


def cites(context: str, dia_id: str) -> bool:
    """``D3:1`` cited as a whole id: not a prefix of ``D3:12`` nor a suffix of ``D13:1``."""
    return re.search(rf"(?<![\w:]){re.escape(dia_id)}(?![\w:])", context) is not None


def coverage(item: QAItem, context: str | Sequence[Turn]) -> float:
    """Share of the item's evidence turns that the context holds (cited by dia_id or present as text)."""
    if not item.evidence:
        raise ValueError("coverage of an item without evidence is undefined; such items are skipped at load")
    if isinstance(context, str):
        flat = squash(context)
        texts = item.evidence_texts or ("\0",) * len(item.evidence)
        held = sum(cites(context, d) or squash(t) in flat for d, t in zip(item.evidence, texts))
    else:
        ids = {t.dia_id for t in context}
        held = sum(d in ids for d in item.evidence)
    return held / len(item.evidence)


def evaluate(
    context_fn: ContextFn,
    items: Sequence[QAItem],
    budgets: Sequence[int] = BUDGETS,
) -> dict:
    """Mean evidence coverage per category and overall, for each budget.

    ``context_fn(item, budget_tokens)`` returns either the context text (any
    system: poimen's lookup, a prompt) or the list of turns it picked.
    Returns ``{"coverage": {budget: {"overall": x, "<category>": x, ...}},
    "n": {"overall": n, "<category>": n}, "per_item": {budget: [x per item, in
    the order of items]}, "seconds": wall time}`` (``per_item`` pairs two
    methods question by question, and gives any split's figures).
    """
    started = time.perf_counter()
    per_budget: dict[int, dict[str, list[float]]] = {b: {} for b in budgets}
    per_item: dict[int, list[float]] = {b: [] for b in budgets}
    for item in items:
        for budget in budgets:
            score = coverage(item, context_fn(item, budget))
            per_budget[budget].setdefault(item.category_name, []).append(score)
            per_item[budget].append(score)
    names = [n for n in CATEGORIES.values() if any(n in per_budget[b] for b in budgets)]
    result = {"coverage": {}, "n": {"overall": len(items)}, "per_item": per_item, "seconds": 0.0}
    for budget, by_cat in per_budget.items():
        row = {"overall": float(np.mean([s for v in by_cat.values() for s in v])) if items else 0.0}
        row.update({n: float(np.mean(by_cat[n])) for n in names if n in by_cat})
        result["coverage"][budget] = row
    if budgets:
        result["n"].update({n: len(per_budget[budgets[0]].get(n, [])) for n in names})
    result["seconds"] = time.perf_counter() - started
    return result


class _TurnRetriever:
    """Ranks the turns of the question's own conversation; subclasses score them."""

    def __init__(self, data: LoCoMo, skip: bool = True, dated: bool = True):
        self.data = data
        self.skip = skip
        self.dated = dated
        self.turns = {c.sample_id: list(c.turns) for c in data.conversations}
        self._last_key: tuple[str, str] | None = None
        self._last_rank: list[Turn] = []

    @staticmethod
    def document(turn: Turn) -> str:
        # The date is left out of what is matched: questions rarely name one, and it would
        # make every turn of a session look alike to both BM25 and the embedder.
        return f"{turn.speaker}: {turn.content}"

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        raise NotImplementedError

    def rank(self, item: QAItem) -> list[Turn]:
        """All turns of the item's conversation, best first; ties keep conversation order."""
        key = (item.sample_id, item.question)
        if key != self._last_key:  # evaluate asks once per budget: rank once
            turns = self.turns[item.sample_id]
            order = np.argsort(-self.scores(item.sample_id, item.question), kind="stable")
            self._last_key, self._last_rank = key, [turns[i] for i in order]
        return self._last_rank

    def context(self, item: QAItem, budget_tokens: int) -> list[Turn]:
        """The top-ranked turns of the item's conversation that fill ``budget_tokens``."""
        return fill(self.rank(item), budget_tokens, self.skip, self.dated)


class BM25Turns(_TurnRetriever):
    """BM25 (bm25s, Lucene variant, English stopwords, no stemming) over the turns of each conversation."""

    def __init__(self, data: LoCoMo, skip: bool = True, dated: bool = True):
        import bm25s

        super().__init__(data, skip, dated)
        self._bm25s = bm25s
        self.index = {}
        for sid, turns in self.turns.items():
            model = bm25s.BM25()
            model.index(self._tokens([self.document(t) for t in turns]), show_progress=False)
            self.index[sid] = model

    def _tokens(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        model = self.index[sample_id]
        query = [w for w in self._tokens([question])[0] if w in model.vocab_dict]
        if not query:
            return np.zeros(len(self.turns[sample_id]), dtype=np.float32)
        return np.asarray(model.get_scores(query))


class DenseTurns(_TurnRetriever):
    """Cosine similarity between the question and each turn under a poimen embedder."""

    def __init__(self, data: LoCoMo, embedder=None, skip: bool = True, dated: bool = True):
        from poimen.embedding.embedders import SentenceTransformerEmbedder

        super().__init__(data, skip, dated)
        self.embedder = embedder or SentenceTransformerEmbedder()
        self.vectors = {sid: self.embedder.embed([self.document(t) for t in turns]) for sid, turns in self.turns.items()}
        self._query_cache: dict[str, np.ndarray] = {}

    def warm(self, questions: Sequence[str]) -> None:
        """Embed many questions in one batch (one call per question is far slower on CPU)."""
        todo = sorted({q for q in questions if q not in self._query_cache})
        for q, vec in zip(todo, self.embedder.embed(todo) if todo else []):
            self._query_cache[q] = vec

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        if question not in self._query_cache:
            self._query_cache[question] = self.embedder.embed([question])[0]
        return self.vectors[sample_id] @ self._query_cache[question]


class HybridTurns(_TurnRetriever):
    """RRF of a BM25 and a dense ranking of the same turns: ``sum 1/(k + rank)``, ranks from 1, ``k = RRF_K``.

    Built over existing retrievers (their indexes and embeddings are reused).
    Ties in either ranking keep conversation order, as ``rank`` does.
    """

    def __init__(self, bm25: BM25Turns, dense: DenseTurns, skip: bool = True, dated: bool = True, k: int | None = None):
        from poimen.index.hits import RRF_K

        super().__init__(bm25.data, skip, dated)
        self.parts = (bm25, dense)
        self.k = RRF_K if k is None else k

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        fused = np.zeros(len(self.turns[sample_id]))
        for part in self.parts:
            order = np.argsort(-part.scores(sample_id, question), kind="stable")
            ranks = np.empty(len(order))
            ranks[order] = np.arange(1, len(order) + 1)
            fused += 1.0 / (self.k + ranks)
        return fused


class LinearTurns(_TurnRetriever):
    """Stemmed BM25 + dense with linear fusion and neighbour mixing (``bench.hybrid``) over each conversation's turns.

    The strongest cheap baseline: ``alpha`` and ``w`` are set by ``tune`` on dev conversations only.
    """

    def __init__(self, data: LoCoMo, embedder, skip: bool = True, dated: bool = True, alpha: float = 0.5, w: float = 0.0):
        from bench import hybrid

        super().__init__(data, skip, dated)
        self.corpora = {sid: hybrid.HybridCorpus([self.document(t) for t in turns], [sid] * len(turns), embedder)
                        for sid, turns in self.turns.items()}
        self.alpha, self.w = alpha, w

    def warm(self, items: Sequence[QAItem]) -> None:
        for sid, corpus in self.corpora.items():
            corpus.warm([i.question for i in items if i.sample_id == sid])

    def set_weights(self, alpha: float, w: float) -> None:
        self.alpha, self.w, self._last_key = alpha, w, None  # a ranking cached under other weights is stale

    def scores(self, sample_id: str, question: str) -> np.ndarray:
        return self.corpora[sample_id].scores(question, self.alpha, self.w)

    def tune(self, dev: Sequence[QAItem], budgets: Sequence[int] = BUDGETS) -> dict:
        """Pick ``alpha`` and ``w`` for the best mean coverage over ``budgets`` on ``dev`` items, and keep them."""
        from bench import hybrid

        def objective(alpha: float, w: float) -> float:
            self.set_weights(alpha, w)
            cov = evaluate(self.context, dev, budgets)["coverage"]
            return float(np.mean([cov[b]["overall"] for b in budgets]))

        alpha, w, value = hybrid.pick_weights(objective)
        self.set_weights(alpha, w)
        return {"alpha": alpha, "w": w, "dev_coverage": value}


def run(data: LoCoMo, embedder=None, skip: bool = True, budgets: Sequence[int] = BUDGETS) -> dict[str, dict]:
    """The three baselines on every scored item; per method the ``evaluate`` result plus index time."""
    results = {}
    made: dict[str, _TurnRetriever] = {}
    for name, make in (("bm25", lambda: BM25Turns(data, skip)), ("dense", lambda: DenseTurns(data, embedder, skip)),
                       ("hybrid", lambda: HybridTurns(made["bm25"], made["dense"], skip))):
        started = time.perf_counter()
        retriever = made[name] = make()
        if isinstance(retriever, DenseTurns):
            retriever.warm([item.question for item in data.qa])
        built = time.perf_counter() - started
        for dated in (True, False):
            retriever.dated = dated
            result = evaluate(retriever.context, data.qa, budgets)
            result["index_seconds"] = built
            results[name if dated else f"{name}-undated"] = result
    return results


def format_table(results: dict[str, dict]) -> str:
    """Plain-text table: one row per (method, budget), one column per category."""
    any_result = next(iter(results.values()))
    cols = ["overall", *[c for c in CATEGORIES.values() if c in any_result["n"]]]
    lines = ["method  budget  " + "  ".join(f"{c:>11}" for c in cols)]
    for method, result in results.items():
        for budget, row in result["coverage"].items():
            lines.append(f"{method:<7} {budget:>6}  " + "  ".join(f"{row[c]:>11.3f}" for c in cols))
    lines.append("n               " + "  ".join(f"{any_result['n'][c]:>11}" for c in cols))
    return "\n".join(lines)


def report_section(results: dict[str, dict], assets_dir: Path) -> dict:
    """A ``bench.report`` section: the coverage table and grouped bars per budget (no goals: reference)."""
    from bench import report

    any_result = next(iter(results.values()))
    cats = [c for c in CATEGORIES.values() if c in any_result["n"]]
    rows = [[m, b, *[row[c] for c in ["overall", *cats]]] for m, r in results.items() for b, row in r["coverage"].items()]
    plots = [
        report.grouped_bars(Path(assets_dir) / f"locomo_baselines_{b}.png", ["overall", *cats],
                            {m: [r["coverage"][b][c] for c in ["overall", *cats]] for m, r in results.items()},
                            f"LoCoMo evidence coverage at {b} tokens")
        for b in any_result["coverage"]
    ]
    return {
        "title": "LoCoMo baselines: evidence coverage",
        "rows": [(f"{m} coverage @{b}", "", r["coverage"][b]["overall"], None) for m, r in results.items() for b in r["coverage"]],
        "tables": [{"title": f"per category (n = {any_result['n']})", "columns": ["method", "budget", "overall", *cats], "rows": rows}],
        "plots": plots,
    }


def main(argv: list[str] | None = None) -> None:
    from bench import locomo_data

    parser = argparse.ArgumentParser(description="Score the BM25, dense and hybrid turn baselines on LoCoMo.")
    parser.add_argument("--stop-at-first", action="store_true", help="stop filling at the first turn that does not fit")
    parser.add_argument("--cache-dir", type=Path, help="keep turn embeddings here, keyed by (model, text sha)")
    parser.add_argument("--report-dir", type=Path, help="also write REPORT.md and its plots here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    data = locomo_data.load()
    from poimen.embedding.embedders import SentenceTransformerEmbedder

    results = run(data, SentenceTransformerEmbedder(cache_dir=args.cache_dir), skip=not args.stop_at_first)
    print(format_table(results))
    for method, result in results.items():
        print(f"{method}: index {result['index_seconds']:.1f}s, scoring {result['seconds']:.1f}s")
    print(f"total {time.perf_counter() - started:.1f}s")
    if args.report_dir:
        from bench import report

        section = report_section(results, args.report_dir / report.ASSETS)
        meta = {"duration_s": time.perf_counter() - started, "repo": Path(__file__).resolve().parents[1]}
        print(report.write_report({"locomo_baselines": section}, args.report_dir, meta))


if __name__ == "__main__":
    main()
