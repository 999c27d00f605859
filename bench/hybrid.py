"""The strongest cheap retriever a user could assemble: stemmed BM25 + dense, linear fusion, neighbour mixing.

Why: issue 27 found poimen's margins were over an unstemmed BM25 + dense RRF
hybrid, not over what the cheap ingredients allow. This one is built from the
same ingredients, each at its best:

- BM25 (bm25s, Lucene variant, English stopwords) over Snowball-stemmed tokens
  (``snowballstemmer``, the stemmer poimen's own scorer uses);
- dense cosine under the run's embedder (MiniLM by default, poimen.embedding.embedders);
- linear fusion: both score vectors min-max normalised over the corpus for the
  query, then ``alpha * bm25 + (1 - alpha) * dense`` (a constant vector
  normalises to zeros);
- neighbour mixing: a unit's fused score plus ``w`` times the fused scores of
  the units just before and after it in the same stream (a fix written under
  its error, a reply under its question).

``alpha`` and ``w`` are never fixed here: each benchmark picks them on its own
dev split (``pick_weights``) and says so in its report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from poimen.text.tokens import count_tokens

ALPHAS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0)
NEIGHBOUR_WEIGHTS = (0.0, 0.1, 0.25, 0.5)


@functools.cache
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(list(texts), stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False)


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min(initial=0.0)), float(x.max(initial=0.0))
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


class HybridCorpus:
    """Units (lines, turns, windows) of one searchable corpus, each tagged with the stream it stands in.

    Neighbours are the adjacent units of the same stream, in the order given.
    """

    def __init__(self, units: Sequence[str], streams: Sequence[str], embedder):
        import bm25s

        if len(units) != len(streams):
            raise ValueError(f"{len(units)} units but {len(streams)} stream tags")
        self.units = list(units)
        self.bm25 = bm25s.BM25()
        self.bm25.index(_tokens(self.units), show_progress=False)
        self.embedder = embedder
        self.vectors = np.asarray(embedder.embed(self.units), dtype=np.float32) if self.units else np.zeros((0, 1))
        tags = list(streams)
        self.prev_same = np.array([i > 0 and tags[i - 1] == tags[i] for i in range(len(tags))], dtype=bool)
        self.next_same = np.array([i + 1 < len(tags) and tags[i + 1] == tags[i] for i in range(len(tags))], dtype=bool)
        self._parts: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def warm(self, queries: Sequence[str]) -> None:
        """Embed many queries in one batch (one call per query is far slower on CPU)."""
        todo = sorted({q for q in queries if q not in self._parts})
        for q, vec in zip(todo, self.embedder.embed(todo) if todo else []):
            self._parts[q] = (self._bm25(q), _minmax(self.vectors @ np.asarray(vec, dtype=np.float32)))

    def _bm25(self, query: str) -> np.ndarray:
        terms = [t for t in _tokens([query])[0] if t in self.bm25.vocab_dict]
        if not terms or not self.units:
            return np.zeros(len(self.units))
        return _minmax(np.asarray(self.bm25.get_scores(terms), dtype=np.float64))

    def parts(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The min-max normalised BM25 and dense scores of every unit for ``query`` (memoised)."""
        if query not in self._parts:
            self.warm([query])
        return self._parts[query]

    def scores(self, query: str, alpha: float, w: float) -> np.ndarray:
        lexical, dense = self.parts(query)
        fused = alpha * lexical + (1.0 - alpha) * dense
        mixed = fused.copy()
        if w and len(fused) > 1:
            mixed[1:] += np.where(self.prev_same[1:], w * fused[:-1], 0.0)
            mixed[:-1] += np.where(self.next_same[:-1], w * fused[1:], 0.0)
        return mixed

    def ranked(self, query: str, alpha: float, w: float) -> list[int]:
        """Unit indices, best first; ties keep corpus order."""
        return [int(i) for i in np.argsort(-self.scores(query, alpha, w), kind="stable")]


@functools.lru_cache(maxsize=1 << 16)
def line_cost(text: str) -> int:
    """Tokens of a line with its newline (a weight search fills the same lines thousands of times: cached)."""
    return count_tokens(text) + 1


def fill_text(ranked: Sequence[int], texts: Sequence[str], budget_tokens: int,
              members: Callable[[int], Sequence[int]] | None = None) -> str:
    """The top units, in rank order, whose lines fit ``budget_tokens`` together (each line counted with its newline).

    ``members(i)``: the line indices unit ``i`` covers (a window's lines); a line already taken is not paid for
    twice. A unit that does not fit is skipped and the next one tried, as ``bench.baselines.fill`` does.
    """
    members = members or (lambda i: (i,))
    taken: list[int] = []
    seen: set[int] = set()
    used = 0
    for unit in ranked:
        new = [j for j in members(unit) if j not in seen]
        cost = sum(line_cost(texts[j]) for j in new)
        if not new or used + cost > budget_tokens:
            continue
        taken += new
        seen.update(new)
        used += cost
        if budget_tokens - used < 8:
            break
    return "\n".join(texts[j] for j in taken)


def pick_weights(objective: Callable[[float, float], float], alphas: Sequence[float] = ALPHAS,
                 neighbour_weights: Sequence[float] = NEIGHBOUR_WEIGHTS) -> tuple[float, float, float]:
    """The ``(alpha, w, objective)`` with the highest objective on a dev split; ties go to the earlier pair."""
    best = None
    for alpha in alphas:
        for w in neighbour_weights:
            value = objective(alpha, w)
            if best is None or value > best[2]:
                best = (alpha, w, value)
    return best
