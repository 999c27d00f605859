"""The context builder: the lines an agent should read for a question, filled to a token budget by global relevance.

It ranks *units*, not blobs — every L0 unit of every recorded stream, every R (reference) unit and every line of
every current final memory (the ``unit`` projection) — with the same fused scorer the offline gate uses
(``poimen.relevance``), so it never does worse than that scorer run as a plain retriever over the raw units. What
the memories add is a prior, not a replacement: a unit that a standing query's memory kept gains when that standing
query is about the question, ``MEMORY_PRIOR`` scaled by how far their closeness (cosine) rises above
``MEMORY_CLOSENESS``. A broad standing query is a little close to most questions, and without the floor its
memory's lines rose a little for every one of them, which cost coverage on LoCoMo's dev conversations; both
constants are the best of ``bench.locomo_memory.sweep_prior`` on those conversations (see there). Units sharing a
``variant_key`` are listed once (with how many times they occur), and a memory line and the L0 unit it copies are
one candidate that carries both provenances.

Neighbour mixing follows the stream: an L0 unit inherits ``NEIGHBOUR_WEIGHT`` of
the score of the unit before it in its source. When the question asks for
failures (a raw error message, "which errors…"; not "how was X fixed?"), a
failure signature of the question found in a unit's chunk
(``failure_signature``) adds ``SIGNATURE_BONUS`` to the units of that chunk.

Each line is tagged with its provenance: store/level, the memory or chunk sha,
and ``source#chunk:line``. ``mem context``, ``mem ask`` and the archival tier of
``mem compose`` all read through ``ContextEngine.context``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from poimen.read.context_lines import Context, ContextLine, HitLines, Origin
from poimen.errors import IndexMissing, PoimenError
from poimen.relevance import (FAILURE_STEMS, NEIGHBOUR_WEIGHT, SYNONYMS, Scorer, severity, states_a_failure,
                              synonyms, unit_terms, variant_key, variants)
from poimen.relevance.question import Question
from poimen.text.tokens import count_tokens

MEMORY_PRIOR = 0.05
MEMORY_CLOSENESS = 0.2
SIGNATURE_BONUS = 0.3

_UNITS_SQL = """
SELECT u.owner_sha, u.line_no, u.start, u.kind, u.level, u.text, u.text_sha, u.source, u.position, u.chunk_line,
       u.evidence_sha, u.query_id, u.store, u.heading, v.model_id, v.vector
