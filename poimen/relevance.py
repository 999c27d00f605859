"""The fused relevance scorer: how well one unit of text (a sentence, a log line, a chat turn) answers a query.

    score(q, u) = cos(E(q), E(u)) + LEXICAL_WEIGHT · share(q, u) [+ FAILURE_BONUS] [+ NEIGHBOUR_WEIGHT · score(q, u₋₁)]

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
- For a query that asks for failures (failure words or a signature poimen
  knows, and no "how was it fixed"/"what caused it" intent) a unit that looks
  like a failure — an error log level, an exception, a trace frame, an HTTP
  error status — gets ``FAILURE_BONUS``, and one that *states* a failure (not a
  bare stack frame) holds the query's failure words: a ``WARNING`` line answers
  "which errors occurred?" though it never says "error".
- Neighbour mixing (dialogue and logs): a unit inherits ``NEIGHBOUR_WEIGHT`` of
  the score of the unit before it, so an answer turn right after a matching
  question turn rises with it.

``THRESHOLD`` (the score a unit needs for the offline gate to keep it), and
``FILL_MARGIN`` (how much that bar rises as the memory fills), were chosen on a
dev split: ``python -m bench.calibrate`` sweeps it over HotpotQA
items disjoint from the benchmark's (questions 70–99; the benchmark reads the
first 25–50) and takes the highest threshold that costs at most 0.03
supporting-fact retention (see that module for the rule and the sweep).

Near-duplicates share a ``dedup_key`` (lower case, numbers and hex masked,
spaces collapsed): the gate keeps one unit per key, the context builder one
line per key with how many times it occurs.

Everything here is deterministic: the same texts and embedder give the same scores.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from poimen.text import STOPWORDS
from poimen.tokens import count_tokens

LEXICAL_WEIGHT = 0.75
NEIGHBOUR_WEIGHT = 0.15
EXPANSION_WEIGHT = 0.3
EXPANSION_TERMS = 12
FAILURE_BONUS = 0.15
FILL_MARGIN = 0.3  # how much the gate's bar rises as the memory fills (chosen by bench.calibrate's rule)
THRESHOLD = 0.65  # chosen by bench.calibrate on its HotpotQA dev split (its docstring has the sweep)
MAX_UNIT_TOKENS = 96  # a prose line longer than this is cut into sentences
RECORD_MAX_TOKENS = 512  # a record (chat turn, log line) is cut only past this: a wall of text, not a message
NUMBER_WEIGHT = 5.0  # a bare number (a status code, a count) is specific, but less than a named identifier
EMBED_CHARS = 1200  # ~256 word pieces, all-MiniLM-L6-v2's limit: a paragraph cut shorter loses its later sentences
SCORER_VERSION = "fused-5"
# Operations vocabulary: one stem of a group in the query matches any stem of the group in a unit, so "how was it
# fixed?" finds "mitigated by…" and "rolled back". A small, fixed list of incident words, not a thesaurus.
SYNONYMS = tuple(frozenset(g.split()) for g in (
    "fix mitig revert rollback patch workaround remedi hotfix",  # not "resolved": a status, rarely the remedy
    "caus root",
))
FACET_MASS = 3.0  # a facet's lexical share counts in full only when its words weigh at least this much together
_SYNONYM = {stem: group for group in SYNONYMS for stem in group}

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/@'-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_PART = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9`<])")
_MASK = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]*\d[0-9a-f]*\b|\d+", re.I)
_FAILURE_WORDS = frozenset("""error errors fail fails failed failing failure failures exception exceptions crash crashed
    crashes incident incidents outage outages broken warning warnings warn fatal cause caused causes root fix fixed
    fixes bug bugs problem problems wrong down timeout timeouts oom killed panic traceback trace stack""".split())
_FAILURE_UNIT = re.compile(
    r"\b(WARN(?:ING)?|ERROR|ERR|FATAL|CRIT(?:ICAL)?|SEVERE|PANIC|EMERG|ALERT)\b|Traceback \(most recent|"
    r"\b[A-Z]\w*(?:Exception|Error)\b|^\s*at [\w$.]+\(|\bHTTP/\d(?:\.\d)? [45]\d\d\b|\b(?:OOMKilled|CrashLoopBackOff|"
    r"segfault|Segmentation fault|exit code [1-9]\d*|errno)\b", re.M)


@functools.cache
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    return _stemmer().stemWord(word)


@functools.lru_cache(maxsize=1 << 17)
def rarity(word: str) -> float:
    """``8 − zipf`` frequency of an English word (wordfreq), between 1 and 8; unknown words weigh 8."""
    from wordfreq import zipf_frequency

    return float(min(8.0, max(1.0, 8.0 - zipf_frequency(word, "en"))))


def is_identifier(token: str) -> bool:
    return bool(re.search(r"[\d_./:@]", token) or _CAMEL.search(token))


@functools.lru_cache(maxsize=1 << 16)
def unit_terms(text: str) -> frozenset[str]:
    """The terms a unit offers: word stems, whole identifiers (lower case) and the words inside them."""
    out: set[str] = set()
    for token in _TOKEN.findall(text):
        if is_identifier(token):
            out.add(token.lower())
            for part in _PART.findall(token):
                out.add(stem(part.lower()) if part.isalpha() else part)
        else:
            for part in token.split("-"):
                if part:
                    out.add(stem(part.lower().strip("'")))
    return frozenset(out)


def query_terms(text: str) -> dict[str, float]:
    """Content terms of a query with their weights: identifiers whole, words stemmed, stop-words dropped."""
    out: dict[str, float] = {}
    for token in _TOKEN.findall(text):
        if is_identifier(token):
            out[token.lower()] = NUMBER_WEIGHT if token.isdigit() else 8.0
            continue
        for part in token.split("-"):
            word = part.lower().strip("'")
            if len(word) < 2 or word in STOPWORDS:
                continue
            out.setdefault(stem(word), rarity(word))
    return out


_CLAUSE = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|;\s*|\s+(?:and|or)\s+)(?=(?:what|how|why|when|where|who|which)\b)", re.I)


def facets(question: str) -> list[str]:
    """The clauses of a compound question ("which X failed, what caused it, and how was it fixed?"), or none.

    A unit that fully answers one clause is relevant even when it shares little
    with the whole question; ``Scorer.score`` takes the best of the whole
    question and its facets. Only clauses that open with a question word split,
    so "X and Y" inside one question stays whole.
    """
    parts = [p.strip(" ,;?") for p in _CLAUSE.split(question) if p and p.strip(" ,;?")]
    return parts if len(parts) > 1 else []


def synonyms(term: str) -> frozenset[str]:
    """The stems that match ``term`` in a unit: itself, and its group in ``SYNONYMS``."""
    return _SYNONYM.get(term, frozenset()) | {term}


def asks_for_failures(text: str) -> bool:
    """A failure-shaped question that asks for the failures themselves, not how one was fixed or what caused it:
    "how was the NullPointerException fixed?" wants the fix line, not the trace."""
    return is_failure_query(text) and not any(stem(w.lower()) in _SYNONYM for w in _TOKEN.findall(text))


def is_failure_query(text: str) -> bool:
    from poimen.signatures import extract_signatures

    words = {w.lower() for w in _TOKEN.findall(text)}
    return bool(words & _FAILURE_WORDS) or bool(_FAILURE_UNIT.search(text)) or bool(extract_signatures(text))


def looks_like_failure(unit: str) -> bool:
    return bool(_FAILURE_UNIT.search(unit))


_FRAME = re.compile(r"^\s*(?:at [\w$.<>]+\(|File \"|\.\.\. \d+ more|[\w./-]+\.\w+:\d+)")


def states_a_failure(unit: str) -> bool:
    """A unit that says a failure happened — a WARN/ERROR line, an exception, an HTTP error, a pod reason —
    as opposed to a stack frame (which only says where). For a question after failures, such a unit holds the
    question's failure words ("errors", "failed") whatever words it uses itself."""
    return looks_like_failure(unit) and not _FRAME.match(unit)


