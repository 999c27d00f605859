"""A question analysed once: everything the lookup and the context builder read of it.

The read side ranks for a question twice over: the lookup (``poimen.index.lookup``) ranks whole documents by
vectors, keywords and failure signatures, and the context builder (``poimen.read.context``) ranks units with the
fused scorer. Each used to analyse the question itself, so `mem lookup` embedded the question twice and pulled its
failure signatures twice. ``Question.of`` (and ``analyse`` for a batch) does it once, with one call to the embedder,
and both take the result:

- ``vector``: the question's text as the index embeds a document's text (raw), for the lookup's text and symptom
  lists; ``title`` and ``title_vector`` for a titled question (a ticket, an e-mail: ``headline``).
- ``scored``: the fused scorer's query (``ScoredQuery``): its terms, facets and failure flag, with vectors of the
  text as the unit vectors are embedded (``embedding_text``: numbers masked, cut to ``EMBED_CHARS``).
- ``signatures``: the failure signatures it names (lookup's tier 1, the context builder's signature bonus).
- ``failure``: it asks for failures (``asks_for_failures``); ``lexical``: the keyword scorer its shape calls for.

The two vectors differ on purpose: the index's text vectors are of raw text and its unit vectors of masked text,
and a question is compared with each in its own form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from poimen.errors import PoimenError
from poimen.relevance import ScoredQuery, embed_texts, scored_query
from poimen.relevance.terms import embedding_text, facets
from poimen.relevance.units import headline
from poimen.signatures import Signature, extract_signatures


@dataclass(frozen=True, eq=False)
class Question:
    """One question's analysis, made by ``Question.of`` / ``analyse`` (never by a consumer)."""

    text: str
    model_id: str  # the embedder its vectors are from
    vector: np.ndarray
    title: str | None
    title_vector: np.ndarray | None
    scored: ScoredQuery
    signatures: tuple[Signature, ...]

    @classmethod
    def of(cls, text: str, embedder) -> "Question":
        return analyse([text], embedder)[0]

    @property
    def failure(self) -> bool:
        """It asks for the failures themselves (a raw error, "which errors…"), not how one was fixed."""
        return self.scored.failure

    @property
    def terms(self) -> dict[str, float]:
        return self.scored.terms

    @property
    def lexical(self) -> str:
        """The keyword scorer for its shape: 'cosine' for several non-blank lines (a document), else 'bm25'."""
        return lexical_scorer(self.text)

    def for_model(self, model_id: str, where: object) -> "Question":
        """Itself, when its vectors are from ``model_id``; a question embedded by another model is refused."""
        if model_id and self.model_id != model_id:
            raise PoimenError(f"{where}: vectors are from {model_id}, but the question was embedded with "
                              f"{self.model_id}; analyse it with the index's embedder")
        return self


def analyse(texts: Sequence[str], embedder) -> list[Question]:
    """Each text analysed, every vector of every text from one call to the embedder (a model is the slow part)."""
    plans = []
    for text in texts:
        title = headline(text)
        parts = facets(text)
        plans.append((text, title, parts, [text, *([title] if title else [])],
                      [embedding_text(p) for p in (text, *parts)]))
    wanted = list(dict.fromkeys(t for _, _, _, raw, masked in plans for t in (*raw, *masked)))
    vectors = dict(zip(wanted, embed_texts(embedder, wanted).astype(np.float32))) if wanted else {}
    out = []
    for text, title, parts, raw, masked in plans:
        signatures = tuple(extract_signatures(text))
        scored = scored_query(text, parts, [vectors[m] for m in masked], signed=bool(signatures))
        out.append(Question(text, embedder.model_id, vectors[text], title, vectors[title] if title else None, scored,
                            signatures))
    return out


def lexical_scorer(text: str) -> str:
    """'cosine' for a query of several non-blank lines (a document), 'bm25' for a one-line query."""
    return "cosine" if sum(1 for line in text.splitlines() if line.strip()) > 1 else "bm25"