FROM unit u JOIN unit_vector v ON v.text_sha = u.text_sha
ORDER BY u.source, u.position, u.start, u.kind, u.owner_sha, u.line_no
"""
_QUERIES_SQL = "SELECT DISTINCT query_id, query_text FROM run WHERE current AND query_id <> '' ORDER BY query_id"
_SIGNATURES_SQL = "SELECT DISTINCT key, evidence_sha FROM failure_signature ORDER BY key, evidence_sha"


class ContextEngine:
    """Every unit of an index, its vector and terms, ready to rank for any question."""

    def __init__(self, db_path: Path, scorer: Scorer, rows: list[dict], matrix: np.ndarray,
                 queries: dict[str, str], signatures: dict[str, set[str]]):
        self.db_path = Path(db_path)
        self.scorer = scorer
        self._scored: tuple[str, np.ndarray, np.ndarray] | None = None  # question, scores before the prior, closeness
        self.prior_weight, self.prior_floor = MEMORY_PRIOR, MEMORY_CLOSENESS
        self.rows = rows
        self.matrix = matrix
        self.queries = queries
        self.signatures = signatures
        # Candidates: one per distinct unit text; each keeps every origin (memory lines and the chunk units they copy).
        self.texts: list[str] = []
        self.origins: list[list[Origin]] = []
        index: dict[str, int] = {}
        self.vector_row: list[int] = []
        for r_i, r in enumerate(rows):
            o = Origin(r["kind"], r["level"], r["owner_sha"], r["source"], int(r["position"]), int(r["chunk_line"]),
                       r["store"], r["query_id"])
            i = index.get(r["text"])
            if i is None:
                i = index[r["text"]] = len(self.texts)
                self.texts.append(r["text"])
                self.origins.append([])
                self.vector_row.append(r_i)
            self.origins[i].append(o)
        self.candidate = index  # unit text -> its candidate
        for os_ in self.origins:
            os_.sort(key=lambda o: (o.kind != "memory", o.level != "L2", o.sha, o.position, o.line))
        self.vectors = matrix[self.vector_row] if len(self.vector_row) else np.zeros((0, matrix.shape[1]), np.float32)
        # Stream order of L0/R units: the previous candidate in the same source, for neighbour mixing.
        self.previous = np.full(len(self.texts), -1, dtype=np.int64)
        last: dict[str, int] = {}
        for r in rows:
            if r["kind"] == "memory":
                continue
            i = index[r["text"]]
            prev = last.get(r["source"])
            if prev is not None and prev != i and self.previous[i] < 0:
                self.previous[i] = prev
            last[r["source"]] = i
        self.chunk_of = [{o.sha for o in os_ if o.kind != "memory"} for os_ in self.origins]
        for r in rows:
            if r["kind"] == "memory" and r["evidence_sha"]:
                self.chunk_of[index[r["text"]]].add(r["evidence_sha"])
        self.severity = np.array([severity(t) for t in self.texts], dtype=np.float32)
        self.stated_failures = [i for i, t in enumerate(self.texts) if states_a_failure(t)]
        self.keys = [variant_key(t) for t in self.texts]
        self.repeats = defaultdict(int)
        group_texts: dict[str, dict[str, None]] = defaultdict(dict)
        for r in rows:
            if r["kind"] != "memory":
                key = variant_key(r["text"])
                self.repeats[key] += 1
                group_texts[key][r["text"]] = None
        # What the repeats of a log line differ in (its hosts, nodes or pids), for "×n: gige5, gige7"
        self.variants = {key: variants(list(texts)) for key, texts in group_texts.items() if len(texts) > 1}
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(self.texts):
            for term in unit_terms(t):
                self.postings[term].append(i)
        # Terms a candidate has only from the heading of a section it stands in (Scorer.lexical's heading share).
        heading_terms: dict[int, set[str]] = defaultdict(set)
        for r in rows:
            if r.get("heading"):
                i = index[r["text"]]
                heading_terms[i].update(unit_terms(r["heading"]) - unit_terms(r["text"]))
        self.heading_postings: dict[str, list[int]] = defaultdict(list)
        for i in sorted(heading_terms):
            for term in sorted(heading_terms[i]):
                self.heading_postings[term].append(i)

    @classmethod
    def open(cls, db_path: Path, embedder=None) -> "ContextEngine":
        import duckdb

        from poimen.embedding.embedders import embedder_for
        from poimen.index.read import connect_read_only, trusted_text, vector_matrix

        con = connect_read_only(Path(db_path))
        try:
            try:
                table = con.sql(_UNITS_SQL).to_arrow_table()
                queries = dict(con.execute(_QUERIES_SQL).fetchall())
                signatures: dict[str, set[str]] = defaultdict(set)
                for key, chunk in con.execute(_SIGNATURES_SQL).fetchall():
                    signatures[key].add(chunk)
            except duckdb.CatalogException:
                raise IndexMissing(db_path, "an index without units (built before they existed)") from None
            except duckdb.BinderException as exc:  # a column added since: the index is a projection, rebuild it
                raise IndexMissing(db_path, f"an index from an older poimen ({str(exc).splitlines()[0]}); "
                                            "rebuild it from the log: mem rebuild") from None
        finally:
            con.close()
        n = table.num_rows
        model_ids = sorted(set(table.column("model_id").to_pylist()))
        if len(model_ids) > 1:
            raise IndexMissing(db_path, f"unit vectors from several models {model_ids}")
        if embedder is None:
            from poimen.embedding.embedders import default_embedder

            embedder = embedder_for(model_ids[0], queries=True) if model_ids else default_embedder()  # questions only
        elif model_ids and embedder.model_id != model_ids[0]:
            raise PoimenError(f"{db_path}: unit vectors are from {model_ids[0]}, but the query embedder is "
                              f"{embedder.model_id}; rebuild the index or use the same model")
        matrix = vector_matrix(table, int(embedder.dim))
        names = [c for c in table.column_names if c not in ("vector", "model_id")]
        cols = {c: table.column(c).to_pylist() for c in names}
        rows = [{c: cols[c][i] for c in names} for i in range(n)]
        for r in rows:  # the engine hashes less than it tokenises: every unit is checked once, at load
            trusted_text(db_path, "unit", f"{r['owner_sha']}|{r['line_no']}|{r['start']}", r["text"], r["text_sha"],
                         tombstones=False)
        scorer = Scorer(embedder)
        return cls(db_path, scorer, rows, matrix, queries, dict(signatures))

    def __len__(self) -> int:
        return len(self.texts)

    # -- scoring -------------------------------------------------------------
    def question(self, question: str | Question) -> Question:
        """``question`` analysed with this engine's embedder (``poimen.relevance.question``); a ``Question`` given
        (the lookup's, for the lines of its hits) is taken as it is, if its vectors are this engine's model's."""
        if isinstance(question, Question):
            return question.for_model(self.scorer.embedder.model_id, self.db_path)
        return Question.of(question, self.scorer.embedder)

    def scores(self, question: str | Question) -> np.ndarray:
        """The fused score of every candidate for ``question`` (``Scorer.combine``, as the offline gate scores),
        with neighbour mixing along each stream, the signature bonus and the memory prior. The last question's
        scores before the prior are kept: ``mem lookup`` asks for the lines of each of its hits with the same
        question, and a sweep of the prior's weights (``set_memory_prior``) re-ranks without re-scoring."""
        text = question.text if isinstance(question, Question) else question
        if self._scored is None or self._scored[0] != text:
            q = self.question(question)
            self._scored = (text, self._score(q), self._closeness(q))
        _, scores, closeness = self._scored
        return scores + memory_prior(closeness, self.prior_weight, self.prior_floor)

    def set_memory_prior(self, weight: float, closeness: float) -> None:
        """Use ``weight`` and ``closeness`` for the memory prior (``MEMORY_PRIOR``, ``MEMORY_CLOSENESS``)."""
        if not 0.0 <= closeness < 1.0 or weight < 0.0:
            raise PoimenError(f"memory prior: weight must be >= 0 and closeness in [0, 1), not {weight}, {closeness}")
        self.prior_weight, self.prior_floor = weight, closeness

    def _score(self, question: Question) -> np.ndarray:
        sc = self.scorer
        q = question.scored
        n = len(self.texts)
        if not n:
            return np.zeros(0, dtype=np.float32)

        def share(part) -> np.ndarray:
            lexical = np.zeros(n, dtype=np.float32)
            if part.total:
                for term, w in list(part.terms.items()) + list(part.expansion.items()):
                    hit: set[int] = set()
                    headed: set[int] = set()
                    for t in synonyms(term) if term in part.terms else (term,):
                        hit.update(self.postings.get(t, ()))
                        headed.update(self.heading_postings.get(t, ()))
                    if part.failure and term in FAILURE_STEMS and term in part.terms:
                        hit.update(self.stated_failures)
                    if hit:
                        lexical[np.fromiter(hit, dtype=np.int64)] += w
                    if headed - hit and sc.heading_weight:
                        lexical[np.fromiter(headed - hit, dtype=np.int64)] += sc.heading_weight * w
                lexical = np.minimum(1.0, lexical / part.total)
            return lexical

        scores = sc.combine(q, lambda part: self.vectors @ part.vector, share, self.severity)
        has_prev = self.previous >= 0
        mixed = scores.copy()
        mixed[has_prev] += NEIGHBOUR_WEIGHT * scores[self.previous[has_prev]]
        if question.failure:  # a raw error, or a question after failures; not "how was the X fixed?", which wants the fix
            mixed += self._signature_bonus(question)
        return mixed

    def _closeness(self, question: Question) -> np.ndarray:
        """Per candidate, how close the standing query of the closest memory that kept it is to ``question``
        (cosine, floored at 0; 0 for a line no memory kept)."""
        out = np.zeros(len(self.texts), dtype=np.float32)
        if not self.queries:
            return out
        ids = sorted(self.queries)
        vectors = self.scorer.vectors([self.queries[i] for i in ids])
        close = {qid: max(0.0, float(vectors[j] @ question.scored.vector)) for j, qid in enumerate(ids)}
        for i, origins in enumerate(self.origins):
            out[i] = max((close.get(o.query_id, 0.0) for o in origins if o.kind == "memory"), default=0.0)
        return out

    def _signature_bonus(self, question: Question) -> np.ndarray:
        bonus = np.zeros(len(self.texts), dtype=np.float32)
        if not self.signatures:
            return bonus
        chunks: set[str] = set()
        for sig in question.signatures:
            chunks |= self.signatures.get(sig.key, set())
        if chunks:
            for i, owned in enumerate(self.chunk_of):
                if owned & chunks:
                    bonus[i] = SIGNATURE_BONUS
        return bonus

    # -- the context ---------------------------------------------------------
    def ranked(self, question: str | Question) -> list[tuple[int, float]]:
        scores = self.scores(question)
        order = np.lexsort((np.arange(len(scores)), -scores))
        return [(int(i), float(scores[i])) for i in order]

    def context(self, question: str | Question, budget: int = 2000, first: tuple[tuple[str, str], ...] = ()) -> Context:
        """The best lines for ``question`` whose rendered form fits ``budget`` tokens, best first, each tagged.

        ``first``: (unit text, memory sha) pairs placed before the ranking, in order, each tagged with that memory
        first (an incident's card, whole: its symptom, cause and fix belong together whatever each line scores)."""
        text = question.text if isinstance(question, Question) else question
        if not text.strip():
            raise PoimenError("the question is empty")
        out = Context(text, budget)
        seen: set[str] = set()
        scores = self.scores(question)
        lead = []
        for unit, owner in first:
            i = self.candidate.get(unit)
            if i is not None:
                self.origins[i].sort(key=lambda o, owner=owner: o.sha != owner)  # the card's own tag first
                lead.append((i, float(scores[i])))
        for i, score in lead + self.ranked(question):
            if self.keys[i] in seen:
                continue
            line = ContextLine(self.texts[i], score, tuple(self.origins[i]), max(1, self.repeats.get(self.keys[i], 1)),
                               self.variants.get(self.keys[i], ()))
            cost = out.cost(line)
            if out.tokens + cost > budget:
                if budget - out.tokens < 12:
                    break
                continue
            seen.add(self.keys[i])
            out.add(line, cost)
        return out

    def hit_lines(self, question: str | Question, owners: list[set[str]], k: int = 4) -> list[HitLines]:
        """The lines each hit of a lookup shows, hits in rank order, ``owners[n]`` the shas hit n+1 draws from.

        What a person reading the hits needs is each line once. A hit shows its ``k`` best distinct lines
        (``_distinct_lines``: near-duplicates, the same line with other numbers, ids or hosts as ``variant_key`` has it,
        are one line marked ×n), less those a higher hit already shows: a chunk that is a memory's evidence, or
        one template repeated over many chunks, would otherwise print the same lines under every hit, and one
        incident would be read once per hit. What is left out is counted against the hit that showed it
        (``HitLines.shown_above``), so the reader still learns that this hit holds that incident; a hit whose
        best lines were all shown above shows no line, only that note. Its next-best lines are not promoted in
        their place: they would make a repeat look like new material, and they rank below what the hit is about."""
        shown: dict[str, int] = {}  # dedup key -> the (1-based) hit that showed it
        out = []
        for n, shas in enumerate(owners, start=1):
            best = self._distinct_lines(question, shas, k)
            above = Counter(shown[self.keys[i]] for _, i, _ in best if self.keys[i] in shown)
            lines = tuple(self._hit_line(i, s, shas, times) for s, i, times in best if self.keys[i] not in shown)
            shown.update({self.keys[i]: n for _, i, _ in best if self.keys[i] not in shown})
            out.append(HitLines(lines, tuple(sorted(above.items()))))
        return out

    def _distinct_lines(self, question: str | Question, shas: set[str], k: int) -> list[tuple[float, int, int]]:
        """(score, candidate, how many of the hit's lines it stands for) of the ``k`` best lines of the given
        memories/chunks that are not near-duplicates of a better one: a chunk of one template repeated (a retry
        loop's 'ERROR IN CONTACTING RM.' every two seconds) is one line ×n, not k copies of it."""
        ranked = self._ranked_lines(question, shas)
        times = Counter(self.keys[i] for _, i in ranked)
        best: dict[str, tuple[float, int, int]] = {}
        for s, i in ranked:
            if len(best) == k:
                break
            best.setdefault(self.keys[i], (s, i, times[self.keys[i]]))
        return list(best.values())

    def _hit_line(self, i: int, score: float, shas: set[str], repeats: int = 1) -> ContextLine:
        """Candidate ``i`` as a hit's line, the hit's own origin first: under a chunk hit a line a memory also kept
        is tagged with that chunk, where the hit found it, not with the memory (a hit of its own, or not found)."""
        origins = tuple(sorted(self.origins[i], key=lambda o: o.sha not in shas))
        return ContextLine(self.texts[i], score, origins, repeats, self.variants.get(self.keys[i], ()) if repeats > 1 else ())

    def _ranked_lines(self, question: str | Question, shas: set[str], proximity: float = 0.5,
                      scale: float = 6.0) -> list[tuple[float, int]]:
        """(score, candidate) of the lines of the given memories/chunks, in the order a hit shows them: fused score
        plus closeness in the stream to the unit that matches ``question`` best (the failure itself, for a raw
        error); the best line, then the best cause line and the best fix line, then the rest.

        Only lines that the given memories or chunks hold: a chunk hit shows its own chunk, not what memories
        kept from its stream. Those memory lines are the memory's to show, under the memory's own hit (it also
        ranks for the question if they matter), and adding them to every chunk of the stream printed the same
        memory lines under each chunk hit, hiding what the chunk itself says."""
        scores = self.scores(question)
        members = [i for i, os_ in enumerate(self.origins) if any(o.sha in shas for o in os_)]
        if not members:
            return []
        stream_pos = self._stream_positions()
        sources = {stream_pos[i][0] for i in members if i in stream_pos}
        anchors = [i for i in stream_pos if stream_pos[i][0] in sources]
        anchor = max(anchors, key=lambda i: (scores[i], -i)) if anchors else None
        ranked = []
        for i in members:
            s = float(scores[i])
            if anchor is not None and i in stream_pos and stream_pos[i][0] == stream_pos[anchor][0]:
                s += proximity * float(np.exp(-abs(stream_pos[i][1] - stream_pos[anchor][1]) / scale))
            ranked.append((s, i))
        ranked = [(s, i) for s, i in sorted(ranked, key=lambda t: (-t[0], t[1])) if s > 0]
        # What a user wants beside a known failure: the failure line (the pasted line itself when the hit holds it,
        # not its twin from another host or pid), then its cause and its fix (the best line in the cause and fix
        # vocabularies of relevance.SYNONYMS), then the rest by score.
        text = (question if isinstance(question, str) else question.text).strip()
        exact = [(s, i) for s, i in ranked if self.texts[i].strip() == text]
        picked = exact[:1] or ranked[:1]
        for group in SYNONYMS:
            best = next(((s, i) for s, i in ranked if unit_terms(self.texts[i]) & group), None)
            if best and best not in picked:
                picked.append(best)
        return picked + [t for t in ranked if t not in picked]

    def _stream_positions(self) -> dict[int, tuple[str, int]]:
        """Candidate -> (source, ordinal of its first occurrence among that source's L0 units)."""
        if not hasattr(self, "_positions"):
            index = {t: i for i, t in enumerate(self.texts)}
            positions: dict[int, tuple[str, int]] = {}
            counter: dict[str, int] = defaultdict(int)
            for r in self.rows:  # rows are in (source, position, start) order
                if r["kind"] == "evidence":
                    i = index[r["text"]]
                    if i not in positions:
                        positions[i] = (r["source"], counter[r["source"]])
                    counter[r["source"]] += 1
            self._positions = positions
        return self._positions


def memory_prior(closeness: np.ndarray, weight: float = MEMORY_PRIOR, floor: float = MEMORY_CLOSENESS) -> np.ndarray:
    """Per candidate, ``weight`` scaled by how far its closeness (to the question, of the closest standing query
    whose memory kept it) rises above ``floor``: the full weight for a standing query that is the question
    itself, nothing at or below the floor."""
    if not weight:
        return np.zeros_like(closeness, dtype=np.float32)
    return (weight * np.maximum(0.0, closeness - floor) / (1.0 - floor)).astype(np.float32)


def build_context(db_path: Path, question: str | Question, budget: int = 2000, embedder=None) -> Context:
    """One question, one context: ``ContextEngine.open(db_path).context(question, budget)``."""
    return ContextEngine.open(db_path, embedder).context(question, budget)
