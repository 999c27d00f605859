"""Plain text: paragraphs, a blank line apart (the chunker's reading of .txt since the first release).

A plain-text document has headings too, written the ways people write them without Markdown: a title on the first
lines of the file, a line underlined with ``===`` or ``---``, a short line in capitals ("ROOT CAUSE"), a short
title-case line heading the paragraph under it ("Detection" over "The promo started at 18:00 …"), a numbered
one ("2. Timeline"), or a label ending in a colon ("Resolution:"). A record keeps its text as written and carries
the headings it stands under (the title, then its section, then the part of the section a weaker heading opens:
"REMEDIATION" / "For the crash:"), as a Markdown paragraph does, so a postmortem's "Root cause" and "Remediation"
sections read as parts of one document.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces

_UNDERLINE = re.compile(r"^\s*([=\-~*#_])\1{2,}\s*$")
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.)]|[IVX]{1,4}\.)\s+(?P<name>\S.*)$")
_LIST_OR_TIME = re.compile(r"^\s*(?:[-*•>|]|\d{1,2}:\d{2}\b|\d{4}-\d{2}-\d{2}|\[)")
TITLE_WORDS = 16  # a document's title line
HEADING_WORDS = 6  # a section heading line


def _heading(line: str, words: int) -> str | None:
    """The heading a line states, or None: short, no sentence end, no list item, time stamp or "key: value"."""
    text = line.strip()
    numbered = _NUMBERED.match(text)
    if numbered:
        text = numbered.group("name").strip()
    label = text.rstrip(":").strip()
    if not label or len(label.split()) > words or _LIST_OR_TIME.match(text) or label[-1] in ".,;!?":
        return None
    if ": " in label and words == HEADING_WORDS and not label.isupper():  # "SECOND PROBLEM: STAMPEDE" is a heading
        return None
    if not (label[0].isupper() or label[0].isdigit()):
        return None
    return label


def _head(lines: list[str], first: bool, block_follows: bool) -> tuple[str | None, bool]:
    """(the heading a paragraph opens with, whether it opens a section rather than a part of one).

    An underlined line, a line in capitals, a numbered one and the document's first line open sections; a short
    title-case line over its paragraph, or a label ending in a colon, opens a part of the section it stands in.
    A lone line ending in a colon over an indented block introduces that block ("The log line was:"), and heads
    nothing."""
    if len(lines) >= 2 and _UNDERLINE.match(lines[1]):
        return _heading(lines[0], TITLE_WORDS), True
    if first and len(lines) <= 2:
        return _heading(lines[0], TITLE_WORDS), True
    name = _heading(lines[0], HEADING_WORDS)
    if name is None:
        return None, False
    line = lines[0].strip()
    if line.isupper() or _NUMBERED.match(line):
        return name, True
    if len(lines) == 1:
        return (None, False) if line.endswith(":") and block_follows else (name, False)
    if line.endswith(":"):
        return name, False
    body = lines[1].strip()
    heads_body = _LIST_OR_TIME.match(body) or (len(body) > len(line) and (body[:1].isupper() or body[:1].isdigit()))
    return (name, False) if heads_body else (None, False)


def read(path: Path, options) -> Iterator[Record]:
    title: str | None = None
    section: str | None = None  # the section a paragraph stands in, and a part of it (a weak heading under it)
    part: str | None = None
    strong = False  # whether ``section`` was opened by a section heading, so a weak one is a part of it
    first = True
    stream = pieces(path, "\n\n", options.max_chars)
    p = next(stream, None)
    while p is not None:
        nxt = next(stream, None)
        name, opens = _head(p.text.split("\n"), first, nxt is not None and nxt.indent > 0)
        if name and first:
            title = name
        elif name and (opens or not strong):
            section, part, strong = name, None, opens
        elif name:
            part = name
        first = False
        heads = tuple(h for h in (title, section, part) if h)
        yield Record(p.text, p.line_start, p.line_end, kind="paragraph", headings=heads)
        p = nxt
