"""The incident card: the memory of one incident, built by extraction.

A card holds the incident's lines by role, each copied verbatim from its record with its evidence (stream,
the record's file lines and kind, the line's offset in the record), its entities and its time span. Only two
things on a card are written rather than copied, and both stay apart from the copied lines: the ``title``
(the service and the first symptom) and the ``summary``, the seed's sentence "X failed because Y; resolved with
Z" assembled from the chosen lines.

``render(card)`` is the card as memory text: the copied lines alone, one per line, symptoms first, then causes,
actions and verifications. So a memory line's sha is the sha256 of a line that exists in its evidence chunk,
and lineage reaches the file line as it does today; the role of each line travels beside the text as
``card.roles`` (line sha -> role), never as a prefix on the line.

How many lines of each role a card keeps (``LIMITS``): a symptom is worth keeping once per distinct shape
(the same error from ten pods is one line), the best-scored first; causes and verifications two, actions four.
When no line reaches the role threshold for a cause, the best line that states a mechanism (a cause score of
``WEAK_CAUSE``) is taken, since a card with a fix and no cause still says less than it knows; failing that, the
diagnosis is the finding that led to the fix: among the plain statements between the first symptom and the first
action (no suspect ruled out, no hedge or question, no plan, no machine output, no line that says nothing of its own: ``_says_nothing``), the one that shares the most
words with the fix, then the nearest to it. People rarely write "because"; they write what they found, then
what they changed. When every symptom kept is a line a machine printed, the ``SAID`` best symptoms people wrote
("checkout says reservations hang for 30s"; an issue's title and description) are kept beside them (from
bench/incidents7; two since bench/incidents20, where the title alone lost "the rollback did not help"): a question
is asked in those words.

``choose(lines)`` is the selection; ``build_card(incident)`` and the offline engine's incident task
(``poimen.llm.offline_incident``, which sees only the lines of a prompt) both make their cards with it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from poimen.domain import sha256_text
from poimen.incidents.entities import Entity, entities
from poimen.incidents.lines import Line
from poimen.incidents.link import Incident
from poimen.incidents.assign import MACHINE_KINDS, assign
from poimen.incidents.cues import DECIDED_AGAINST
from poimen.incidents.toollines import FIELD_CHANGE, FIELD_ROW, about_post
from poimen.inputs.readers.speakers import FIELD_LINE
from poimen.incidents.roles import THRESHOLD, Role, body, hedge_factor, is_planned, said_in_row
from poimen.incidents.times import seconds
from poimen.signatures.masking import template
from poimen.text.log_lines import is_log_line, message_of

LIMITS = {"symptom": 3, "cause": 2, "action": 4, "verification": 2}
SAID = 2  # what people said they saw, kept beside the errors machines printed
WEAK_CAUSE = 0.6
TITLE_CHARS = 80
# (GlassFish's "[[" before its message and "]]" after it; WebSphere's thread id, logger and event type)
_PREFIX = re.compile(
    r"^(?:\[\[\s*|\[[^\]]*\]\s*|[0-9a-f]{8}\s+(?:[\w$]+\.)+[\w$]+\s+[A-Z]\s+|\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\s*|\d{1,2}:\d\d(?::\d\d(?:[.,]\d+)?)?\s*|"
    r"[-*>#$]\s*|(?:[A-Z][a-z]{2}\s+\d{1,2}\s+[\d:]+)\s*|\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}\s+[\d:.,]+\s*|"
    r"(?:DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL|CRITICAL)\b:?\s*|\([\w.$]+:\d+\)\s*|"
    r"[-\u2013\u2014|:]\s*|\d+\s+---\s+|(?:[a-z][\w$]*\.)+[\w$.\[\]/]*\s+[:-]\s+|"  # Spring's "1 --- ", a logger
    r"\d{4}/\d\d/\d\d\s+[\d:]+\s*|\d+#\d+:\s*(?:\*\d+\s*)?)+")  # nginx's "2024/11/07 21:03:51", "1190#1190: *88213"


@dataclass(frozen=True)
class Evidence:
    """Where a card line was copied from: the record's stream, file lines and kind, the line's offset in it."""

    stream: str
    line_start: int
    line_end: int
    kind: str
    offset: int
    time: str = ""
    author: str = ""


@dataclass(frozen=True)
class CardLine:
    """One copied line of a card, with its role and evidence; ``sha`` is the sha256 of ``text``."""

    text: str
    role: str
    evidence: Evidence
    score: float

    @property
    def sha(self) -> str:
        return sha256_text(self.text)


@dataclass(frozen=True)
class Card:
    """The memory of one incident. ``lines`` are copied, in render order; ``title`` and ``summary`` are written."""

    title: str
    summary: str
    lines: tuple[CardLine, ...]
    entities: tuple[Entity, ...]
    streams: tuple[str, ...]
    start: str  # the earliest record time as its source wrote it, "" when no record has one
    end: str

    def of(self, role: str) -> tuple[CardLine, ...]:
        return tuple(line for line in self.lines if line.role == role)

    @property
    def symptoms(self) -> tuple[CardLine, ...]:
        return self.of("symptom")

    @property
    def causes(self) -> tuple[CardLine, ...]:
        return self.of("cause")

    @property
    def actions(self) -> tuple[CardLine, ...]:
        return self.of("action")

    @property
    def verifications(self) -> tuple[CardLine, ...]:
        return self.of("verification")

    @property
    def roles(self) -> dict[str, str]:
        """Line sha -> role, for every copied line."""
        return {line.sha: line.role for line in self.lines}


def _card_line(role: Role, as_role: str) -> CardLine:
    r = role.line.record
    evidence = Evidence(role.line.stream, r.line_start, r.line_end, r.kind, role.line.offset, r.time, r.author)
    return CardLine(role.line.text, as_role, evidence, role.scores.of(as_role))


_CONTENT = re.compile(r"[A-Za-z][\w.-]{2,}")
_COMMON = frozenset("""the and for with from that this was were are has have had not but our their its into onto
    then than when also just still only all any some more most very now new old after before over under""".split())
DIAGNOSIS_WORDS = 6  # a finding states something: a line shorter than this is an exclamation or an ack


# What a program printed, pasted into a ticket's text: "J2CA0046E: Method createManagedConnection… DSRA8100E", "Caused by:
# org.postgresql.util.PSQLException: …" (an IBM message id, an exception's class)
_PASTED = re.compile(r"^(?:Caused by: )?(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b|^[A-Z][A-Z0-9]{3,7}\d{3,4}[EWIA]:")


def _printed(line: Line) -> bool:
    """Whether a card's symptom line is what a machine printed: a log's, a command's output, or an error pasted."""
    return line.record.kind in MACHINE_KINDS or bool(is_log_line(line.text) or _PASTED.match(line.text))