FAILURE_STEMS = frozenset(stem(w) for w in _FAILURE_WORDS if w not in ("cause", "caused", "causes", "root", "fix",
                                                                       "fixed", "fixes", "trace", "stack", "down"))


def dedup_key(unit: str) -> str:
    """Near-duplicates (the same line with other numbers, ids or spacing) share this key."""
    return " ".join(_MASK.sub("#", unit.lower()).split())


def embedding_text(unit: str) -> str:
    """What the embedder reads for a unit: its ``dedup_key``, cut to ``EMBED_CHARS``.

    Numbers, hex ids and timestamps carry no meaning a sentence embedder can
    use (the lexical share still matches them exactly), and masking them makes
    the thousand lines of one log template one embedding instead of a thousand:
    on 2 cores that is the difference between seconds and many minutes. The
    model is uncased, so lower-casing loses nothing.
    """
    return dedup_key(unit)[:EMBED_CHARS]


@dataclass(frozen=True)
class Unit:
    """A unit of a text and its character span in that text."""

    text: str
    start: int
    end: int


_RECORD_START = re.compile(
    r"^\s*(?:[-*+•>#|]|\d+[.)]\s|\[|\{|\d{2,4}[-/:.]\d|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d|at |Caused by|Traceback|File \"|"
    r"[A-Z][A-Z0-9_]{2,}\b|[\w.-]+:\s*$)")


