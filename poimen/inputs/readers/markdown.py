"""Markdown: paragraphs a blank line apart, each under the headings above it; tables as rows; fenced blocks as code.

A paragraph's text is as written (so a page reads as it did before there were readers). A table row is rendered
"header: value; …": a row cut from its header says nothing ("| 09:31 | ingress log shows … |"), and the rows of
one table are records of their own, each on its own file line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces

HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)[\s#]*$")
FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def table_at(lines: list[str], i: int) -> bool:
    """A table starts at line ``i``: a row of cells over a rule of dashes."""
    return i + 1 < len(lines) and "|" in lines[i] and bool(_TABLE_RULE.match(lines[i + 1]))


def render_row(header: list[str], row: list[str]) -> str:
    pairs = [f"{h}: {v}" if h else v for h, v in zip(header, row) if v]
    return "; ".join(pairs + [v for v in row[len(header):] if v])


def read(path: Path, options) -> Iterator[Record]:
    path_of: dict[int, str] = {}  # heading level -> its text
    fenced = False
    for p in pieces(path, "\n\n", options.max_chars):
        lines = p.text.split("\n")
        code = fenced or bool(FENCE.match(lines[0]))
        fenced ^= sum(bool(FENCE.match(x)) for x in lines) % 2 == 1
        if code:
            yield Record(p.text, p.line_start, p.line_end, kind="code", headings=tuple(path_of.values()))
            continue
        for line in lines:
            md = HEADING.match(line)
            if md:
                level = len(md.group(1))
                for deeper in [k for k in path_of if k >= level]:
                    del path_of[deeper]
                path_of[level] = md.group(2).strip()
        heads = tuple(path_of.values())
        start = next((i for i in range(len(lines)) if table_at(lines, i)), None)
        if start is None:
            yield Record(p.text, p.line_start, p.line_end, kind="paragraph", headings=heads)
            continue
        yield from _table(p, lines, start, heads)


def _table(p, lines: list[str], start: int, heads: tuple[str, ...]) -> Iterator[Record]:
    """The text before a table, its rows, and what follows the table in the same paragraph."""
    if start:
        yield Record("\n".join(lines[:start]).strip(), p.line_start, p.line_start + start - 1, kind="paragraph", headings=heads)
    header = cells(lines[start])
    i = start + 2
    while i < len(lines) and "|" in lines[i]:
        text = render_row(header, cells(lines[i]))
        if text:
            yield Record(text, p.line_start + i, p.line_start + i, kind="table_row", headings=heads)
        i += 1
    rest = "\n".join(lines[i:]).strip()
    if rest:
        first = i + next(k for k, x in enumerate(lines[i:]) if x.strip())
        yield Record(rest, p.line_start + first, p.line_end, kind="paragraph", headings=heads)