def _words_of(text: str) -> set[str]:
    return {w.lower().strip(".-") for w in _CONTENT.findall(text)} - _COMMON


def _says_nothing(text: str) -> bool:
    """Whether a line states no finding whatever words it shares with the fix: a tracker's field row or history
    line ("Components: docrender   Labels: tls", "* % Done changed from 0 to 100"), an e-mail's header field, a line
    that introduces what follows it ("Two changes, both live since yesterday:"), a change decided against."""
    text = said_in_row(text)  # (a PagerDuty log entry's row: its summary, "Acknowledged by Leah Okonjo.")
    return bool(FIELD_ROW.match(text) or FIELD_CHANGE.match(text) or FIELD_LINE.match(text)
                or about_post(text)  # "Issue #7731 has been updated by …"
                or text.rstrip().endswith(":") or DECIDED_AGAINST.search(text))


def _diagnosis(roles: tuple[Role, ...], chosen: dict[int, str]) -> int | None:
    """The finding that led to the fix (see the module docstring), as an index into ``roles``; None when none."""
    symptoms = [i for i, r in chosen.items() if r == "symptom"]
    actions = sorted(i for i, r in chosen.items() if r == "action")
    if not actions:
        return None
    first_action = actions[0]
    start = min(symptoms) if symptoms and min(symptoms) < first_action else -1
    fix_words = set().union(*(_words_of(roles[i].line.text) for i in actions))
    best, best_key = None, None
    for i in range(start + 1, first_action):
        r = roles[i]
        text, s = r.line.text, r.scores
        if i in chosen or r.role not in ("none", "cause") or s.ruled_out or s.ineffective \
                or r.line.record.kind in MACHINE_KINDS or r.line.is_heading or r.line.is_frame \
                or _says_nothing(text) \
                or len(text.split()) < DIAGNOSIS_WORDS \
                or hedge_factor(text) < 1.0 or is_planned(text):
            continue
        key = (len(_words_of(text) & fix_words), s.cause, i)
        if best_key is None or key > best_key:
            best, best_key = i, key
    return best


