"""Keyword scoring over memory and reference text: exact words (error codes, hostnames, flags) that vectors blur.

A small in-memory inverted index, built once when the index opens. Tokens are
lowercase runs of letters and digits, also kept joined across ``-_.:/`` so
``oom-killed`` and ``nginx.conf`` match as written; a short stopword list
keeps question words from ranking anything.

Two scorers read the same postings:

- ``search``: Okapi BM25, for a question or a pasted error line. It sums, over
  the query's distinct terms, a saturating score of each in the doc.
- ``similar``: the cosine of tf-idf vectors (``1 + log tf`` times BM25's idf),
  for a query that is itself a document — a ticket, a pasted log or trace. BM25
  does not normalise by the query, so every incidental term of a long query (a
  config dump's ``property``/``value``, a build log's ``INFO``) adds to the
  score, and the docs that share the most of that noise win; the cosine weighs
  each side by its own length, so a doc must share the *distinctive* part. On the
  Hadoop duplicate reports (``bench/hadoop_dups.py``) the cosine alone finds the
  earlier report with MRR 0.78 where BM25 reaches 0.69.

Both read a stack trace without the runtime's and the test harness's frames
(``poimen.signatures.frames``): every JUnit trace shares some thirty of them, so
two reports pasting unrelated test traces looked alike through the harness, and
the earlier report of the same failure, told in prose, lost to them (keyword
MRR on the Hadoop duplicates 0.760 -> 0.775; lookup's tiered MRR 0.798 -> 0.806).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from poimen.signatures.frames import without_runtime_frames

_WORD = re.compile(r"[a-z0-9]+(?:[-_.:/][a-z0-9]+)*")
STOPWORDS = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its of on or that the this to "
    "was were what when where which who why will with".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase words, joined forms kept too; a trace's runtime and test-harness frames are not read
    (``poimen.signatures.frames``): every JUnit trace shares them, so they made any two traces look alike."""
    out = []
    for word in _WORD.findall(without_runtime_frames(text).lower()):
        parts = re.split(r"[-_.:/]", word)
        if len(parts) > 1:
            out.append(word)
        out.extend(p for p in parts if p and p not in STOPWORDS)
    return out


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) with a non-negative idf, and the tf-idf cosine (``similar``) on the same postings."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75):
        self.n = len(texts)
        self.k1, self.b = k1, b
        lengths = np.zeros(self.n, dtype=np.float32)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            lengths[i] = sum(counts.values())
            for term, tf in counts.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(i)
                tfs.append(tf)
        avg = float(lengths.mean()) if self.n and lengths.mean() > 0 else 1.0
        self._norm = k1 * (1 - b + b * lengths / avg)
        self._postings = {t: (np.asarray(d, dtype=np.int64), np.asarray(f, dtype=np.float32)) for t, (d, f) in postings.items()}
        squares = np.zeros(self.n, dtype=np.float64)
        for term, (docs, tfs) in self._postings.items():
            squares[docs] += (self._tf_idf(tfs, term)) ** 2
        self._doc_norm = np.sqrt(squares)

    def idf(self, term: str) -> float:
        df = len(self._postings[term][0]) if term in self._postings else 0
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def _tf_idf(self, tfs: np.ndarray, term: str) -> np.ndarray:
        return (1.0 + np.log(tfs)) * self.idf(term)

    def _has(self, term: str, doc: int) -> bool:
        docs = self._postings[term][0]  # ascending: documents were added in order
        j = int(np.searchsorted(docs, doc))
        return j < len(docs) and int(docs[j]) == doc

    def search(self, query: str, k: int) -> list[tuple[int, float, tuple[str, ...]]]:
        """Top ``k`` (doc index, score, matched terms), best first; ties broken by doc index."""
        terms = sorted(set(tokenize(query)))
        if not self.n or not terms:
            return []
        scores = np.zeros(self.n, dtype=np.float32)
        for term in terms:
            if term not in self._postings:
                continue
            docs, tfs = self._postings[term]
            scores[docs] += self.idf(term) * tfs * (self.k1 + 1) / (tfs + self._norm[docs])
        return self._top(scores, terms, k)

    def _top(self, scores: np.ndarray, terms: list[str], k: int) -> list[tuple[int, float, tuple[str, ...]]]:
        hits = np.flatnonzero(scores > 0)
        if not len(hits):
            return []
        order = hits[np.lexsort((hits, -scores[hits]))][:k]
        out = []
        for i in order:
            matched = tuple(t for t in terms if t in self._postings and self._has(t, int(i)))
            out.append((int(i), float(scores[i]), matched))
        return out

    def similar(self, text: str, k: int) -> list[tuple[int, float, tuple[str, ...]]]:
        """Top ``k`` (doc index, tf-idf cosine, matched terms) for a document-sized ``text``, best first; ties by
        doc index. A term no doc holds has no idf here and is left out of the query's norm too."""
        counts = Counter(t for t in tokenize(text) if t in self._postings)
        if not self.n or not counts:
            return []
        scores = np.zeros(self.n, dtype=np.float64)
        query_norm = 0.0
        for term, tf in counts.items():
            docs, tfs = self._postings[term]
            weight = float(self._tf_idf(np.float32(tf), term))
            query_norm += weight * weight
            scores[docs] += weight * self._tf_idf(tfs, term)
        scores /= np.sqrt(query_norm) * np.where(self._doc_norm > 0, self._doc_norm, 1.0)
        return self._top(scores, sorted(counts), k)
