"""The fused relevance scorer: how well one unit of text (a sentence, a log line, a chat turn) answers a query.

    score(q, u) = cos(E(q), E(u)) + LEXICAL_WEIGHT · share(q, u) [+ FAILURE_BONUS] [+ NEIGHBOUR_WEIGHT · score(q, u₋₁)]
    share(q, u) = (Σ w(t) over query terms u holds + expansion terms + name bridges u holds) / Σ w(t) over query terms

- ``cos`` comes from the configured embedder (all-MiniLM-L6-v2 from its wheel
  by default; the hash embedder in tests).
- ``share`` is the rarity-weighted share of the query's content words found in
  the unit: Σ w(t) over query terms the unit holds / Σ w(t) over all query
  terms. Rarity is ``8 − zipf`` from the ``wordfreq`` package (its English
  frequency list; a word it does not know, such as an identifier, weighs most),
  so "lgbtq" counts more than "support" and a stop-word counts nothing. It is
  taken from a maintained word list rather than corpus statistics so that a
  unit's score never depends on what else happens to be in the chunk.
- Words match whole, after the Snowball English stemmer ('failures' and
  'failure' meet; 'component' and 'compute' do not, which four-letter prefix
  keys used to join). Identifiers — a token with a digit, an underscore, a dot,
  a slash or inner capitals (error codes, hosts, flags, class names) — match
  exactly; a unit also offers the words inside its identifiers, so the query
  word "ingress" finds ``nginx.ingress.kubernetes.io``.
- Memory-conditioned expansion: the rarest terms of the current memory (its
  names, words and plain numbers; not ids that mix digits in, such as a
  request id shared by every line of one request) join the query at ``EXPANSION_WEIGHT`` of their
  weight, adding to the share but not to its denominator, so a bridge entity
  found early can pull in its second hop without making the first hop count less.
- Name bridges: a name of two or more Title-case words in the memory ("Two
  Dollar Radio", "Georg Philipp Telemann") that the question does not hold
  counts ``BRIDGE_WEIGHT`` of its words' summed rarity when a unit holds all of
  its words. Word expansion misses such names, since each of their words is
  common; as a whole they are specific. The offline gate also scores a chunk a
  second time with the units it just chose in the memory, so a bridge and its
  second hop in one chunk meet as they would across two.
- Lists name alternatives: a question with a word list of three or more
  ("What plans, goals and dreams did they talk about?") is also scored once
  per word ("What dreams did they talk about?"), as a facet, so a unit about
  one dream answers it though it holds a third of the list's words. Without
  this a broad standing query kept nothing from a whole conversation.
- Headings: a unit counts what the heading of its section adds to its
  lexical share at ``HEADING_WEIGHT`` (``split_units`` gives each unit the
  Markdown headings above it and the title line of its paragraph). A sentence's
  subject is often only in its title ("Neighbours" / "It was created by Reg
  Watson"), and a runbook's "## Rollback" says what each step under it is for.
  Only the lexical share: the cosine stays the unit's own, and a memory line
  (copied without its heading) is scored by what it says.
- For a query that asks for failures (failure words or a signature poimen
  knows, and no "how was it fixed"/"what caused it" intent) a unit that looks
  like a failure — a log level (upper case anywhere, or in a format's own
  place: ``[error]``, logcat's ``E``, ``level=error``, ``"level":"warn"``,
  glog's ``E0312``, ``<3>``), an exception, a trace frame, an HTTP
  error status — gets ``FAILURE_BONUS`` times its ``severity`` (1 for a warning,
  ``ERROR_SEVERITY`` for an error or an exception, ``FATAL_SEVERITY`` for a fatal
  level or a killed process), and one that *states* a failure (not a bare stack
  frame) holds the query's failure words: a ``WARNING`` line answers "which
  errors occurred?" though it never says "error", and a FATAL line outranks a
  WARN line that matches the question as well.
- Neighbour mixing (dialogue and logs): a unit inherits ``NEIGHBOUR_WEIGHT`` of
  the score of the unit before it, so an answer turn right after a matching
  question turn rises with it.

``THRESHOLD`` (the score a unit needs for the offline gate to keep it),
``FILL_MARGIN`` (how much that bar rises as the memory fills) and
``DISPLACE_MARGIN`` (by how much a unit below that bar must beat, on its own
merit, each line it pushes out of a full memory; for failure questions only)
come from ``python -m bench.calibrate``: it sweeps the first two over HotpotQA
items disjoint from the benchmark's (questions 70–99; the benchmark reads the
first 25–50) and takes the highest value that costs at most 0.03
supporting-fact retention, and the third over loghub logs (see that module for
the rules and the sweeps).

Near-duplicates share a ``dedup_key`` (lower case, numbers and hex masked,
spaces collapsed): the gate keeps one unit per key, the context builder one
line per key with how many times it occurs.

Everything here is deterministic: the same texts and embedder give the same scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from poimen.relevance.terms import (EMBED_CHARS, FAILURE_STEMS, NUMBER_WEIGHT, SYNONYMS, asks_for_failures, lexical_share, matched_weight,
                                    dedup_key, embedding_text, facets, is_failure_query, is_identifier,
                                    looks_like_failure, name_phrases, query_terms, rarity, severity, states_a_failure, stem,
                                    synonyms, unit_terms, variant_key, variants)
from poimen.relevance.units import (HEADLINE_CHARS, MAX_UNIT_TOKENS, RECORD_MAX_TOKENS, Outline, Unit, headline, split_units,
                                    split_units_under, titles_only)

__all__ = ["EMBED_CHARS", "FAILURE_STEMS", "HEADLINE_CHARS", "MAX_UNIT_TOKENS", "NUMBER_WEIGHT", "Outline", "RECORD_MAX_TOKENS", "SYNONYMS",
           "Scorer", "ScoredQuery", "Unit", "scored_query", "asks_for_failures", "dedup_key", "embed_texts", "embedding_text",
           "facets", "headline", "is_failure_query", "is_identifier", "lexical_share", "looks_like_failure", "query_terms", "rarity",
           "severity", "split_units", "split_units_under", "states_a_failure", "stem", "synonyms", "titles_only", "unit_terms",
           "variant_key", "variants"]

LEXICAL_WEIGHT = 0.75
NEIGHBOUR_WEIGHT = 0.15
EXPANSION_WEIGHT = 0.3
EXPANSION_TERMS = 12
BRIDGE_WEIGHT = 0.3  # a memory name found whole in a unit counts this share of its words' weight (bench.calibrate --bridge)
BRIDGE_NAMES = 8  # the memory's heaviest names that can bridge
HEADING_WEIGHT = 0.25  # what a unit's section heading adds to its lexical share counts this much (bench.calibrate --heading)
FAILURE_BONUS = 0.15
FILL_MARGIN = 0.3  # how much the gate's bar rises as the memory fills (chosen by bench.calibrate's rule)
DISPLACE_MARGIN = 0.15  # one severity grade: how much a unit below the bar must beat a line by, on own merit (bench.calibrate --displace)
THRESHOLD = 0.65  # chosen by bench.calibrate on its HotpotQA dev split (its docstring has the sweep)
SCORER_VERSION = "fused-15"  # fused-15: log lines differing in a host or number are one memory line; fused-7: headings; fused-8: word lists; fused-9: bare level markers are no failures; fused-10: a line opening in **bold** is no bullet; fused-11: failure lines graded by severity, a full memory gives way; fused-12: levels in bracketed, logcat, logfmt/JSON, glog and <n> shapes; fused-13: "Error: " and "Fatal: " opening a line; fused-14: pino/bunyan "level":50
FACET_MASS = 3.0  # a facet's lexical share counts in full only when its words weigh at least this much together


def embed_texts(embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed in length order (batches of similar length pad less), returned in the order given."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = embedder.embed([texts[i] for i in order])
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


@dataclass(frozen=True)
class ScoredQuery:
    text: str
    terms: dict[str, float]
    expansion: dict[str, float]
    vector: np.ndarray
    failure: bool
    facets: tuple["ScoredQuery", ...] = ()
    bridges: tuple[tuple[frozenset[str], float], ...] = ()

    @property
    def total(self) -> float:
        return sum(self.terms.values())


def scored_query(text: str, parts: Sequence[str], vectors: Sequence[np.ndarray], terms: dict[str, float] | None = None,
                 expansion: dict[str, float] | None = None, bridges: tuple[tuple[frozenset[str], float], ...] = (),
                 signed: bool | None = None) -> ScoredQuery:
    """The scorer's query: ``text`` and its facets ``parts`` (``facets(text)``), ``vectors`` the text's then each
    facet's (of their ``embedding_text``). ``signed``: whether the text names a failure signature, if known."""
    sub = tuple(ScoredQuery(p, query_terms(p), {}, v, asks_for_failures(p)) for p, v in zip(parts, vectors[1:]))
    return ScoredQuery(text, query_terms(text) if terms is None else terms, expansion or {}, vectors[0],
                       asks_for_failures(text, signed), sub, bridges)