def choose(lines: Sequence[Line]) -> list[tuple[int, CardLine]]:
    """The card's lines: (index into ``lines``, the copied line with its role), in render order."""
    roles = assign(lines)
    chosen: dict[int, str] = {}
    seen_text: set[str] = set()
    for name, limit in LIMITS.items():
        candidates = [(i, r) for i, r in enumerate(roles) if r.role == name and not r.line.is_heading]
        if name == "cause" and not candidates:
            weak = [(i, r) for i, r in enumerate(roles)
                    if r.role == "none" and not r.scores.ruled_out and r.scores.cause >= WEAK_CAUSE]
            candidates = sorted(weak, key=lambda ir: -ir[1].scores.cause)[:1]
        shapes: set[str] = set()
        kept = []
        for i, r in sorted(candidates, key=lambda ir: (-ir[1].scores.of(name), ir[0])):
            shape = template(r.line.text) if name == "symptom" else r.line.text
            if shape in shapes or r.line.text in seen_text:
                continue
            shapes.add(shape)
            kept.append(i)
            if len(kept) == limit:
                break
        if name == "symptom" and kept and all(_printed(roles[i].line) for i in kept):
            # what people said they saw ("Reservations timing out / 500s"), beside what the machines printed: the
            # words a question about it uses
            said = [i for i, r in sorted(candidates, key=lambda ir: (-ir[1].scores.symptom, ir[0]))
                    if not _printed(r.line) and i not in kept and r.line.text not in seen_text]
            kept += said[:SAID]
        for i in kept:
            seen_text.add(roles[i].line.text)
            chosen[i] = name
    if "cause" not in chosen.values():
        found = _diagnosis(roles, chosen)
        if found is not None:
            chosen[found] = "cause"
    if "symptom" not in chosen.values():
        # A card says what was seen: a write-up's part that tells its failure as a cause ("... so every pod
        # crashed") gives its best failure line to the symptom, when its other role keeps a line without it.
        found = max((i for i, r in enumerate(roles) if r.scores.symptom >= THRESHOLD and not r.scores.ruled_out
                     and not r.line.is_heading), key=lambda i: (roles[i].scores.symptom, -i), default=None)
        if found is not None and (found not in chosen or list(chosen.values()).count(chosen[found]) > 1):
            chosen[found] = "symptom"
    order = list(LIMITS)
    return [(i, _card_line(roles[i], role)) for i, role in sorted(chosen.items(), key=lambda ir: (order.index(ir[1]), ir[0]))]



