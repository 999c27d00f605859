"""Small text utilities shared by the offline engine, keyword search and the router."""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either else ever every few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself just least
    less let like may me might more most much must my myself neither no nor not now of off on once one only or
    other ought our ours ourselves out over own per quite rather really same shall she should so some such than
    that the their theirs them themselves then there these they this those though through thus to too under
    until up upon us very via was we well were what whatever when whenever where whether which while who whom
    whose why will with within without would yet you your yours yourself yourselves
    each during which what how when why who where did does done get got make made use used using""".split()
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|\d+(?:[.:]\d+)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9`<-])|\n+")


def words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'failures'/'failure'/'failed', never a full stemmer."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def term_key(word: str) -> str:
    """The matching key of a word: its light stem, cut to four letters when longer.

    Four-letter prefixes join a word family ('decided'/'decision', 'caused'/'cause',
    'failure'/'failed') at the price of rare collisions; numbers and short words
    are kept whole. It is a baseline's heuristic, chosen for recall.
    """
    base = stem(word)
    return base[:4] if len(base) >= 5 and base.isalpha() else base


def content_terms(text: str) -> list[str]:
    """Content-word keys in order of first appearance, stop-words removed."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and len(w) > 1:
            seen.setdefault(term_key(w), None)
    return list(seen)


# Words after which a full stop does not end a sentence: titles before a name and abbreviations that run on
# ("lit.", "e.g.", "No. 5"). Not "Inc.", "Corp." or "etc.": they end sentences as often as they run on.
_ABBREVIATIONS = frozenset("""mr mrs ms dr prof st sr jr mt ft gen gov sen rep col capt lt sgt maj cmdr adm rev hon
    messrs no nos vol vols pp fig figs vs cf lit approx ca al""".split())
_LAST_WORD = re.compile(r"(?:^|[\s(\[\"'])((?:[A-Za-z]\.)*[A-Za-z]+)\.$")


def ends_with_abbreviation(piece: str) -> bool:
    """``piece`` ends with a full stop that does not end a sentence: an initial ("Ann B."), initials ("U.S.",
    "e.g.") or a title or abbreviation that runs on ("Dr.", "lit.")."""
    m = _LAST_WORD.search(piece.rstrip())
    if not m:
        return False
    word = m.group(1)
    return (len(word) == 1 and word.isupper()) or "." in word or word.lower() in _ABBREVIATIONS


_LABEL = re.compile(r"^\s*[A-Z]{0,3}-?\d{1,3}\.\s*$")  # an item's label ("R5.", "2."): no sentence of its own


def sentence_cuts(text: str, pattern: re.Pattern = _SENTENCE) -> list[tuple[int, int]]:
    """Where ``pattern`` (a sentence boundary) cuts ``text``, as (end of a sentence, start of the next), leaving
    out boundaries after an abbreviation or an initial ("Dr. Cora Norman", "Ann B. Davis") and after an item's
    label that is all a piece would be ("R5. Done: re-seeded the replica")."""
    cuts, last = [], 0
    for m in pattern.finditer(text):
        piece = text[last:m.start()]
        if "\n" not in m.group(0) and (ends_with_abbreviation(piece) or _LABEL.match(piece)):
            continue
        cuts.append((m.start(), m.end()))
        last = m.end()
    return cuts


def split_sentences(text: str) -> list[str]:
    """Sentences (or lines, for logs and lists) of a text, trimmed and non-empty."""
    out, last = [], 0
    for end, start in [*sentence_cuts(text), (len(text), len(text))]:
        piece = text[last:end].strip()
        if piece:
            out.append(piece)
        last = start
    return out
