"""The read path: ``lookup(text)`` finds memories, L0 stream chunks and reference chunks, each with its evidence.

The docs are the final memory of each current L1/L2 run, every chunk of each
current L0 stream (hit kind 'evidence': a source is findable even where no gate
opened on it) and every R chunk (kind 'reference'). Two tiers, tier 1 first (a
sha appears once):

1. exact failure signatures — the signatures in ``text`` (``poimen.signatures``)
   looked up in ``failure_signature``. A key counts by its *specificity*, how
   few streams hold it (``poimen.signatures.specificity``: weight
   ``log(1 + streams / streams_with_key)``). Only a *decisive* key puts a doc
   in tier 1: one held by at most max(3, 1% of) the streams, and, for an
   exception, naming a message shape or frames beyond the class alone. Docs
   are ranked by the summed weight of the decisive keys they match, then of
   their other matched keys (a generic key only breaks ties), then memories
   before L0 chunks, then by their rank in tier 2. An error seen before lands on the memory that explained it,
   or on the chunk that showed it, not on every report that names the same
   exception class.
0. the line itself: a one-line question that is a line of a doc the lists below found (``_tier_exact``).
2. vectors and keywords, fused by reciprocal rank fusion. A doc's vector
   score is the best of its text vector and its symptom vector (a raw error
   finds a memory through its projection, a question through its text) and,
   for a titled query (``poimen.relevance.headline``: a ticket, an e-mail), of
   the query's title against the doc's text and headline vectors, so one list
   per kind of evidence: fusing the symptom and text lists as two separate
   votes made every memory with a projection outrank a decision record's exact
   text match, two weak votes beating one certain one. The keyword list is
   BM25 for a one-line query and the tf-idf cosine for a query of several
   lines, a document compared as one (``poimen.index.keyword``). Both the title
   field and the cosine were chosen on the dev half of the Hadoop duplicate
   reports (``bench/hadoop_dups.py``, which reports the held-out half apart).

The question arrives analysed (``poimen.relevance.question.Question``: its vectors, title, signatures), or as
text that ``MemoryIndex.question`` analyses once and keeps; `mem lookup` hands the same ``Question`` to the
context builder for the lines of each hit.

Vectors are loaded once into normalised float32 matrices and searched brute
force (one matrix-vector product), which at 100k × 384 is as fast as numpy
gets and exact. Provenance is read per search with a short read-only DuckDB
connection, so an open index holds no lock on the database between searches.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np

from poimen.embedding.embedders import embedder_for
from poimen.errors import IndexMissing, PoimenError
from poimen.index.hits import FUSED_LISTS, RRF_K, VECTOR_KINDS, Hit, Provenance, why_fused, why_signature
from poimen.index.keyword import BM25
from poimen.index.read import (
    DOCS_SQL,
    SIGNATURE_SQL,
    STREAMS_SQL,
    KIND_VECTORS_SQL,
    WALK_SQL,
    connect_read_only,
    trusted_text,
    vector_matrix,
)
from poimen.relevance.question import Question, analyse, lexical_scorer
from poimen.signatures.specificity import decisive, weight

EXACT_CHARS = 20  # a pasted line this long, held verbatim, is that line (a shorter one is a phrase)
MIN_COSINE = 0.0  # a vector candidate must score above this: orthogonal or opposite texts are not matches


class MemoryIndex:
    """Text vectors and keywords of every final memory, L0 stream chunk and reference chunk, ready to search."""

    def __init__(self, db_path: Path, embedder, shas: list[str], meta: list[dict], matrix: np.ndarray, model_id: str):
        self.db_path = Path(db_path)
        self.embedder = embedder
        self.shas = shas
        self.meta = meta
        self.matrix = matrix
        self.model_id = model_id
        self._bm25: BM25 | None = None
        self._questions: dict[str, Question] = {}  # text -> its analysis: a question searched again is not analysed again
        self._position = {sha: i for i, sha in enumerate(shas)}
        # memory sha -> (evidence, via L1): the walk is fixed for this loaded index, and a warm server that answers
        # the same memories again (an agent loop) then opens no connection for them; the server loads a new
        # MemoryIndex when the index file changes.
        self._walked: dict[str, tuple[tuple[Provenance, ...], tuple[str, ...]]] = {}

    @classmethod
    def open(cls, db_path: Path, embedder=None) -> "MemoryIndex":
        """Load the 'text' vectors once. ``embedder=None`` uses the one that built the index."""
        con = connect_read_only(db_path)
        try:
            try:
                table = con.sql(DOCS_SQL).to_arrow_table()
            except duckdb.CatalogException:
                raise IndexMissing(db_path, "not a poimen index (no projection tables)") from None
        finally:
            con.close()
        n = table.num_rows
        matrix = vector_matrix(table, int(getattr(embedder, "dim", 0) or 0))
        dim = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        model_ids = sorted(set(table.column("model_id").to_pylist()))
        if len(model_ids) > 1:
            raise IndexMissing(db_path, f"text vectors from several models {model_ids}")
        model_id = model_ids[0] if model_ids else getattr(embedder, "model_id", "")
        if embedder is None:
            embedder = embedder_for(model_id, dim, queries=True) if model_id else None  # questions only
        elif model_ids and embedder.model_id != model_id:
            raise PoimenError(f"{db_path}: index vectors are from {model_id}, but the query embedder is "
                              f"{embedder.model_id}; rebuild the index or use the same model")
        cols = {name: table.column(name).to_pylist() for name in ("sha", "level", "text", "query_id", "run_id", "source", "position")}
        meta = [{name: cols[name][i] for name in cols} for i in range(n)]
        index = cls(db_path, embedder, cols["sha"], meta, matrix, model_id)
        index._load_tool_context(model_id)
        return index

    def _load_tool_context(self, model_id: str) -> None:
        """Symptom and headline vectors (of docs that have a text vector), signature key → doc index → kind, and
        how many streams hold each key."""
        con = connect_read_only(self.db_path)
        try:
            symptoms = con.execute(KIND_VECTORS_SQL, ["symptom"]).fetchall()
            headlines = con.execute(KIND_VECTORS_SQL, ["headline"]).fetchall()
            signatures = con.execute(SIGNATURE_SQL).fetchall()
            (self.streams_total,) = con.execute(STREAMS_SQL).fetchone()
        except (duckdb.CatalogException, duckdb.BinderException):
            symptoms, headlines, signatures, self.streams_total = [], [], [], 0  # built before these projections
        finally:
            con.close()
        self.symptom_docs, self.symptom_matrix = self._kind_matrix(symptoms, model_id)
        self.headline_docs, self.headline_matrix = self._kind_matrix(headlines, model_id)
        self.signatures: dict[str, dict[int, str]] = {}
        self.key_streams: dict[str, int] = {}
        for key, kind, sha, streams in signatures:
            self.key_streams[key] = streams
            if sha in self._position:
                self.signatures.setdefault(key, {})[self._position[sha]] = kind

    def _kind_matrix(self, rows: list, model_id: str) -> tuple[list[int], np.ndarray]:
        """(doc indexes, their normalised vectors) from (sha, model id, vector) rows of docs with a text vector."""
        rows = [(sha, vec) for sha, mid, vec in rows if sha in self._position and (not model_id or mid == model_id)]
        matrix = np.array([v for _, v in rows], dtype=np.float32).reshape(len(rows), self.matrix.shape[1])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return [self._position[sha] for sha, _ in rows], matrix

    def __len__(self) -> int:
        return len(self.shas)

    # -- ranked lists --------------------------------------------------------
    def search_vector(self, vector: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` (doc index, cosine) for a query vector, best first; ties broken by doc index."""
        n = len(self.shas)
        if not n or k <= 0:
            return []
        scores = self.matrix @ np.asarray(vector, dtype=np.float32)
        if k < n:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(n)
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(i), float(scores[i])) for i in top]

    def search_symptom_vector(self, vector: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` (doc index, cosine) by the docs' symptom vectors; docs without one never appear."""
        return self._search_kind_matrix(self.symptom_docs, self.symptom_matrix, vector, k)

    def search_headline_vector(self, vector: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` (doc index, cosine) by the docs' headline vectors; docs that are not titled never appear."""
        return self._search_kind_matrix(self.headline_docs, self.headline_matrix, vector, k)

    @staticmethod
    def _search_kind_matrix(docs: list[int], matrix: np.ndarray, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if not len(docs) or k <= 0:
            return []
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        docs = np.asarray(docs)
        order = np.lexsort((docs, -scores))[:k]
        return [(int(docs[j]), float(scores[j])) for j in order]

    def questions(self, texts: list[str]) -> list[Question]:
        """Each text analysed with this index's embedder (``poimen.relevance.question``), the new ones in one batch,
        and kept (up to 1,000) so that searching the same text again analyses nothing."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._questions]
        if todo:
            if len(self._questions) + len(todo) > 1000:
                self._questions.clear()
            self._questions.update(zip(todo, analyse(todo, self.embedder)))
        return [self._questions[t] for t in texts]

    def question(self, question: str | Question) -> Question:
        """``question`` analysed (a ``Question`` given is taken as it is, if its vectors are this index's model's)."""
        if isinstance(question, Question):
            return question.for_model(self.model_id, self.db_path)
        return self.questions([question])[0]

    def search_kind(self, question: str | Question, kind: str = "text", k: int = 10) -> list[tuple[str, float]]:
        """(sha, cosine) by one kind of vector only ('text' or 'symptom'), best first: for comparing the two."""
        vector = self.question(question).vector
        found = self.search_symptom_vector(vector, k) if kind == "symptom" else self.search_vector(vector, k)
        return [(self.shas[i], score) for i, score in found]

    def search_keyword(self, text: str, k: int = 10) -> list[tuple[int, float, tuple[str, ...]]]:
        """The lexical list: BM25 for a one-line query, the tf-idf cosine for a query of several lines (a ticket, a
        pasted log or trace: a document compared as one; see ``poimen.index.keyword``)."""
        if self._bm25 is None:
            self._bm25 = BM25([m["text"] for m in self.meta])
        return self._bm25.similar(text, k) if lexical_scorer(text) == "cosine" else self._bm25.search(text, k)

    def search_bm25(self, text: str, k: int = 10) -> list[tuple[int, float, tuple[str, ...]]]:
        """BM25 whatever the query's shape: the plain baseline a benchmark compares lookup with."""
        if self._bm25 is None:
            self._bm25 = BM25([m["text"] for m in self.meta])
        return self._bm25.search(text, k)

    # -- tiers ---------------------------------------------------------------
    def ranked_lists(self, question: str | Question, depth: int) -> dict[str, list[tuple[int, float, tuple[str, ...]]]]:
        """(doc index, score, detail) by symptom vector, text vector, headline, best vector per doc, and keywords.

        For a titled query (``poimen.relevance.headline``) the 'headline' list
        scores its title against each doc's text vector and, for a titled doc,
        its headline vector (the better of the two): the title says what a
        ticket is about, and a body of pasted logs drowns it in the query's
        whole-text vector. For the 'vector' list the detail names which vector
        won ('symptom', 'text' or 'headline').

        The kinds' cosines are compared raw although their scales differ (a
        title against a title scores higher than a report against a report).
        Normalising each kind per query before taking the best was measured on
        the Hadoop duplicates and lost on the dev half and overall: a z-score
        over all docs of the kind (tiered MRR 0.781), the rank within the kind
        (0.770), the distance from the kind's median in the top ``depth`` (0.788),
        against 0.798 raw. A kind that scores high for a doc is evidence in
        itself there (a near-identical title), which normalising flattens.
        """
        q = self.question(question)
        lists = {"symptom": [(i, s, ()) for i, s in self.search_symptom_vector(q.vector, depth) if s > MIN_COSINE],
                 "text": [(i, s, ()) for i, s in self.search_vector(q.vector, depth) if s > MIN_COSINE]}
        if q.title_vector is not None:
            found = self.search_vector(q.title_vector, depth) + self.search_headline_vector(q.title_vector, depth)
            lists["headline"] = _best_per_doc([(i, s, ()) for i, s in found if s > MIN_COSINE], depth)
        vector = _best_per_doc([(i, s, (name,)) for name in ("text", "symptom", "headline") for i, s, _ in
                                lists.get(name, ())], depth)
        return {**lists, "vector": vector, "keyword": self.search_keyword(q.text, depth)}

    def key_specificity(self, key: str, kind: str) -> tuple[float, bool]:
        """(weight, decisive) of a signature key in this index (``poimen.signatures.specificity``)."""
        held = self.key_streams.get(key, 1)
        return weight(held, self.streams_total), decisive(key, kind, held, self.streams_total)

    def _tier_signature(self, question: str | Question,
                        tier2_rank: dict[int, int]) -> list[tuple[int, float, tuple[str, ...]]]:
        """Tier 1: (doc index, score, matched keys) for docs whose evidence holds a decisive signature of the question.

        Ranked by the summed weight of the decisive keys matched (the score), then of the other keys
        matched, then a memory before an L0 chunk (the memory explains, the chunk only shows: it is the
        memory's evidence or a stream no gate opened on), then tier-2 rank; matched keys are listed
        decisive first.
        """
        matched: dict[int, list[tuple[str, float, bool]]] = {}
        for sig in self.question(question).signatures:
            for i, kind in self.signatures.get(sig.key, {}).items():
                matched.setdefault(i, []).append((sig.key, *self.key_specificity(sig.key, kind)))
        unranked = len(self.shas) + 1
        scored = []
        for i, keys in matched.items():
            main = sum(w for _, w, d in keys if d)
            if main:
                keys.sort(key=lambda k: not k[2])  # stable: decisive keys first, each in the query's order
                generic = sum(w for _, w, d in keys if not d)
                scored.append((main, generic, self.meta[i]["level"] == "L0", tier2_rank.get(i, unranked), i, keys))
        scored.sort(key=lambda t: (-t[0], -t[1], t[2], t[3], t[4]))
        return [(i, main, tuple(k for k, _, _ in keys)) for main, _, _, _, i, keys in scored]

    def _tier_exact(self, text: str, rank2: dict[int, int]) -> list[int]:
        """Tier 0: the docs the ranked lists found that hold a one-line question as one of their lines, verbatim
        (``EXACT_CHARS`` or longer), memories before chunks, then by tier-2 rank. A raw line pasted from a log is that line: the chunk
        that holds it outranks one that shares its errno or its exception name (tier 1)."""
        line = text.strip()
        if "\n" in line or len(line) < EXACT_CHARS:
            return []
        held = [i for i in rank2 if line in self.meta[i]["text"]
                and line in (x.strip() for x in self.meta[i]["text"].split("\n"))]
        return sorted(held, key=lambda i: (self.meta[i]["level"] in ("L0", "R"), rank2[i], i))

    def _tier_fused(self, lists: dict) -> list[tuple[float, int, dict]]:
        """Tier 2: reciprocal rank fusion of the ranked lists; (score, doc index, {list: (rank, score, terms)})."""
        fused: dict[int, dict] = {}
        for name in FUSED_LISTS:
            for rank, (i, score, terms) in enumerate(lists[name], start=1):
                fused.setdefault(i, {})[name] = (rank, score, terms)
        return sorted(((sum(1.0 / (RRF_K + r) for r, _, _ in ls.values()), i, ls) for i, ls in fused.items()),
                      key=lambda t: (-t[0], t[1]))

    def _hit(self, i: int, score: float, tier: str, why: str, keys: tuple[str, ...] = (),
             lists: dict | None = None) -> Hit:
        m = self.meta[i]
        kind = {"R": "reference", "L0": "evidence"}.get(m["level"], "memory")
        trusted_text(self.db_path, "memory" if kind == "memory" else "evidence", m["sha"], m["text"], m["sha"])
        ranks = tuple((name.lstrip("_"), r) for name, (r, _, _) in sorted((lists or {}).items()))
        return Hit(m["sha"], m["level"], kind, score, tier, m["text"], m["query_id"], m["run_id"], (), why,
                   signature_keys=keys, ranks=ranks)

    def hit_for(self, sha: str, score: float, tier: str, why: str) -> Hit | None:
        """A hit for the doc ``sha`` ranked by another tier (an incident card found by its lines), with its provenance;
        None when the index has no such doc."""
        i = self._position.get(sha)
        return None if i is None else self._with_provenance([self._hit(i, score, tier, why)])[0]

    def _with_provenance(self, hits: list[Hit]) -> list[Hit]:
        from dataclasses import replace

        self._walk([h for h in hits if h.kind == "memory" and h.sha not in self._walked])
        out = []
        for h in hits:
            if h.kind in ("reference", "evidence"):  # a chunk is its own evidence
                m = self.meta[self._position[h.sha]]
                out.append(replace(h, evidence=(Provenance(h.sha, m["source"], int(m["position"])),)))
            else:
                evidence, via = self._walked[h.sha]
                out.append(replace(h, evidence=evidence, via=via))
        return out

    def _walk(self, memories: list[Hit]) -> None:
        """Record each memory's evidence chunks and, for an L2 memory, the L1 memories it came via (one connection)."""
        if not memories:
            return
        con = connect_read_only(self.db_path)
        try:
            for h in memories:
                rows = con.execute(WALK_SQL, [h.sha]).fetchall()
                evidence = tuple(Provenance(sha, src, int(pos)) for what, sha, src, pos in rows if what == "evidence")
                via = tuple(sha for what, sha, _, _ in rows if what == "via" and sha != h.sha) if h.level == "L2" else ()
                self._walked[h.sha] = (evidence, via)
        finally:
            con.close()

    def search(self, question: str | Question, k: int = 10, explain: bool = False,
               tiers: tuple[str, ...] = ("signature", "fused"), provenance: bool = True) -> list[Hit]:
        """The ``k`` best hits for a question (its text, or its ``Question``), tier 1 (signatures) before tier 2
        (fused), each with its provenance.

        ``explain`` makes ``why`` say which keys matched and the rank in every list; ``tiers`` can
        restrict the search to one tier and ``provenance=False`` skips the evidence walk (benchmarks).
        """
        text = question.text if isinstance(question, Question) else question
        if not text.strip() or not self.shas or k <= 0:
            return []
        q = self.question(question)
        lists = self.ranked_lists(q, max(50, 5 * k))
        fused = self._tier_fused(lists)
        lists_of = {i: ls for _, i, ls in fused}
        sizes = {name: len(found) for name, found in lists.items()}
        lexical = q.lexical
        for name in VECTOR_KINDS:  # shown by --explain: the rank of each kind of vector
            for rank, (i, score, _) in enumerate(lists.get(name, ()), start=1):
                lists_of.get(i, {}).setdefault(f"_{name}", (rank, score, ()))
        hits: list[Hit] = []
        rank2 = {i: n for n, (_, i, _) in enumerate(fused, start=1)}
        if "signature" in tiers:  # tier 0: the pasted line itself, where a doc the lists found holds it verbatim
            for i in self._tier_exact(text, rank2)[:k]:
                hits.append(self._hit(i, 1.0, "exact", "tier 0: holds the line verbatim", (), lists_of.get(i, {})))
        if "signature" in tiers:
            seen = {h.sha for h in hits}
            for i, score, keys in self._tier_signature(q, rank2)[:k]:
                if self.shas[i] in seen or len(hits) >= k:
                    continue
                held = [(key, self.key_streams.get(key, 1), *self.key_specificity(key, self.signatures[key][i]))
                        for key in keys] if explain else []
                why = why_signature(keys, held, self.streams_total, score, rank2.get(i), lists_of.get(i, {}), sizes,
                                     explain, lexical)
                hits.append(self._hit(i, score, "signature", why, keys, lists_of.get(i, {})))
        if "fused" in tiers:
            seen = {h.sha for h in hits}
            for score, i, ls in fused:
                if len(hits) >= k:
                    break
                if self.shas[i] not in seen:
                    names = ([ls["vector"][2][0]] if "vector" in ls else []) + (["keyword"] if "keyword" in ls else [])
                    hits.append(self._hit(i, score, "+".join(names), why_fused(ls, score, explain, sizes, lexical),
                                          lists=ls))
        return self._with_provenance(hits[:k]) if provenance else hits[:k]


def _best_per_doc(found: list[tuple[int, float, tuple[str, ...]]], depth: int) -> list[tuple[int, float, tuple[str, ...]]]:
    """Each doc once, at its best score (the first of equal ones), best first; ties by doc index."""
    best: dict[int, tuple[float, tuple[str, ...]]] = {}
    for i, s, detail in found:
        if i not in best or s > best[i][0]:
            best[i] = (s, detail)
    return sorted(((i, s, d) for i, (s, d) in best.items()), key=lambda t: (-t[1], t[0]))[:depth]


def lookup(db_path: Path, text: str, k: int = 10, embedder=None, explain: bool = False) -> list[Hit]:
    """Search the index at ``db_path`` once; ``embedder=None`` uses the model that built it."""
    return MemoryIndex.open(db_path, embedder).search(text, k, explain)
