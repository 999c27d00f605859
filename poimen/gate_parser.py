"""Parse a gate reply: ``<check>yes|no</check> <update>…</update> <next>continue|end</next>``.

The rules (also stated in ``prompts/gate.tmpl``): tag names are lowercase;
the check and next values are matched case-insensitively after trimming
spaces; each tag appears exactly once, in that order, with only whitespace
between and around them; one ``<think>…</think>`` block may come first. The
update text is unescaped (``&lt; &gt; &amp;``) and trimmed of surrounding
whitespace. Anything else is a ``ParseError`` whose reason says what was wrong.
Only the model's reply is parsed here; source text never reaches this function
except through what the model chose to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poimen.errors import ParseError
from poimen.prompts import unescape

_THINK = re.compile(r"\A\s*<think>.*?</think>", re.S)
_REPLY = re.compile(
    r"\A\s*<check>(?P<check>[^<]*)</check>\s*"
    r"<update>(?P<update>.*?)</update>\s*"
    r"<next>(?P<next>[^<]*)</next>\s*\Z",
    re.S,
)
_TAGS = ("check", "update", "next")


@dataclass(frozen=True)
class GateReply:
    update: bool
    memory: str
    exit: bool


def parse_gate_reply(text: str) -> GateReply:
    if not text or not text.strip():
        raise ParseError("empty reply")
    body = _THINK.sub("", text, count=1)
    for tag in _TAGS:
        opens, closes = body.count(f"<{tag}>"), body.count(f"</{tag}>")
        if opens != 1 or closes != 1:
            raise ParseError(f"expected one <{tag}>…</{tag}>, found {opens} opening and {closes} closing tags")
    if "<think>" in body:
        raise ParseError("<think> is allowed only once, before <check>")
    m = _REPLY.match(body)
    if not m:
        raise ParseError("tags out of order or text outside them")
    check = m.group("check").strip().lower()
    nxt = m.group("next").strip().lower()
    if check not in ("yes", "no"):
        raise ParseError(f"check must be yes or no, got {m.group('check').strip()[:40]!r}")
    if nxt not in ("continue", "end"):
        raise ParseError(f"next must be continue or end, got {m.group('next').strip()[:40]!r}")
    memory = unescape(m.group("update").strip())
    if check == "yes" and not memory:
        raise ParseError("check is yes but update is empty")
    return GateReply(update=check == "yes", memory=memory, exit=nxt == "end")