def clause(text: str) -> str:
    """A copied line made fit to stand inside a sentence: its stamp, speaker, level, field name and markup in front
    dropped; a table row's longest cell."""
    text = message_of(body(text))
    text = field.group("value") if (field := FIELD_LINE.match(text)) else text  # "Subject: …": what it says
    text = said_in_row(text)
    text = re.sub(r"\s+", " ", _PREFIX.sub("", text)).strip().removesuffix("]]").rstrip(".;")
    plain = re.fullmatch(r"[A-Z][a-z]+", text.split(" ", 1)[0].rstrip(",:")) is not None  # not "HikariPool-1"
    return text[:1].lower() + text[1:] if plain else text


def service_of(lines: Sequence[Line], symptoms: Sequence[CardLine] = ()) -> str:
    """The service an incident is about: the specific service its ``symptoms`` (the card's symptom lines) name, by
    the sum of the scores of the lines that name it (a warning's "unknown X-Tenant header 'demo-sandbox'" counts for
    less than the error and what people said; bench/incidents22), else the one all its lines name most (a pod's hash
    suffix dropped). What failed names the service; a cause line may name the upstream it blamed ("when the ip-intel
    service was moved") more often. When no line names one, the headings its lines stand under may ("POSTMORTEM:
    api-gateway crash loop" over its "SECOND PROBLEM")."""
    def named(texts, weights=None) -> Counter:
        out: Counter = Counter()
        for k, text in enumerate(texts):
            for value in dict.fromkeys(e.value for e in entities(text) if e.kind == "service" and e.weight >= 0.5):
                out[value] += weights[k] if weights else 1
        return out

    counts = named([s.text for s in symptoms], [s.score for s in symptoms]) or named(line.text for line in lines) or \
        named(dict.fromkeys(h for line in lines for h in line.record.headings))
    return counts.most_common(1)[0][0] if counts else ""


def _shorten(text: str) -> str:
    """``text`` cut to ``TITLE_CHARS``, at a space unless that leaves less than half (a long task id or path)."""
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[:TITLE_CHARS - 1]
    at_space = cut.rsplit(" ", 1)[0]
    return (at_space if len(at_space) >= TITLE_CHARS // 2 else cut) + "…"


def _strongest(lines: Sequence[CardLine]) -> str:
    """The card's strongest symptom (the first of the strongest), as a clause: the failure itself, not a warning
    that happened to come first; "" when the card has none."""
    symptoms = [line for line in lines if line.role == "symptom"]
    top = max((line.score for line in symptoms), default=0.0)
    return next((clause(line.text) for line in symptoms if line.score == top), "")


def summary_of(subject: str, lines: Sequence[CardLine]) -> str:
    symptom = _strongest(lines)
    causes = [clause(line.text) for line in lines if line.role == "cause"]
    actions = [clause(line.text) for line in lines if line.role == "action"]
    what = subject or symptom or "the incident"
    sentence = f"{what} failed"
    if symptom and subject:
        sentence += f" ({_shorten(symptom)})"
    if causes:
        sentence += f" because {causes[0]}"
    if actions:
        sentence += f"; resolved with {'; '.join(actions[:2])}"
    return sentence + "."


def title_of(service: str, lines: Sequence[CardLine]) -> str:
    """The service and the card's strongest symptom (``_strongest``)."""
    return _shorten(": ".join(part for part in (service, _strongest(lines)) if part) or "incident")


def build_card(incident: Incident) -> Card:
    """The card of ``incident``: its lines by role, copied verbatim, each with its evidence."""
    lines = [line for _, line in choose(incident.lines)]
    service = service_of(incident.lines, [line for line in lines if line.role == "symptom"])
    timed = sorted((t, r.time) for ep in incident.episodes for r in ep.records
                   if r.time and (t := seconds(r.time)) is not None)
    return Card(title=title_of(service, lines), summary=summary_of(service, lines), lines=tuple(lines),
                entities=tuple(sorted(incident.entities)), streams=incident.streams,
                start=timed[0][1] if timed else "", end=timed[-1][1] if timed else "")


def render(card: Card) -> str:
    """The card as memory text: every copied line verbatim on its own line, in role order; no written words."""
    return "\n".join(line.text for line in card.lines)
