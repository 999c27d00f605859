"""How well each incident card matches a question, line by line: what ``mem lookup`` ranks cards by, and what tells
apart two cards ``mem ask`` finds equally close (``poimen.read.incidents``).

A card scores by its best line under the context builder's scorer plus the phrase it shares with the question in a
row, a symptom line in full and any other at ``OTHER_LINE_WEIGHT``; by a raw line of its incident that prints the
question's own message, as if it were a symptom line; and by what it names that the question names.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from poimen.read.incident_view import IncidentLine, IncidentView, named

OTHER_LINE_WEIGHT = 0.8  # a card's cause, fix or verification line speaks for it less than a symptom line
PHRASE_TOKENS = 8  # a run of this many words in a row shared with the question is the same message
PHRASE_WEIGHT = 0.5  # what sharing such a run adds to a line's score (chosen on bench/incidents dev)
NAMING_WEIGHT = 0.2  # what naming the question's service, host or ticket adds (chosen on the dev suites 1-3)
# A field every error of a card logs with one value ("stage=tariff" in each "quote failed … lane=… stage=tariff
# took=…") says which failure it is; the lane, the request and the time vary within one. The question's value for
# it adds as naming does, and another value takes as much away (set equal to NAMING_WEIGHT before measuring).
FIELD_WEIGHT = NAMING_WEIGHT
_FIELD = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]*)=([^\s,;\"'()\[\]]+)")
_TOKEN = re.compile(r"[A-Za-z_]+|\d+")
# A word of letters and digits mixed, five or more long: a hash, a pod suffix, a request id ("4be1c0a2", "p2m4x",
# "7d9f8b6c5"); it differs between occurrences of one message as a number does
_MIXED_ID = re.compile(r"\b(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{5,}\b", re.I)


def phrase_tokens(text: str) -> list[str]:
    """A line's words for phrase matching: lower-cased, every number and every mixed id (``_MIXED_ID``) one token
    ``0`` (ids, ports, counts and hashes differ between occurrences of one message)."""
    return ["0" if t.isdigit() else t.lower() for t in _TOKEN.findall(_MIXED_ID.sub("0", text))]


def shared_run(a: list[str], b: list[str]) -> int:
    """The longest run of words ``a`` and ``b`` share in a row (numbers only count inside a run of words)."""
    from difflib import SequenceMatcher

    if not a or not b:
        return 0
    m = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return sum(1 for t in a[m.a:m.a + m.size] if t != "0")


def phrase_bonus(question_tokens: list[str], line: str) -> float:
    """``PHRASE_WEIGHT`` times the share of ``PHRASE_TOKENS`` words the line shares with the question in a row: the
    error message itself, as it is pasted, outranks a line that merely has the same words about."""
    return PHRASE_WEIGHT * min(1.0, shared_run(question_tokens, phrase_tokens(line)) / PHRASE_TOKENS)


def rank_cards(engine, question: str, views: dict[str, IncidentView]) -> list[tuple[float, IncidentView]]:
    """Every card, best first, by how well its lines match ``question`` under the context builder's scorer plus
    the phrase it shares with it in a row (``phrase_bonus``): its best symptom line, or ``OTHER_LINE_WEIGHT`` of
    its best other line, or a raw line of its incident that prints the question's message (``_printed_at``), plus
    ``NAMING_WEIGHT`` for naming what the question names (``named``: the same error on checkout-api and on orders-db
    is two incidents, and the question says which); ties by sha."""
    scores = engine.scores(question)
    text = question if isinstance(question, str) else question.text
    asked, asked_names, asked_fields = phrase_tokens(text), named(text), _fields(text)
    printed = _printed_at(engine, scores, asked, views)
    out = []
    for view in views.values():
        best = 0.0
        for line in view.lines:
            i = engine.candidate.get(line.text)
            if i is not None:
                score = float(scores[i]) + phrase_bonus(asked, line.text)
                best = max(best, score * (1.0 if line.role == "symptom" else OTHER_LINE_WEIGHT))
        raw, line_printed = printed.get(view.sha, (0.0, None))
        if raw > best:  # what matched is a line the card did not keep: the lookup shows it as the symptom
            best, view = raw, replace(view, printed=line_printed)
        if asked_names and best > 0:
            best += NAMING_WEIGHT * min(1.0, sum(w for key, w in asked_names.items() if key in view.names))
        if asked_fields and best > 0:
            best += FIELD_WEIGHT * _fields_agree(asked_fields, view)
        out.append((best, view))
    out.sort(key=lambda sv: (-sv[0], sv[1].sha))
    return out


def _fields(text: str) -> dict[str, str]:
    """The ``key=value`` fields a line logs (the first value of each key)."""
    out: dict[str, str] = {}
    for key, value in _FIELD.findall(text):
        out.setdefault(key.lower(), value.rstrip(".:").lower())
    return out


def _fields_agree(asked: dict[str, str], view: IncidentView) -> float:
    """+1 when the question logs a field with the value every symptom line of the card that logs it has (two lines
    or more), -1 when it logs another value; the mean over such fields; 0 when there are none."""
    seen: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for line in view.of("symptom") + ([view.printed] if view.printed else []):
        for key, value in _fields(line.text).items():
            seen.setdefault(key, set()).add(value)
            counts[key] = counts.get(key, 0) + 1
    votes = [1.0 if asked[key] in values else -1.0 for key, values in seen.items()
             if key in asked and len(values) == 1 and counts[key] >= 2]
    return sum(votes) / len(votes) if votes else 0.0


PRINTED_CANDIDATES = 40  # the raw lines, best first, searched for the question's own message
# A short message (an alert's "[FIRING:1] LoginSuccessRateLow auth-web (prod-euw1, severity=page)") is matched by a
# run of this share of its words, ``SHORT_RUN_MIN`` at least, where its labels differ the next time it fires (set
# before measuring, then measured on the dev suites: bench/incidents17's alert probe)
SHORT_SHARE = 0.6
SHORT_RUN_MIN = 5


def run_needed(asked: list[str]) -> int:
    """The words in a row a raw line must share with the question to print its message: ``PHRASE_TOKENS``, or for a
    short question ``SHORT_SHARE`` of its words (``SHORT_RUN_MIN`` at least: a shorter one has no message to print)."""
    return min(PHRASE_TOKENS, max(SHORT_RUN_MIN, math.ceil(SHORT_SHARE * _words(asked))))


def _words(tokens: list[str]) -> int:
    return sum(1 for t in tokens if t != "0")


def _printed_at(engine, scores, asked: list[str],
                views: dict[str, IncidentView]) -> dict[str, tuple[float, IncidentLine]]:
    """Per card, a raw line of its incident (``IncidentView.members``) that holds the question's message word for
    word (a run of ``PHRASE_TOKENS`` words, fewer for a short one: ``run_needed``), with its score plus
    ``PHRASE_WEIGHT``, as if it were one of the card's symptom lines: the line a pasted error was printed as outranks a card that merely shares its exception or errno,
    though a card keeps only a few of its incident's lines. Among the ``PRINTED_CANDIDATES`` raw lines the scorer
    ranks first."""
    import numpy as np

    need = run_needed(asked)
    if _words(asked) < need or not len(scores):
        return {}
    where: dict[str, list[tuple[int, int, str]]] = {}
    for view in views.values():
        for chunk, first, last in view.members:
            where.setdefault(chunk, []).append((first, last, view.sha))
    out: dict[str, tuple[float, IncidentLine]] = {}
    if not where:
        return out
    for i in np.argsort(-scores, kind="stable")[:PRINTED_CANDIDATES]:
        i = int(i)
        owners = {(sha, o) for o in engine.origins[i] if o.kind != "memory" and o.line >= 0
                  for first, last, sha in where.get(o.sha, ()) if first <= o.line <= last}
        if owners and shared_run(asked, phrase_tokens(engine.texts[i])) >= need:
            score = float(scores[i]) + PHRASE_WEIGHT
            for sha, origin in sorted(owners, key=lambda vo: (vo[0], vo[1].position, vo[1].line)):
                if sha not in out or score > out[sha][0]:
                    out[sha] = (score, IncidentLine("symptom", engine.texts[i], origin))
    return out
