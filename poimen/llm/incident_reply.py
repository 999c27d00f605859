"""Parse an incident reply: ``<title>…</title> <symptom>1 4</symptom> <cause>7</cause> <action>9</action>
<verification>12</verification> <summary>…</summary>``, or the same six fields as one JSON object under a
JSON-schema constraint (``prompts/incident.schema.json``).

The rules (also stated in ``prompts/incident.tmpl``): each tag appears exactly once, in that order, with only
whitespace between and around them (one ``<think>…</think>`` block may come first); a role tag holds line numbers
separated by spaces or commas, each between 1 and the number of lines shown; title and summary are plain text
(``&lt; &gt; &amp;`` for < > &), unescaped and trimmed. A line named under two roles keeps the first in the priority action, cause, verification, symptom (the
line that states the fix matters more than its mention of the error), which is how the offline engine breaks a
tie too. A card with no symptom line is "no incident here": an answer, not a failure. Anything else is a
``ParseError`` saying what was wrong; the caller asks again, then records the failure, and never defaults a card.

Only the model's reply and the number of lines shown are consulted: the incident's text never reaches this
function, so a line that imitates the reply format cannot change how a reply is parsed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from poimen.errors import ParseError
from poimen.llm.prompts import escape, unescape

ROLE_TAGS = ("symptom", "cause", "action", "verification")
TAGS = ("title", *ROLE_TAGS, "summary")
PRIORITY = ("action", "cause", "verification", "symptom")
_THINK = re.compile(r"\A\s*<think>.*?</think>", re.S)
_REPLY = re.compile(r"\A\s*" + r"\s*".join(rf"<{t}>(?P<{t}>.*?)</{t}>" for t in TAGS) + r"\s*\Z", re.S)
_NUMBERS = re.compile(r"[\s,]+")
TITLE_CHARS = 200
SUMMARY_CHARS = 1000


@dataclass(frozen=True)
class IncidentReply:
    title: str
    summary: str
    roles: dict[int, str]  # line number (1-based) -> role, for the lines that play one

    @property
    def is_incident(self) -> bool:
        return "symptom" in self.roles.values()

    def lines(self, role: str) -> list[int]:
        return sorted(n for n, r in self.roles.items() if r == role)


def parse_incident_reply(text: str, n_lines: int, kind: str = "tags") -> IncidentReply:
    """Parse one reply to a prompt that showed ``n_lines`` lines; ``kind`` is ``tags`` or ``json``."""
    if not text or not text.strip():
        raise ParseError("empty reply")
    fields = _fields_json(text) if kind == "json" else _fields_tags(text)
    numbers = {role: _numbers(fields[role], role, n_lines) for role in ROLE_TAGS}
    roles: dict[int, str] = {}
    for role in PRIORITY:
        for n in numbers[role]:
            roles.setdefault(n, role)
    raw = str(fields["title"]) + str(fields["summary"])
    if kind != "json" and ("<" in raw or ">" in raw):
        raise ParseError("title and summary are plain text: < and > are written &lt; and &gt;")
    title = " ".join(unescape(str(fields["title"])).split())[:TITLE_CHARS]
    summary = " ".join(unescape(str(fields["summary"])).split())[:SUMMARY_CHARS]
    return IncidentReply(title, summary, roles)


def _fields_tags(text: str) -> dict[str, str]:
    body = _THINK.sub("", text, count=1)
    for tag in TAGS:
        opens, closes = body.count(f"<{tag}>"), body.count(f"</{tag}>")
        if opens != 1 or closes != 1:
            raise ParseError(f"expected one <{tag}>…</{tag}>, found {opens} opening and {closes} closing tags")
    m = _REPLY.match(body)
    if not m:
        raise ParseError("tags out of order or text outside them")
    return {t: m.group(t) for t in TAGS}


def _fields_json(text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not a JSON object: {exc}") from None
    if not isinstance(data, dict) or set(data) != set(TAGS):
        raise ParseError(f"expected a JSON object with exactly {', '.join(TAGS)}")
    if not isinstance(data["title"], str) or not isinstance(data["summary"], str):
        raise ParseError("title and summary must be strings")
    for role in ROLE_TAGS:
        if not isinstance(data[role], list) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                       for n in data[role]):
            raise ParseError(f"{role} must be a list of line numbers")
        data[role] = " ".join(str(n) for n in data[role])
    return data


def _numbers(raw: str, role: str, n_lines: int) -> list[int]:
    out = []
    for token in _NUMBERS.split(raw.strip()):
        if not token:
            continue
        if not token.isdigit():
            raise ParseError(f"<{role}> holds line numbers, got {token[:20]!r}")
        n = int(token)
        if not 1 <= n <= n_lines:
            raise ParseError(f"<{role}> names line {n}, but the incident has lines 1 to {n_lines}")
        out.append(n)
    return out


def render_reply(title: str, roles: dict[int, str], summary: str) -> str:
    """A reply in the tags format (what the offline engine answers with)."""
    def nums(role: str) -> str:
        return " ".join(str(n) for n in sorted(n for n, r in roles.items() if r == role))

    def plain(text: str) -> str:
        return escape(" ".join(text.split()))

    return (f"<title>{plain(title)}</title>\n" + "".join(f"<{r}>{nums(r)}</{r}>\n" for r in ROLE_TAGS)
            + f"<summary>{plain(summary)}</summary>")
