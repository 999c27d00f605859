"""Terms of queries and units: stems, identifiers, word rarity, the incident vocabulary, failure shapes, dedup keys.

See ``poimen.relevance`` for how the scorer uses them.
"""

from __future__ import annotations

import functools
import re

from poimen.text.line_levels import ERROR_SEVERITY, FAILURE_LEVELS, FATAL_SEVERITY, first_failure_level, without_failure_levels
from poimen.text.words import STOPWORDS

NUMBER_WEIGHT = 5.0  # a bare number (a status code, a count) is specific, but less than a named identifier
EMBED_CHARS = 1200  # ~256 word pieces, all-MiniLM-L6-v2's limit: a paragraph cut shorter loses its later sentences
# Operations vocabulary: one stem of a group in the query matches any stem of the group in a unit, so "how was it
# fixed?" finds "mitigated by…" and "rolled back". A small, fixed list of incident words, not a thesaurus.
SYNONYMS = tuple(frozenset(g.split()) for g in (
    "fix mitig revert rollback patch workaround remedi hotfix",  # not "resolved": a status, rarely the remedy
    "caus root",
))
_SYNONYM = {stem: group for group in SYNONYMS for stem in group}

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/@'-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_PART = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_MASK = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]*\d[0-9a-f]*\b|\d+", re.I)
_FAILURE_WORDS = frozenset("""error errors fail fails failed failing failure failures exception exceptions crash crashed
    crashes incident incidents outage outages broken warning warnings warn fatal cause caused causes root fix fixed
    fixes bug bugs problem problems wrong down timeout timeouts oom killed panic traceback trace stack""".split())
# The shapes of a failure, by how bad each says it is (``severity``): a log level (``poimen.text.line_levels``); a killed
# process; an error without a level (a traceback, an exception class, a 5xx, a failed exit); a warning's shapes (a
# frame, a 4xx).
_KILLED_SHAPES = r"\b(?:OOMKilled|segfault|Segmentation fault)\b"
_ERROR_SHAPES = (r"Traceback \(most recent|\b[A-Z]\w*(?:Exception|Error)\b|\bHTTP/\d(?:\.\d)? 5\d\d\b|"
                 r"\b(?:CrashLoopBackOff|exit code [1-9]\d*|errno)\b")
_WARNING_SHAPES = r"^\s*at [\w$.]+\(|\bHTTP/\d(?:\.\d)? 4\d\d\b"
_FAILURE_UNIT = re.compile("|".join((FAILURE_LEVELS, _KILLED_SHAPES, _ERROR_SHAPES, _WARNING_SHAPES)), re.M)


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


# A name: two or more Title-case words in a row ("Two Dollar Radio", "Georg Philipp Telemann"), joined by the
# lower-case particles names carry. ALL-CAPS tokens (log levels, acronyms) are not name words.
_NAME = re.compile(r"\b[A-Z][a-z][\w'’]*(?:\s+(?:(?:of|the|de|del|da|von|van|der|la|le|and|&)\s+)?[A-Z][a-z][\w'’]*)+")


def name_phrases(text: str) -> dict[frozenset[str], float]:
    """The multi-word names in ``text`` as sets of content stems, each weighing the summed rarity of its words.

    A name is matched as a whole (every stem present), so a name of common words ("Two Dollar Radio") is as
    specific as its parts together, where each word alone is not.
    """
    out: dict[frozenset[str], float] = {}
    for m in _NAME.finditer(text):
        words = [w.lower() for w in re.findall(r"[A-Za-z][\w'’]*", m.group(0))]
        content = [w for w in words if w not in STOPWORDS and len(w) > 1]
        if len(content) >= 2:
            out.setdefault(frozenset(stem(w) for w in content), sum(rarity(w) for w in content))
    return out


_CLAUSE = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|;\s*|\s+(?:and|or)\s+)(?=(?:what|how|why|when|where|who|which)\b)", re.I)


_ITEM = r"[a-z][a-z'-]*"
# A list of three or more single words, the last joined by "and"/"or": "plans, goals and dreams".
_ENUMERATION = re.compile(rf"\b({_ITEM})((?:, {_ITEM})+),? (?:and|or) ({_ITEM})\b")


