"""Incidents as the read path shows them: a card's symptom, cause, fix and verification, each with its provenance.

``mem lookup`` prints a hit that is an incident's card (``poimen.index.incidents``) as the incident: the symptom
line that matches the question best, then the cause and the fix, then the line that says it worked, each tagged
with where it was copied from. ``mem ask`` answers a question about how, why or what was done from the matched
card's cause and fix lines (``poimen.read.answer``). One card is one incident, so its fix is never shown under
another incident's symptom.
"""

from __future__ import annotations

import re
from pathlib import Path

from poimen.read.card_rank import rank_cards
from poimen.read.context_lines import Origin
from poimen.read.incident_view import IncidentLine, IncidentView, span

ROLE_LABELS = {"symptom": "symptom", "cause": "cause", "action": "fix", "verification": "verified"}

_CARDS_SQL = ("SELECT i.memory_sha, i.title, i.summary, i.stream_id, i.first_time, i.last_time, r.query_id, "
              "coalesce(m.store, '') FROM incident i JOIN run r USING (run_id) "
              "LEFT JOIN memory m ON m.sha = i.memory_sha AND m.run_id = i.run_id WHERE i.memory_sha IN ({marks})")
_LINES_SQL = ("SELECT memory_sha, line_no, role, text, source, position, chunk_line FROM incident_line "
              "WHERE memory_sha IN ({marks}) ORDER BY memory_sha, line_no")
