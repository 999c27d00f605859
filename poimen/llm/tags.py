"""The provenance tag a context line closes with, "  [store/level sha8 source#chunk:line ×n]": the one definition
that the context builder writes (``poimen.read.context_lines``) and the offline engine reads an answer prompt's
lines by, so nothing inside a line's text can pass for its tag."""

from __future__ import annotations

import re

TAG = re.compile(r"  \[[a-z_]+/[A-Za-z0-9]+ [0-9a-f]{8}(?: [^\]\n]*)?\]$")


def untagged(line: str) -> str:
    """A tagged context line's own text: its provenance tag is metadata, not words the line says."""
    return TAG.sub("", line)


def tagged_lines(text: str) -> list[str] | None:
    """The lines of a ``Context.render_tagged`` text, one unit each, or None when ``text`` is not one (a line
    without a tag). Its lines must not be split as prose: short lines that end in a tag, not a full stop, look
    hard-wrapped, and joining them would carry one line's tag onto the next line's text."""
    lines = [line for line in text.split("\n") if line.strip()]
    return lines if lines and all(TAG.search(line) for line in lines) else None


# An incident's card as an answer prompt's memory: a head line, then each line under its role's label, tagged.
CARD_HEAD = "incident: "
CARD_LABELS = ("symptom", "cause", "fix", "verified")
_LABELLED = re.compile(r"^(" + "|".join(CARD_LABELS) + r"): (.+)$")


def card_memory(title: str, lines: list[tuple[str, str]]) -> str:
    """The card's memory text: ``incident: <title>``, then ``<label>: <tagged line>`` for each (label, line)."""
    return "\n".join([CARD_HEAD + " ".join(title.split())] + [f"{label}: {line}" for label, line in lines])


def card_lines(text: str) -> list[tuple[str, str]] | None:
    """(label, tagged line) of a ``card_memory`` text, or None when ``text`` is not one. The head and the labels
    are poimen's: a line of a card is one line of its source, so no source text can add a label or a line."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2 or not lines[0].startswith(CARD_HEAD):
        return None
    out = []
    for line in lines[1:]:
        m = _LABELLED.match(line)
        if not m or not TAG.search(m.group(2)):
            return None
        out.append((m.group(1), m.group(2)))
    return out
