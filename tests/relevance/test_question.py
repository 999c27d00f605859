"""A question is analysed in one place, ``poimen/relevance/question.py``, and once per lookup (issue 26, item 5).

The lookup (``poimen.index.lookup``) and the context builder (``poimen.read.context``) both take a ``Question``:
its vectors, terms, failure signatures and failure flag. Neither embeds a question or extracts its signatures
itself, and `mem lookup` (its hits, then the lines of each hit) embeds the question in one call.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from poimen.embedding.embedders import HashEmbedder
from poimen.relevance import Scorer, embedding_text
from poimen.relevance.question import Question, analyse
from poimen.serve.service import ReadService
from poimen.signatures import signature_keys
from index_helpers import built

ROOT = Path(__file__).resolve().parents[2] / "poimen"
HOME = "poimen/relevance/question.py"
CONSUMERS = ["poimen/index/lookup.py", "poimen/read/context.py"]
# What analysing a question is made of: embedding it, its signatures, title, facets, terms and failure flag.
ANALYSERS = {"embed", "embed_texts", "embedding_text", "extract_signatures", "signature_keys", "headline", "facets",
             "query_terms", "asks_for_failures", "is_failure_query", "query"}
QUESTION = "OOMKilled exit code 137: which pods failed, and how was it fixed?"


class CountingEmbedder:
    """The hash embedder, recording every batch it is asked to embed."""

    def __init__(self, dim: int = 64):
        self.inner = HashEmbedder(dim)
        self.model_id, self.dim = self.inner.model_id, self.inner.dim
        self.batches: list[list[str]] = []

    def embed(self, texts):
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def _called_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return names


def test_question_analysis_lives_in_relevance_question():
    assert Question.__module__ == "poimen.relevance.question"
    assert {"embed_texts", "extract_signatures", "headline", "facets"} <= _called_names(ROOT.parent / HOME)
    for consumer in CONSUMERS:
        source = (ROOT.parent / consumer).read_text(encoding="utf-8")
        assert "from poimen.relevance.question import" in source, f"{consumer} does not take a Question"
        analysing = _called_names(ROOT.parent / consumer) & ANALYSERS
        assert not analysing, f"{consumer} analyses a question itself ({sorted(analysing)}): use {HOME}"


@pytest.fixture
def service(tmp_path, template):
    log, db = built(tmp_path, template)
    embedder = CountingEmbedder()
    return ReadService(log, db, embedder), embedder


def test_a_lookup_and_the_lines_of_its_hits_embed_the_question_once(service):
    svc, embedder = service
    svc.index(), svc.engine()  # loaded first: opening embeds nothing of the question, but be sure it is not counted
    embedder.batches.clear()
    hits = svc.lookup(QUESTION, k=5)
    assert hits and any(h["lines"] for h in hits)
    forms = {QUESTION, embedding_text(QUESTION)}
    asked = [b for b in embedder.batches if forms & set(b)]
    assert len(asked) == 1, f"the question was embedded in {len(asked)} calls: {asked}"
    assert sorted(t for t in asked[0] if t in forms) == sorted(forms), "each form of the question embedded once"


def test_the_analysis_holds_what_both_consumers_read():
    embedder = HashEmbedder(64)
    titled = "Uploads fail with 413\n\nHTTP/1.1 413 Request Entity Too Large from nginx on POST /v1/files"
    q, t = analyse([QUESTION, titled], embedder)
    assert [s.key for s in q.signatures] == signature_keys(QUESTION) and q.failure is False  # "how was it fixed"
    assert t.failure and t.title == "Uploads fail with 413" and t.title_vector is not None and t.lexical == "cosine"
    assert q.title is None and q.title_vector is None and q.lexical == "bm25"
    # The lookup's vector is of the raw text (as the index embeds documents); the scorer's of the masked text (as
    # units are embedded), and equal to what the fused scorer computes for the same question.
    assert np.allclose(q.vector, embedder.embed([QUESTION])[0])
    scored = Scorer(embedder).query(QUESTION)
    assert np.allclose(q.scored.vector, scored.vector) and q.terms == scored.terms
    assert [f.text for f in q.scored.facets] == [f.text for f in scored.facets]


def test_a_question_embedded_by_another_model_is_refused(tmp_path, template):
    from poimen.errors import PoimenError

    log, db = built(tmp_path, template)
    svc = ReadService(log, db, HashEmbedder(64))
    other = Question.of(QUESTION, HashEmbedder(32))
    with pytest.raises(PoimenError, match="hash-bow-32"):
        svc.index().search(other)
    with pytest.raises(PoimenError, match="hash-bow-32"):
        svc.engine().context(other)


def test_lookup_by_text_and_by_question_agree(tmp_path, template):
    log, db = built(tmp_path, template)
    svc = ReadService(log, db, HashEmbedder(64))
    index = svc.index()
    by_text = [h.sha for h in index.search(QUESTION, 5)]
    assert by_text == [h.sha for h in index.search(Question.of(QUESTION, HashEmbedder(64)), 5)]
    engine = svc.engine()
    assert [x.text for x in engine.context(QUESTION, 300).lines] == \
        [x.text for x in engine.context(Question.of(QUESTION, HashEmbedder(64)), 300).lines]