def _is_prose(lines: list[str]) -> bool:
    """A block of hard-wrapped prose (Markdown, text): lines that start no record and mostly end mid-sentence."""
    if len(lines) < 2 or _RECORD_START.match(lines[0]) or sum(bool(_RECORD_START.match(x)) for x in lines) * 4 > len(lines):
        return False
    inner = lines[:-1]
    wrapped = sum(20 <= len(x.strip()) <= 120 and x.rstrip()[-1] not in ".!?:;" for x in inner)
    return wrapped * 2 >= len(inner)


def _sentences(text: str, offset_of, max_tokens: int, whole: bool = False) -> list[Unit]:
    """``text`` cut into sentences, or kept whole when ``whole`` and under ``max_tokens``; ``offset_of`` maps a
    position in ``text`` to the source text."""
    stripped = text.strip()
    if not stripped:
        return []
    base = text.index(stripped)
    if whole and (len(stripped) < max_tokens * 3 or count_tokens(stripped) <= max_tokens):
        return [Unit(stripped, offset_of(base), offset_of(base + len(stripped) - 1) + 1)]
    out, pos = [], 0
    for piece in _SENTENCE.split(stripped):
        i = stripped.index(piece, pos)
        pos = i + len(piece)
        piece = piece.strip()
        if piece:
            j = stripped.index(piece, i)
            out.append(Unit(piece, offset_of(base + j), offset_of(base + j + len(piece) - 1) + 1))
    return out


