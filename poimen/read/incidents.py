"""Incidents as the read path shows them: a card's symptom, cause, fix and verification, each with its provenance.

``mem lookup`` prints a hit that is an incident's card (``poimen.index.incidents``) as the incident: the symptom
line that matches the question best, then the cause and the fix, then the line that says it worked, each tagged
with where it was copied from. ``mem ask`` answers a question about how, why or what was done from the matched
card's cause and fix lines (``poimen.read.answer``). One card is one incident, so its fix is never shown under
another incident's symptom.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path

from poimen.read.context_lines import Origin

SHOWN = {"symptom": 1, "cause": 2, "action": 4, "verification": 1}
ROLE_LABELS = {"symptom": "symptom", "cause": "cause", "action": "fix", "verification": "verified"}
_CARDS_SQL = ("SELECT i.memory_sha, i.title, i.summary, i.stream_id, i.first_time, i.last_time, r.query_id, "
              "coalesce(m.store, '') FROM incident i JOIN run r USING (run_id) "
              "LEFT JOIN memory m ON m.sha = i.memory_sha AND m.run_id = i.run_id WHERE i.memory_sha IN ({marks})")
_LINES_SQL = ("SELECT memory_sha, line_no, role, text, source, position, chunk_line FROM incident_line "
              "WHERE memory_sha IN ({marks}) ORDER BY memory_sha, line_no")
_MEMBERS_SQL = ("SELECT memory_sha, chunk_sha, line_from, line_to FROM incident_member WHERE memory_sha IN ({marks}) "
                "ORDER BY memory_sha, chunk_sha, line_from")
_WORD = re.compile(r"[A-Za-z][A-Za-z_.-]{2,}")


@dataclass(frozen=True)
class IncidentLine:
    role: str
    text: str
    origin: Origin

    def render(self) -> str:
        return f"{self.text}  [{self.origin.tag()}]"


@dataclass(frozen=True)
class IncidentView:
    """One card: what it is called, where and when it happened, and its lines by role, in the card's order."""

    sha: str
    title: str
    summary: str
    stream: str
    first_time: str
    last_time: str
    lines: tuple[IncidentLine, ...]
    members: tuple[tuple[str, int, int], ...] = ()  # the chunk lines its whole incident stands on (chunk sha, from, to)
    printed: IncidentLine | None = None  # the raw line of its incident that prints a question's message (``rank_cards``)

    @functools.cached_property
    def names(self) -> frozenset[tuple[str, str]]:
        """The specific services, hosts and tickets the card's lines name (``named``)."""
        return frozenset(named("\n".join(line.text for line in self.lines)))

    def of(self, role: str) -> list[IncidentLine]:
        return [line for line in self.lines if line.role == role]

    @property
    def explains(self) -> bool:
        """Whether the card says why it happened or what was done, not only what was seen."""
        return any(line.role in ("cause", "action") for line in self.lines)

    def matched_symptom(self, question: str) -> IncidentLine | None:
        """The symptom line that shares most words with ``question`` (the first symptom on a tie)."""
        symptoms = self.of("symptom")
        if not symptoms:
            return None
        asked = set(_words(question))
        return max(symptoms, key=lambda line: (len(asked & set(_words(line.text))), -symptoms.index(line)))

    def shown(self, question: str) -> list[IncidentLine]:
        """What a lookup shows of the card: the matched symptom (the raw line that printed the question's message,
        when that is what matched), then up to ``SHOWN`` causes, fixes, verification."""
        matched = self.printed or self.matched_symptom(question)
        out = [matched] if matched else []
        for role in ("cause", "action", "verification"):
            out.extend(self.of(role)[:SHOWN[role]])
        return out

    def when(self) -> str:
        return span(self.first_time, self.last_time)


_EPOCH = re.compile(r"^\d{9,10}(?:\.\d+)?$")