def alternatives(question: str) -> list[str]:
    """The question once per item of its word list ("What plans, goals and dreams did they talk about?" ->
    "What plans did they talk about?", "What goals …", "What dreams …"), or none.

    A list in a question names alternatives: a unit about one dream answers it, though it holds a third of the
    list's words. Only lower-case single words of three or more, so names ("Arts and Letters") stay whole.
    """
    m = _ENUMERATION.search(question)
    if not m:
        return []
    items = [m.group(1), *(x.strip() for x in m.group(2).split(",") if x.strip()), m.group(3)]
    return [f"{question[:m.start()]}{item}{question[m.end():]}".strip() for item in items]


def facets(question: str) -> list[str]:
    """The clauses of a compound question ("which X failed, what caused it, and how was it fixed?") and the
    alternatives of a word list in the question or in one of its clauses (``alternatives``), or none.

    A unit that fully answers one clause is relevant even when it shares little
    with the whole question; ``Scorer.score`` takes the best of the whole
    question and its facets. Only clauses that open with a question word split,
    so "X and Y" inside one question stays whole.
    """
    parts = [p.strip(" ,;?") for p in _CLAUSE.split(question) if p and p.strip(" ,;?")]
    clauses = parts if len(parts) > 1 else []
    return list(dict.fromkeys([*clauses, *(alt for part in clauses or [question] for alt in alternatives(part))]))


def synonyms(term: str) -> frozenset[str]:
    """The stems that match ``term`` in a unit: itself, and its group in ``SYNONYMS``."""
    return _SYNONYM.get(term, frozenset()) | {term}


def asks_for_failures(text: str, signed: bool | None = None) -> bool:
    """A failure-shaped question that asks for the failures themselves, not how one was fixed or what caused it:
    "how was the NullPointerException fixed?" wants the fix line, not the trace. ``signed``: whether ``text`` names
    a failure signature, when the caller has extracted them already (``poimen.relevance.question``)."""
    return is_failure_query(text, signed) and not any(stem(w.lower()) in _SYNONYM for w in _TOKEN.findall(text))


def is_failure_query(text: str, signed: bool | None = None) -> bool:
    words = {w.lower() for w in _TOKEN.findall(text)}
    if words & _FAILURE_WORDS or _FAILURE_UNIT.search(text):
        return True
    if signed is None:
        from poimen.signatures import extract_signatures

        signed = bool(extract_signatures(text))
    return signed


_CONTENT_WORD = re.compile(r"[A-Za-z]{2,}")


def looks_like_failure(unit: str) -> bool:
    """A unit shaped like a failure (a level, an exception, a frame, an HTTP error, a pod reason) that says more than
    its level: Maven's bare ``[ERROR]`` and ``[ERROR] ^`` lines and a test runner's ``<<< ERROR!`` name no failure, and
    taken as failures they won a failure query's bonus and failure words over the lines that state one."""
    return bool(_FAILURE_UNIT.search(unit)) and bool(_CONTENT_WORD.search(without_failure_levels(unit)))


# How bad a failure-looking unit is, for a question after failures: a warning (or a bare frame, a 4xx) weighs 1,
# an error, an exception or a failed exit ERROR_SEVERITY, a fatal level or a killed process FATAL_SEVERITY. The
# line's own level says it when it has one (the first level word: "WARN … status: ERROR" is a warning, and a
# WARN line naming an IOException is one its logger chose to survive; logcat's "E/AndroidRuntime: FATAL EXCEPTION" is
# an error by its E, as its logger graded it); a line without a level goes by its shape.
_KILLED = re.compile(_KILLED_SHAPES)
_ERROR_SHAPE = re.compile(_ERROR_SHAPES)