class Scorer:
    """The fused scorer over one embedder; vectors of units are memoised by text within the process."""

    def __init__(self, embedder=None, lexical_weight: float = LEXICAL_WEIGHT, neighbour_weight: float = NEIGHBOUR_WEIGHT,
                 expansion_weight: float = EXPANSION_WEIGHT, failure_bonus: float = FAILURE_BONUS,
                 bridge_weight: float = BRIDGE_WEIGHT, heading_weight: float = HEADING_WEIGHT):
        if embedder is None:
            from poimen.embedding.embedders import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.lexical_weight = lexical_weight
        self.neighbour_weight = neighbour_weight
        self.expansion_weight = expansion_weight
        self.failure_bonus = failure_bonus
        self.bridge_weight = bridge_weight
        self.heading_weight = heading_weight
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def fingerprint(self) -> str:
        """What determines the scores: the scorer version, its weights and the embedder."""
        return (f"{SCORER_VERSION}:{self.embedder.model_id}:{self.lexical_weight}:{self.neighbour_weight}:"
                f"{self.expansion_weight}:{self.failure_bonus}:{self.bridge_weight}:{self.heading_weight}")

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (of their ``embedding_text``), memoised."""
        keys = [embedding_text(t) for t in texts]
        todo = [k for k in dict.fromkeys(keys) if k not in self._vectors]
        if todo:
            if len(self._vectors) + len(todo) > 200_000:
                self._vectors.clear()
            self._vectors.update(zip(todo, embed_texts(self.embedder, todo)))
        dim = int(self.embedder.dim)
        return np.stack([self._vectors[k] for k in keys]).astype(np.float32) if keys else np.zeros((0, dim), np.float32)

    def query(self, text: str, memory: Sequence[str] = ()) -> ScoredQuery:
        terms = query_terms(text)
        expansion: dict[str, float] = {}
        bridges: tuple[tuple[frozenset[str], float], ...] = ()
        if memory:
            rare: dict[str, float] = {}
            for line in memory:
                for term, w in query_terms(line).items():
                    # Not ids that mix digits into a name (request ids, hashes, paths): one request's id would pull
                    # in every line of that request. Names, words and plain numbers (years) can bridge.
                    mixed = any(c.isdigit() for c in term) and not term.isdigit()
                    if term not in terms and w >= 4.0 and not mixed:
                        rare[term] = max(rare.get(term, 0.0), w)
            top = sorted(rare.items(), key=lambda kv: (-kv[1], kv[0]))[:EXPANSION_TERMS]
            expansion = {t: w * self.expansion_weight for t, w in top}
            names: dict[frozenset[str], float] = {}
            for line in memory:
                for stems, w in name_phrases(line).items():
                    if not stems <= terms.keys():
                        names[stems] = max(names.get(stems, 0.0), w)
            heavy = sorted(names.items(), key=lambda kv: (-kv[1], sorted(kv[0])))[:BRIDGE_NAMES]
            bridges = tuple((stems, w * self.bridge_weight) for stems, w in heavy)
        parts = facets(text)
        return scored_query(text, parts, self.vectors([text, *parts]), terms, expansion, bridges)

    def lexical(self, q: ScoredQuery, unit: str, heading: str = "") -> float:
        """The rarity-weighted share of ``q``'s terms (synonyms included, expansion terms on top) in ``unit``;
        what only its ``heading`` adds counts ``heading_weight`` of its weight."""
        if not q.total:
            return 0.0
        have = unit_terms(unit)
        if q.failure and states_a_failure(unit):
            have = have | FAILURE_STEMS
        hit = self._hit(q, have)
        if heading and self.heading_weight:
            hit += self.heading_weight * (self._hit(q, have | unit_terms(heading)) - hit)
        return min(1.0, hit / q.total)

    @staticmethod
    def _hit(q: ScoredQuery, have: frozenset[str]) -> float:
        return (matched_weight(q.terms, have) + sum(w for t, w in q.expansion.items() if t in have)
                + sum(w for stems, w in q.bridges if stems <= have))

    def combine(self, q: ScoredQuery, cosine, share, severities: np.ndarray) -> np.ndarray:
        """The fused score from per-part cosines and lexical shares (``cosine(part)``, ``share(part)`` -> arrays).

        Each part — the whole question, then each facet — scores cos + LEXICAL_WEIGHT · share (a facet's
        share scaled down when its words weigh less than FACET_MASS), plus FAILURE_BONUS times each unit's
        ``severity`` (0 for a unit that looks like no failure) when that part asks for failures; a unit keeps
        its best part.
        """
        best = None
        for part, mass in ((q, 0.0), *((f, FACET_MASS) for f in q.facets)):
            lexical = share(part)
            if mass and part.total < mass:
                lexical = lexical * (part.total / mass)
            scores = cosine(part) + self.lexical_weight * lexical
            if part.failure and self.failure_bonus:
                scores = scores + self.failure_bonus * severities
            best = scores if best is None else np.maximum(best, scores)
        return best.astype(np.float32)

    def score(self, q: ScoredQuery, units: Sequence[str], neighbours: bool = False,
              headings: Sequence[str] | None = None) -> np.ndarray:
        """Fused scores of ``units`` (in order) for one query: the whole question, or its best-answered facet.
        ``headings`` (one per unit, "" for none) are the titles of the sections the units stand in."""
        if not units:
            return np.zeros(0, dtype=np.float32)
        heads = list(headings) if headings is not None else [""] * len(units)
        vectors = self.vectors(list(units))
        mask = np.array([severity(u) for u in units], dtype=np.float32)
        scores = self.combine(q, lambda part: vectors @ part.vector,
                              lambda part: np.array([self.lexical(part, u, h) for u, h in zip(units, heads)],
                                                    dtype=np.float32), mask)
        if neighbours and len(units) > 1:
            scores = scores.copy()
            scores[1:] += self.neighbour_weight * scores[:-1]
        return scores.astype(np.float32)

    def rank(self, question: str, units: Sequence[str], neighbours: bool = False) -> list[tuple[int, float]]:
        """Every unit as (index, score), best first; ties by position."""
        scores = self.score(self.query(question), units, neighbours)
        order = np.lexsort((np.arange(len(units)), -scores))
        return [(int(i), float(scores[i])) for i in order]