def shown_time(value: str) -> str:
    """A record's time as a person reads it: a Slack or Unix epoch stamp ("1719906595.810595") as UTC ISO
    ("2024-07-02 07:49:55Z"); any other stamp as written."""
    if not _EPOCH.match(value):
        return value
    from datetime import datetime, timezone

    return datetime.fromtimestamp(float(value), timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def span(first: str, last: str) -> str:
    """An incident's time span as shown: "" without a time, one time, or "first – last"."""
    if not first:
        return ""
    return shown_time(first) if first == last else f"{shown_time(first)} – {shown_time(last)}"


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def incident_views(db_path: Path, shas: list[str], con=None) -> dict[str, IncidentView]:
    """The cards among ``shas`` (memory shas), read from the index's incident tables; {} for an index without them."""
    import duckdb

    from poimen.index.read import connect_read_only

    wanted = sorted(set(shas))
    if not wanted:
        return {}
    own = con is None
    con = connect_read_only(db_path) if own else con
    marks = ", ".join("?" * len(wanted))
    try:
        cards = con.execute(_CARDS_SQL.format(marks=marks), wanted).fetchall()
        rows = con.execute(_LINES_SQL.format(marks=marks), wanted).fetchall() if cards else []
    except duckdb.CatalogException:
        return {}  # an index built before the incident projections
    try:
        spans = con.execute(_MEMBERS_SQL.format(marks=marks), wanted).fetchall() if cards else []
    except duckdb.CatalogException:
        spans = []  # an index built before incident_member: the cards' own lines alone
    finally:
        if own:
            con.close()
    lines: dict[str, list[IncidentLine]] = {}
    meta = {c[0]: c for c in cards}
    for sha, _, role, text, source, position, chunk_line in rows:
        query_id, store = meta[sha][6], meta[sha][7]
        origin = Origin("memory", "L1", sha, source, int(position), int(chunk_line), store or "episodic", query_id)
        lines.setdefault(sha, []).append(IncidentLine(role, text, origin))
    members: dict[str, list[tuple[str, int, int]]] = {}
    for sha, chunk, first, last in spans:
        members.setdefault(sha, []).append((chunk, int(first), int(last)))
    return {sha: IncidentView(sha, title, summary, stream, first, last, tuple(lines.get(sha, ())),
                              tuple(members.get(sha, ())))
            for sha, title, summary, stream, first, last, _, _ in cards}


def incident_shape(view: IncidentView, question: str) -> dict:
    """The JSON of a card as a lookup shows it: title, summary, where and when, and the lines shown, with roles."""
    from dataclasses import asdict

    return {"sha": view.sha, "title": view.title, "summary": view.summary, "stream": view.stream,
            "first_time": view.first_time, "last_time": view.last_time,
            "lines": [{"role": line.role, "text": line.text, "origin": asdict(line.origin)}
                      for line in view.shown(question)]}


def render_incident(shape: dict) -> list[str]:
    """The lines ``mem lookup`` prints under an incident hit: a title line, then each shown line by role."""
    when = span(shape["first_time"], shape["last_time"])
    head = f"incident: {shape['title']}" + (f" · {shape['stream']}" if shape["stream"] else "") + \
        (f" · {when}" if shape["first_time"] else "")
    out = [head]
    for line in shape["lines"]:
        origin = Origin(**line["origin"])
        out.append(f"{ROLE_LABELS.get(line['role'], line['role']):>8}  {line['text']}  [{origin.tag()}]")
    return out


# A question about what happened to a past incident: how it was fixed, what was done, why it happened.
_ABOUT_INCIDENT = re.compile(
    r"\b(?:fix(?:ed|es|ing)?|resolv\w*|solv\w*|mitigat\w*|remediat\w*|workaround|recover\w*|root[ -]cause|caus\w*"
    r"|what (?:did|do) (?:we|you|they) (?:do|change|try)|what (?:was|were) (?:done|changed)|what (?:fixed|stopped|solved)"
    r"|how (?:did|do|was|were|have) .{0,80}\b(?:stop|get|make|handle|deal|fix|resolv|solv|mitigat|recover|back)\w*"
    r"|why (?:did|was|were|does|is|do)|what happened|what changed|done about"
    # what people did: "which limits did we change", "how did we unstick it", "what did we end up changing"
    r"|(?:what|which|how)\b[^?.]{0,80}?\b(?:did|have|had) (?:we|you|they|i|ops|on-?call|the team)"
    # a passive done to the thing: "how was it freed", "how were the writes unblocked"
    r"|how (?:was|were|is|are|got) (?:it|this|that|they|these|those|the\b[^?.]{0,40}?) \w+(?:ed|en)"
    # what did it: "what freed the disk", "what was eating the space", "what was behind the 503s"
    r"|what (?:actually |finally |eventually |really )?\w+ed (?:the|it|them|this|that)|what (?:was|were) (?:\w+ing|behind|wrong)"
    # the change itself: "which settings made them go through", "what change let it finish"
    r"|(?:what|which) (?:changes?|settings?|config\w*|fix(?:es)?|limits?|flags?|patch(?:es)?|workarounds?)"
    # what got it back, and what keeps it from coming back: "what got writes flowing again", "what brought it back",
    # "which option or release stops the duplicates", "what caps it now", "what turned a slowdown into an outage"
    # (bench/incidents5-10)
    r"|(?:what|which)\b(?: \w+){0,3}? (?:\w+ly )?(?:got|brought) (?:\w+ ){1,3}?"
    r"(?:working|back|down|flowing|going|running|fixed|through|again|up)\b"
    r"|(?:what|which)\b(?: \w+){0,3}? (?:turned|ran out|stops?|prevents?|caps?)\b"
    # "what did the follow-up release change", "what were the new subnets missing", "why, and what ..."
    r"|(?:what|which)\b[^?.;]{0,60}?\b(?:did|do|does)\b[^?.;]{0,40}?\b(?:change|fix|add|remove|set|stop)\b"
    r"|(?:what|which) (?:\w+ ){0,3}?(?:was|were) [^?.;]{0,40}?\b(?:missing|lacking)\b|\bwhy\s*(?:[,;?]|and\b|$)"
    r"|how (?:was|were|is|are|got) (?:\w+ ){1,4}?\w+(?:ed|en)\b)\b", re.I)
CARD_RANK = 10  # a card answers when lookup ranks it among the top this many hits for the question


def asks_about_incident(question: str) -> bool:
    """Whether ``question`` asks how a failure was fixed, what was done about it, or why it happened."""
    return bool(_ABOUT_INCIDENT.search(question))


CARD_TIE = 0.005  # cards whose fused scores are this close are a tie (chosen on the dev suites: 0.001-0.005 alike)


def matched_card(db_path: Path, question: str, index, engine_of=None) -> IncidentView | None:
    """The card lookup ranks first among its top ``CARD_RANK`` hits for ``question``, of those that say what was
    done or why (a card of symptoms alone answers no such question); None when none is there.

    With ``engine_of`` (a function that gives the context builder, called only on a tie), cards whose fused scores
    tie with the first (within ``CARD_TIE`` of it: a whole card's words and vector say no more for one than for the
    other) are told apart by their lines (``rank_cards``: the best line's score, the phrase it shares, what it
    names); the first in the fused order of those its lines score best."""
    hits = index.search(question, CARD_RANK, provenance=False)
    views = incident_views(db_path, [h.sha for h in hits if h.kind == "memory"])
    ranked = [(h.score, views[h.sha]) for h in hits if h.sha in views and views[h.sha].explains]
    if not ranked:
        return None
    tied = {v.sha: v for score, v in ranked if score >= (1 - CARD_TIE) * ranked[0][0]}
    if engine_of is None or len(tied) < 2:
        return ranked[0][1]
    by_lines = {v.sha: s for s, v in rank_cards(engine_of(), question, tied)}
    return max((v for _, v in ranked if v.sha in tied), key=lambda v: by_lines[v.sha])


def card_answer_memory(view: IncidentView, question: str) -> str:
    """The card as an answer prompt's memory (``poimen.llm.tags.card_memory``): its title, then the matched
    symptom, the causes, the fixes and the verification, each labelled by role and tagged with its provenance."""
    from poimen.llm.tags import card_memory

    return card_memory(view.title, [(ROLE_LABELS[line.role], line.render()) for line in view.shown(question)])


OTHER_LINE_WEIGHT = 0.8  # a card's cause, fix or verification line speaks for it less than a symptom line
PHRASE_TOKENS = 8  # a run of this many words in a row shared with the question is the same message
PHRASE_WEIGHT = 0.5  # what sharing such a run adds to a line's score (chosen on bench/incidents dev)
NAMING_WEIGHT = 0.2  # what naming the question's service, host or ticket adds (chosen on the dev suites 1-3)
_NAMING = ("service", "host", "ticket")
_TOKEN = re.compile(r"[A-Za-z_]+|\d+")


def phrase_tokens(text: str) -> list[str]:
    """A line's words for phrase matching: lower-cased, every number one token ``0`` (ids, ports, counts differ
    between occurrences of one message)."""
    return ["0" if t.isdigit() else t.lower() for t in _TOKEN.findall(text)]


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


def named(text: str) -> dict[tuple[str, str], float]:
    """The specific things ``text`` names that say which incident it is about: services (a pod's suffix dropped),
    hosts and tickets, by their linking weight (``poimen.incidents.entities``; generic names left out)."""
    from poimen.incidents.entities import entities

    return {(e.kind, e.value): e.weight for e in entities(text) if e.kind in _NAMING and e.weight >= 0.5}


def rank_cards(engine, question: str, views: dict[str, IncidentView]) -> list[tuple[float, IncidentView]]:
    """Every card, best first, by how well its lines match ``question`` under the context builder's scorer plus
    the phrase it shares with it in a row (``phrase_bonus``): its best symptom line, or ``OTHER_LINE_WEIGHT`` of
    its best other line, or a raw line of its incident that prints the question's message (``_printed_at``), plus
    ``NAMING_WEIGHT`` for naming what the question names (``named``: the same error on checkout-api and on orders-db
    is two incidents, and the question says which); ties by sha."""
    scores = engine.scores(question)
    text = question if isinstance(question, str) else question.text
    asked, asked_names = phrase_tokens(text), named(text)
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
        out.append((best, view))
    out.sort(key=lambda sv: (-sv[0], sv[1].sha))
    return out


PRINTED_CANDIDATES = 40  # the raw lines, best first, searched for the question's own message


def _printed_at(engine, scores, asked: list[str],
                views: dict[str, IncidentView]) -> dict[str, tuple[float, IncidentLine]]:
    """Per card, a raw line of its incident (``IncidentView.members``) that holds the question's message word for
    word (a run of ``PHRASE_TOKENS`` words), with its score plus ``PHRASE_WEIGHT``, as if it were one of the card's
    symptom lines: the line a pasted error was printed as outranks a card that merely shares its exception or errno,
    though a card keeps only a few of its incident's lines. Among the ``PRINTED_CANDIDATES`` raw lines the scorer
    ranks first."""
    import numpy as np

    if len(asked) < PHRASE_TOKENS or not len(scores):
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
        if owners and shared_run(asked, phrase_tokens(engine.texts[i])) >= PHRASE_TOKENS:
            score = float(scores[i]) + PHRASE_WEIGHT
            for sha, origin in sorted(owners, key=lambda vo: (vo[0], vo[1].position, vo[1].line)):
                if sha not in out or score > out[sha][0]:
                    out[sha] = (score, IncidentLine("symptom", engine.texts[i], origin))
    return out


def all_cards(db_path: Path) -> dict[str, IncidentView]:
    """Every current card of the index at ``db_path``."""
    import duckdb

    from poimen.index.read import connect_read_only

    con = connect_read_only(db_path)
    try:
        try:
            shas = [r[0] for r in con.execute("SELECT memory_sha FROM incident ORDER BY memory_sha").fetchall()]
        except duckdb.CatalogException:
            return {}
        return incident_views(db_path, shas, con)
    finally:
        con.close()


CARD_FLOOR = 0.8  # a card leads a lookup when its best line scores this much (chosen on bench/incidents dev)
RECURRENCE = 0.85  # another card holding the query's failure signature, this close to the lead, is shown with it
# A lead under SURE with a runner-up within CLOSE of it is a guess between two incidents: no card leads, and the
# lookup ranks its hits as it does without cards (showing the wrong incident's fix first is worse than neither).
# Both chosen on the dev suites (bench/incidents, incidents2, incidents3): of the leads under 1.0, those with a
# runner-up within 0.85 were wrong 6 times in 8.
SURE = 1.0
CLOSE = 0.85


MIN_CORE = 20  # a signature's core shorter than this ("http:502") is a family, not one failure
_KEY_HEAD = re.compile(r"^[a-z0-9_]+:")
_KEY_EDGE = re.compile(r"^[\s`'\"]+|(?:[\s`'\".,;:]|<\*>|<NUM>)+$")


def _core(key: str) -> str:
    """A signature key without its tool and the quotes, stops and open placeholders around it, lower-cased."""
    return _KEY_EDGE.sub("", _KEY_HEAD.sub("", key, count=1)).lower()


def leading_cards(engine, question: str, views: dict[str, IncidentView]) -> list[tuple[float, IncidentView]]:
    """The cards a lookup shows first: the best card that says why or what was done when it reaches ``CARD_FLOOR``
    and is no guess between two (``SURE``, ``CLOSE``; a card of symptoms alone still ranks with the other hits), then each other card that holds
    one of the question's failure signatures in a symptom line, as the lead does, and scores ``RECURRENCE`` of it
    or more (the same error in another stream, or again a week later: each incident with its own fix)."""
    from poimen.signatures import extract_signatures

    ranked = [(s, v) for s, v in rank_cards(engine, question, views) if v.explains]
    if not ranked or ranked[0][0] < CARD_FLOOR:
        return []
    if ranked[0][0] < SURE and len(ranked) > 1 and ranked[1][0] >= CLOSE * ranked[0][0]:
        return []  # a guess between two incidents
    text = question if isinstance(question, str) else question.text
    asked = [core for s in extract_signatures(text) if len(core := _core(s.key)) >= MIN_CORE]

    def held(view: IncidentView) -> bool:
        """Whether a symptom line of the card holds one of the question's signatures (one key's core inside the
        other's: a log template inside an exception's message, a pasted line with or without its quotes)."""
        mine = [_core(s.key) for line in view.of("symptom") for s in extract_signatures(line.text)]
        return any(a in m or m in a for a in asked for m in mine if len(m) >= MIN_CORE)

    lead_score, lead = ranked[0]
    out = [(lead_score, lead)]
    if held(lead):
        out += [(s, v) for s, v in ranked[1:] if s >= RECURRENCE * lead_score and held(v)]
    return out


def card_first(db_path: Path, question: str, index, engine, views: dict[str, IncidentView]) -> tuple[tuple[str, str], ...]:
    """The lines of the card a context puts first, as (text, card sha): for a question about how a failure was fixed,
    the card ``ask`` answers from (``matched_card``); for a failure itself (an error pasted), the card a lookup leads
    with (``leading_cards``); () for any other question, or when none matches."""
    view = None
    if asks_about_incident(question):
        view = matched_card(db_path, question, index, lambda: engine)
    elif (lead := leading_cards(engine, question, views)):
        view = lead[0][1]
    return tuple((line.text, view.sha) for line in view.shown(question)) if view is not None else ()