_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _items(block: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Lines grouped into records: a list item keeps its wrapped continuation (lines indented past its marker that
    start no record), so "- restart the pod, then\\n  drain the node" is one unit, not two fragments."""
    items: list[list[tuple[int, str]]] = []
    for at, line in block:
        head = items[-1][0][1] if items else ""
        item = _LIST_ITEM.match(head)
        if item and _indent(line) > len(item.group(1)) and not _RECORD_START.match(line):
            items[-1].append((at, line))
        else:
            items.append([(at, line)])
    return items


def _joined(lines: list[tuple[int, str]]):
    """(the lines' stripped text joined by spaces, a map from a position in it to the offset in the source)."""
    starts, joined, parts = [], 0, []
    for at, line in lines:
        starts.append((joined, at + _indent(line)))
        parts.append(line.strip())
        joined += len(line.strip()) + 1

    def offset_of(p: int) -> int:
        j0, o0 = max((s for s in starts if s[0] <= p), key=lambda s: s[0])
        return o0 + (p - j0)

    return " ".join(parts), offset_of


def split_units(text: str, max_tokens: int = MAX_UNIT_TOKENS) -> list[Unit]:
    """Lines — log lines, chat turns, list items, table rows, one-line paragraphs — whole, cut into sentences
    only past ``max_tokens``; hard-wrapped prose is joined back into its paragraph first. Spans index ``text``.

    Why a one-line paragraph stays whole: on the HotpotQA dev split (``bench.calibrate``) sentence units lost
    0.04 supporting-fact retention at equal precision — a fact's second sentence ("He was born in …") rarely
    names what the question asks about, and it travels with the first when the paragraph is the unit."""
    out: list[Unit] = []
    block: list[tuple[int, str]] = []  # (offset of the line in text, line)

    def flush() -> None:
        lines = [x for _, x in block]
        if _is_prose(lines):
            out.extend(_sentences(*_joined(block), max_tokens))
        else:
            for item in _items(block):  # a record stays whole (up to RECORD_MAX_TOKENS: a chat turn is never cut),
                limit = RECORD_MAX_TOKENS if _RECORD_START.match(item[0][1]) else max_tokens  # as does a short line
                out.extend(_sentences(*_joined(item), limit, True))
        block.clear()

    at = 0
    for line in text.split("\n"):
        if line.strip():
            block.append((at, line))
        elif block:
            flush()
        at += len(line) + 1
    if block:
        flush()
    return out


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

    @property
    def total(self) -> float:
        return sum(self.terms.values())


class Scorer:
    """The fused scorer over one embedder; vectors of units are memoised by text within the process."""

    def __init__(self, embedder=None, lexical_weight: float = LEXICAL_WEIGHT, neighbour_weight: float = NEIGHBOUR_WEIGHT,
                 expansion_weight: float = EXPANSION_WEIGHT, failure_bonus: float = FAILURE_BONUS):
        if embedder is None:
            from poimen.embedding import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.lexical_weight = lexical_weight
        self.neighbour_weight = neighbour_weight
        self.expansion_weight = expansion_weight
        self.failure_bonus = failure_bonus
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def fingerprint(self) -> str:
        """What determines the scores: the scorer version, its weights and the embedder."""
        return (f"{SCORER_VERSION}:{self.embedder.model_id}:{self.lexical_weight}:{self.neighbour_weight}:"
                f"{self.expansion_weight}:{self.failure_bonus}")

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
        parts = facets(text)
        vectors = self.vectors([text, *parts])
        sub = tuple(ScoredQuery(p, query_terms(p), {}, v, asks_for_failures(p)) for p, v in zip(parts, vectors[1:]))
        return ScoredQuery(text, terms, expansion, vectors[0], asks_for_failures(text), sub)

    def lexical(self, q: ScoredQuery, unit: str) -> float:
        """The rarity-weighted share of ``q``'s terms (synonyms included, expansion terms on top) in ``unit``."""
        if not q.total:
            return 0.0
        have = unit_terms(unit)
        if q.failure and states_a_failure(unit):
            have = have | FAILURE_STEMS
        hit = sum(w for t, w in q.terms.items() if t in have or (t in _SYNONYM and _SYNONYM[t] & have))
        hit += sum(w for t, w in q.expansion.items() if t in have)
        return min(1.0, hit / q.total)

    def combine(self, q: ScoredQuery, cosine, share, failure_mask: np.ndarray) -> np.ndarray:
        """The fused score from per-part cosines and lexical shares (``cosine(part)``, ``share(part)`` -> arrays).

        Each part — the whole question, then each facet — scores cos + LEXICAL_WEIGHT · share (a facet's
        share scaled down when its words weigh less than FACET_MASS), plus FAILURE_BONUS for failure-looking
        units when that part asks for failures; a unit keeps its best part.
        """
        best = None
        for part, mass in ((q, 0.0), *((f, FACET_MASS) for f in q.facets)):
            lexical = share(part)
            if mass and part.total < mass:
                lexical = lexical * (part.total / mass)
            scores = cosine(part) + self.lexical_weight * lexical
            if part.failure and self.failure_bonus:
                scores = scores + self.failure_bonus * failure_mask
            best = scores if best is None else np.maximum(best, scores)
        return best.astype(np.float32)

    def score(self, q: ScoredQuery, units: Sequence[str], neighbours: bool = False) -> np.ndarray:
        """Fused scores of ``units`` (in order) for one query: the whole question, or its best-answered facet."""
        if not units:
            return np.zeros(0, dtype=np.float32)
        vectors = self.vectors(list(units))
        mask = np.array([looks_like_failure(u) for u in units], dtype=np.float32)
        scores = self.combine(q, lambda part: vectors @ part.vector,
                              lambda part: np.array([self.lexical(part, u) for u in units], dtype=np.float32), mask)
        if neighbours and len(units) > 1:
            scores = scores.copy()
            scores[1:] += self.neighbour_weight * scores[:-1]
        return scores.astype(np.float32)

    def rank(self, question: str, units: Sequence[str], neighbours: bool = False) -> list[tuple[int, float]]:
        """Every unit as (index, score), best first; ties by position."""
        scores = self.score(self.query(question), units, neighbours)
        order = np.lexsort((np.arange(len(units)), -scores))
        return [(int(i), float(scores[i])) for i in order]