def severity(unit: str) -> float:
    """0 for a unit that does not look like a failure, else its grade (1 warning, ``ERROR_SEVERITY``,
    ``FATAL_SEVERITY``): the scorer's failure bonus is scaled by it, so for "which errors occurred?" a FATAL line
    outranks a WARN line that matches the question as well, and a later, worse failure can displace a warning."""
    if not looks_like_failure(unit):
        return 0.0
    level = first_failure_level(unit)
    if level:
        return level.grade
    if _KILLED.search(unit):
        return FATAL_SEVERITY
    return ERROR_SEVERITY if _ERROR_SHAPE.search(unit) else 1.0


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


_LEADING_ID = re.compile(r"^-?\s*\d+\s+\S*\d")  # a record number, then a host or node: "256 Interconnect-1N01 …"
_VARIANT = re.compile(r"[\w.:/@-]*\d[\w.:/@-]*")  # a token holding a digit: a host, a node, a pid, an id, a number
# A host named without a digit: a field's value whose key ends in "host" ("rhost=massive.example.org"), or a whole
# lower-case name of three or more labels ending in a word ("csnsu.nsuok.edu"; a class name's last label is capitalised).
_HOST = re.compile(r"(?<=host=)[^\s,;]+|(?<![\w.-])(?:[a-z0-9-]+\.){2,}[a-z]{2,6}(?![\w.-])")
# A date's month or weekday named in words before its day ("Jun 14 15:16:01", "Tue Jul  1"): syslog's stamp, so two
# lines a month apart are one template as two lines a day apart are.
_DATE_WORD = re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?"
                        r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?\s+(?=\d{1,2}\b)")


def variant_key(unit: str) -> str:
    """Log lines of one template that differ only in a host, a node, a pid, a number or a date share this key
    ("gige5 … temperature warning" and "gige7 … temperature warning"; ``rhost=a.example.org`` and
    ``rhost=b.example.net``); any other unit's key is its ``dedup_key``, which masks numbers but keeps every word:
    prose that names another host speaks of another thing."""
    from poimen.text.log_lines import is_log_line

    line = unit.lstrip()
    if "\n" in line or not (is_log_line(line) or _LEADING_ID.match(line)):
        return dedup_key(unit)
    return " ".join(_VARIANT.sub("#", _HOST.sub("#", _DATE_WORD.sub("# ", unit)).lower()).split())


VARIANTS_SHOWN = 4


def variants(texts: list[str]) -> tuple[str, ...]:
    """What lines of one ``variant_key`` differ in, as a reader wants it: the values of the digit-bearing token whose
    values repeat most across the lines (a host or a node, not a timestamp or a pid that differs in every line), up
    to ``VARIANTS_SHOWN``, in order of first appearance; () when no token position has fewer values than lines."""
    columns: dict[int, dict[str, None]] = {}
    for text in texts:
        for n, token in enumerate(_VARIANT.findall(text)):
            columns.setdefault(n, {})[token] = None
    best = min((c for c in columns.values() if 1 < len(c) < len(texts)), key=len, default=None)
    return tuple(list(best)[:VARIANTS_SHOWN]) if best else ()


def embedding_text(unit: str) -> str:
    """What the embedder reads for a unit: its ``dedup_key``, cut to ``EMBED_CHARS``.

    Numbers, hex ids and timestamps carry no meaning a sentence embedder can
    use (the lexical share still matches them exactly), and masking them makes
    the thousand lines of one log template one embedding instead of a thousand:
    on 2 cores that is the difference between seconds and many minutes. The
    model is uncased, so lower-casing loses nothing.
    """
    return dedup_key(unit)[:EMBED_CHARS]


def matched_weight(terms: dict[str, float], have: frozenset[str]) -> float:
    """The summed weight of the ``terms`` a unit's term set holds, a synonym counting for its group."""
    return sum(w for t, w in terms.items() if t in have or (t in _SYNONYM and _SYNONYM[t] & have))


def lexical_share(query: str, text: str) -> float:
    """The rarity-weighted share of ``query``'s terms found in ``text`` (0 to 1): the scorer's lexical half alone,
    for small stores ranked without an embedder (typed-memory compose, a static archive)."""
    terms = query_terms(query)
    total = sum(terms.values())
    return min(1.0, matched_weight(terms, unit_terms(text)) / total) if total else 0.0