_MEMBERS_SQL = ("SELECT memory_sha, chunk_sha, line_from, line_to FROM incident_member WHERE memory_sha IN ({marks}) "
                "ORDER BY memory_sha, chunk_sha, line_from")
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
    r"|what (?:did|do) (?:we|you|they) (?:do|change|try)|what (?:was|were) (?:\w+ly )?(?:done|changed)|what (?:fixed|stopped|solved)"
    r"|how (?:did|do|was|were|have) .{0,80}\b(?:stop|get|make|handle|deal|fix|resolv|solv|mitigat|recover|back)\w*"
    r"|why (?:did|was|were|does|is|do)|what happened|what changed|done about"
    # what people did: "which limits did we change", "how did we unstick it", "what did we end up changing"
    r"|(?:what|which|how)\b[^?.]{0,80}?\b(?:did|have|had) (?:we|you|they|i|ops|on-?call|the team)"
    # a passive done to the thing: "how was it freed", "how were the writes unblocked"
    r"|how (?:was|were|is|are|got) (?:it|this|that|they|these|those|the\b[^?.]{0,40}?) (?:\w+(?:ed|en)|undone|"
    r"rebuilt)\b"
    # what did it: "what freed the disk", "what was eating the space", "what was behind the 503s"
    r"|what (?:actually |finally |eventually |really )?\w+ed (?:the|it|them|this|that)|what (?:was|were) (?:\w+ing|behind|wrong)"
    # the change itself: "which settings made them go through", "what change let it finish"
    r"|(?:what|which) (?:changes?|settings?|config\w*|fix(?:es)?|limits?|flags?|patch(?:es)?|workarounds?)"
    # ... named after a verb: "what was the lasting change", "which was the real fix" (bench/incidents11)
    r"|(?:what|which) (?:was|were|is|are) the (?:(?:lasting|permanent|real|actual|final|long-term|proper|eventual) )?"
    r"(?:changes?|fix(?:es)?|solution|remed(?:y|ies)|workarounds?)\b"
    # a knob asked for: "is there a knob that avoids it without downgrading?" (bench/incidents11)
    r"|\bis there (?:a|an|any) (?:\w+ )?(?:knob|setting|option|flag|workaround|fix|config\w*|env(?:ironment)? var\w*)\b"
    # what it took: "what had to be updated?", "which settings needed to change" (bench/incidents12)
    r"|(?:what|which)\b[^?.;]{0,40}?\b(?:had|has|have|needed|needs|need) to (?:be )?(?:updat|chang|fix|rais|increas|"
    r"bump|patch|rotat|restart|replac|revert|remov|add|set)\w*\b"
    # what got it back, and what keeps it from coming back: "what got writes flowing again", "what brought it back",
    # "which option or release stops the duplicates", "what caps it now", "what turned a slowdown into an outage"
    # (bench/incidents5-10)
    r"|(?:what|which)\b(?: \w+){0,3}? (?:\w+ly )?(?:got|brought) (?:\w+ ){1,4}?"
    r"(?:working|back|down|flowing|going|running|fixed|through|again|up)\b"
    r"|(?:what|which)\b(?: \w+){0,3}? (?:turned|ran out|stops?|prevents?|caps?|"
    r"keeps? (?:\w+ ){1,2}?from (?:happening|recurring|coming back|failing|breaking|filling|running out))\b"
    # "what did the follow-up release change", "what were the new subnets missing", "why, and what ..."
    r"|(?:what|which)\b[^?.;]{0,60}?\b(?:did|do|does)\b[^?.;]{0,40}?\b(?:change|fix|add|remove|set|stop)\b"
    r"|(?:what|which) (?:\w+ ){0,3}?(?:was|were) [^?.;]{0,40}?\b(?:missing|lacking)\b|\bwhy\b(?=\s*(?:[,;?]|and\b|$))"
    # what to do, asked for: "what do I put in the config to make it work?" (bench/incidents19), "what do I have to
    # do?", and what makes it work (bench/incidents21)
    r"|(?:what|which)\b[^?.;]{0,40}?\b(?:do|should|can|must) (?:i|we|you) (?:(?:have|need) to )?"
    r"(?:put|set|add|change|use|pass|run|do)\b"
    r"|(?:what|which)\b(?: \w+){0,3}? (?:makes?|made) (?:it|this|that) (?:work|run|start|pass)\b"
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
    and is no guess between two (``SURE``, ``CLOSE``; a card of symptoms alone still ranks with the other hits), nor
    under ``CLOSE`` of a card of symptoms alone that names nothing it names (the pasted error is that other
    incident's line, which says no fix: bench/incidents32 and 33 showed another incident's fix); then each other
    card that holds one of the question's failure signatures in a symptom line, as the lead does, and scores
    ``RECURRENCE`` of it or more (the same error in another stream, or again a week later: each incident with its
    own fix)."""
    from poimen.signatures import extract_signatures

    every = rank_cards(engine, question, views)
    ranked = [(s, v) for s, v in every if v.explains]
    if not ranked or ranked[0][0] < CARD_FLOOR:
        return []
    if ranked[0][0] < CLOSE * every[0][0] and not every[0][1].names & ranked[0][1].names:
        return []  # a card of symptoms alone matches clearly better, and names nothing the lead names: another incident
    if ranked[0][0] < SURE and len(ranked) > 1 and ranked[1][0] >= CLOSE * ranked[0][0]:
        return []  # a guess between two incidents
    text = question if isinstance(question, str) else question.text
    asked = [core for s in extract_signatures(text) if len(core := _core(s.key)) >= MIN_CORE]

    def held(view: IncidentView) -> frozenset[str]:
        """The question's signatures a symptom line of the card, or the raw line of its incident that printed the
        question's message, holds (one key's core inside the other's: a log template inside an exception's message,
        a pasted line with or without its quotes)."""
        said = [line.text for line in view.of("symptom")] + ([view.printed.text] if view.printed else [])
        mine = [_core(s.key) for text in said for s in extract_signatures(text)]
        return frozenset(a for a in asked for m in mine if len(m) >= MIN_CORE and (a in m or m in a))

    lead_score, lead = ranked[0]
    out = [(lead_score, lead)]
    # another incident holds every signature of the question the lead holds: not only the framework's wrapper both
    # print ("Servlet.service() … threw exception [Request processing failed; nested exception is …", its template
    # cut short) around another exception
    if (full := held(lead)):
        out += [(s, v) for s, v in ranked[1:] if s >= RECURRENCE * lead_score and held(v) >= full]
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
