"""Parse a gate reply: ``<check>yes|no</check> <update>…</update> <next>continue|end</next>``.

The rules (also stated in ``prompts/gate.tmpl``): tag names are lowercase;
the check and next values are matched case-insensitively after trimming
spaces; each tag appears exactly once, in that order, with only whitespace
between and around them; one ``<think>…</think>`` block may come first. The
update text is unescaped (``&lt; &gt; &amp;``) and trimmed of surrounding
whitespace. Under a JSON-schema constraint (``prompts/gate.schema.json``) the
reply is instead one JSON object with the same three fields.

An update is also rejected when it cannot be a memory: empty when check is
yes, punctuation only ("…"), made only of the instructions' own words (a
template placeholder, or "yes" copied into the update), or an echo of the
prompt (its section tags, an instruction line, the question itself). Small
models do all of these; accepting one would wipe the memory.

Anything else is a ``ParseError`` whose reason says what was wrong. Only the
model's reply and the pinned instructions are consulted here; source text never
reaches this function except through what the model chose to write, so a chunk
that imitates the reply format cannot change how a reply is parsed.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from poimen.errors import ParseError
from poimen.llm.prompts import Rendered, sections, unescape

_THINK = re.compile(r"\A\s*<think>.*?</think>", re.S)
_REPLY = re.compile(
    r"\A\s*<check>(?P<check>[^<]*)</check>\s*"
    r"<update>(?P<update>.*?)</update>\s*"
    r"<next>(?P<next>[^<]*)</next>\s*\Z",
    re.S,
)
_TAGS = ("check", "update", "next")
_PROMPT_TAGS = re.compile(r"</?(?:question|memory|chunk)>|poimen-task:", re.I)
_WORDS = re.compile(r"\w+")
ECHO_LINE_CHARS = 40  # an instruction line this long found in an update is a copy, not a coincidence
# Example updates that earlier gate templates showed (v1: "the complete new memory"): models still return them.
KNOWN_PLACEHOLDERS = frozenset({"the complete new memory"})


@dataclass(frozen=True)
class GateReply:
    update: bool
    memory: str
    exit: bool


def parse_gate_reply(text: str, prompt: Rendered | None = None, kind: str = "tags") -> GateReply:
    """Parse one reply; ``prompt`` (the rendered gate prompt) lets placeholders and echoes be recognised.

    ``kind`` is the reply format the request asked for: ``tags`` (free text or a
    GBNF grammar) or ``json`` (a JSON-schema constraint).
    """
    if not text or not text.strip():
        raise ParseError("empty reply")
    check, raw_update, nxt = _fields_json(text) if kind == "json" else _fields_tags(text)
    check, nxt = check.strip().lower(), nxt.strip().lower()
    if check not in ("yes", "no"):
        raise ParseError(f"check must be yes or no, got {check[:40]!r}")
    if nxt not in ("continue", "end"):
        raise ParseError(f"next must be continue or end, got {nxt[:40]!r}")
    memory = unescape(raw_update.strip())
    if check == "yes":
        _reject_non_memory(raw_update, memory, prompt)
    return GateReply(update=check == "yes", memory=memory, exit=nxt == "end")


def _fields_tags(text: str) -> tuple[str, str, str]:
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
    return m.group("check"), m.group("update"), m.group("next")


def _fields_json(text: str) -> tuple[str, str, str]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not a JSON object: {exc}") from None
    if not isinstance(data, dict) or set(data) != set(_TAGS):
        raise ParseError(f"expected a JSON object with exactly {', '.join(_TAGS)}")
    if not all(isinstance(data[k], str) for k in _TAGS):
        raise ParseError("check, update and next must be strings")
    return data["check"], data["update"], data["next"]


def _words(text: str) -> str:
    return " ".join(_WORDS.findall(text.casefold()))


@functools.lru_cache(maxsize=16)
def _instruction_words(system: str) -> tuple[str, tuple[str, ...]]:
    """The words of a system prompt, spaced for a containment test, and those of each of its lines long enough that
    an update holding them copied it. A run sends one system prompt on every turn: its words are read once, not on
    every yes (a quarter of a millisecond of the event loop's time a turn)."""
    lines = tuple(f" {_words(line)} " for line in system.splitlines() if len(line.strip()) >= ECHO_LINE_CHARS)
    return f" {_words(system)} ", lines


def _reject_non_memory(raw_update: str, memory: str, prompt: Rendered | None) -> None:
    """Raise when a yes-update is not a memory: empty, a placeholder, or an echo of the prompt."""
    if not memory:
        raise ParseError("check is yes but update is empty")
    words = _words(memory)
    if not words or words in KNOWN_PLACEHOLDERS:
        raise ParseError(f"update is a placeholder, not a memory: {memory[:40]!r}")
    if _PROMPT_TAGS.search(raw_update):
        raise ParseError("update echoes the prompt (its section tags), not a memory")
    if prompt is None:
        return
    whole, lines = _instruction_words(prompt.system)
    if f" {words} " in whole:
        raise ParseError(f"update copies the instructions (a placeholder), not a memory: {memory[:40]!r}")
    if any(line in f" {words} " for line in lines):
        raise ParseError("update echoes the instructions, not a memory")
    question = sections(prompt.user).get("question", "")
    if question and words == _words(question):
        raise ParseError("update echoes the question, not a memory")
