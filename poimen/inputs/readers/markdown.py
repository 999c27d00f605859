"""Markdown: paragraphs a blank line apart, each under the headings above it; tables as rows; fenced blocks as code.

A paragraph's text is as written (so a page reads as it did before there were readers). Headings are "# …" lines,
setext titles ("Title" over "===="), and a short bold line that labels what follows it ("**Root cause**"), as
exports without heading markup write a section's name; a numbered bold line ("**2. Kafka lag on orders**") or
one that names a problem of its own ("**Incident 2: …**") heads an item, and the bold labels after it stand
under it. A table row is rendered "header: value; …": a row cut
from its header says nothing ("| 09:31 | ingress log shows … |"), and the rows of one table are records of their
own, each on its own file line; a table with an empty header row is a key-value box ("Severity: SEV2"), and a
timeline's time column ("Time (UTC)") is its rows' time. A thematic break ("---") is no record, nor is an HTML
comment ("<!-- exported by og2md … -->"): the page shows neither. A page that opens
with YAML front matter (``---`` / ``title: "…"`` / ``---``, as Jekyll, Hugo and blog engines write it) is titled by
its ``title:``, over every heading of the page; its fields are a record of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, pieces
from poimen.text.headings import names_problem

HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)[\s#]*$")
FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")  # "Title" over "=====" (level 1) or "-----" (level 2)
_BREAK = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")  # a thematic break says nothing
_BOLD_LABEL = re.compile(r"^\s{0,3}(?:\*\*|__)(?P<label>[^*_\n]{1,80}?)(?:\*\*|__)\s*:?\s*$")
_EMPHASIS = re.compile(r"^(\*\*|__|\*|_)(?P<inner>\S(?:.*\S)?)\1$")
_NUMBERED = re.compile(r"^\s{0,3}\d{1,2}[.)]\s+\S")
_ITEM = re.compile(r"^\s*(?:[-*+>|]|\d+[.)])\s")
LABEL_WORDS = 8  # a bold line this short is a label heading what follows it ("**Root cause**")
LABEL_LEVEL = 8  # a bold label heads what follows it under the nearest real heading, until the next heading
# A numbered bold line, or one that opens a problem of its own ("**Incident 2: invoices**"), heads an item of a
# review: the labels after it ("**Root cause**") stand under it, until the next item or heading.
ITEM_LEVEL = 7
ITEM_WORDS = 16
TIME_COLUMNS = ("time", "timestamp", "date", "when", "at")  # a timeline table's time column, by its first word


def cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def table_at(lines: list[str], i: int) -> bool:
    """A table starts at line ``i``: a row of cells over a rule of dashes."""
    return i + 1 < len(lines) and "|" in lines[i] and bool(_TABLE_RULE.match(lines[i + 1]))


def plain(cell: str) -> str:
    """A cell without the emphasis wrapped around all of it ("**Severity**" -> "Severity")."""
    m = _EMPHASIS.match(cell.strip())
    return m.group("inner") if m else cell.strip()


def render_row(header: list[str], row: list[str]) -> str:
    """A row as "header: value; …"; a row of a table with no header ("| | |" over "| **Severity** | SEV2 |", a
    page's key-value box) as "key: value"."""
    if row and not any(h.strip() for h in header) and len([v for v in row if v]) >= 2:
        return f"{plain(row[0])}: {'; '.join(v for v in row[1:] if v)}"
    pairs = [f"{plain(h)}: {v}" if h.strip() else v for h, v in zip(header, row) if v]
    return "; ".join(pairs + [v for v in row[len(header):] if v])


def _time_column(header: list[str]) -> int | None:
    words = [re.findall(r"[a-z]+", plain(h).lower())[:1] for h in header]
    return next((i for i, w in enumerate(words) if w and w[0] in TIME_COLUMNS), None)


_FRONT_TITLE = re.compile(r"^(?:title|name)\s*:\s*(?P<q>[\"']?)(?P<title>.*?)(?P=q)\s*$", re.I)


def _front_matter(lines: list[str]) -> str | None:
    """The title of a page's YAML front matter, when the first paragraph is one ("" when it names none)."""
    if len(lines) < 3 or lines[0].strip() != "---" or lines[-1].strip() not in ("---", "..."):
        return None
    if not all(re.match(r"^\s*(?:[\w-]+\s*:|-\s|#)", x) or not x.strip() for x in lines[1:-1]):
        return None
    return next((m.group("title").strip() for m in map(_FRONT_TITLE.match, lines[1:-1]) if m), "")


def read(path: Path, options) -> Iterator[Record]:
    return read_pieces(pieces(path, "\n\n", options.max_chars))


def read_pieces(found: Iterable[Piece], under: tuple[str, ...] = ()) -> Iterator[Record]:
    """Records of a page's paragraphs (``pieces`` a blank line apart; the HTML reader's blocks), ``under`` the title
    of what holds the page (a feed's entry)."""
    path_of: dict[int, str] = dict(enumerate(under[:1]))  # heading level -> its text (0: the page's own title)
    fenced = False
    commented = False  # inside an HTML comment that spans paragraphs
    for p in found:
        lines = p.text.split("\n")
        if p.line_start == 1 and (title := _front_matter(lines)) is not None:
            if title:
                path_of[0] = title
            yield Record(p.text, p.line_start, p.line_end, kind="paragraph", headings=tuple(path_of.values()))
            continue
        code = fenced or bool(FENCE.match(lines[0]))
        fenced ^= sum(bool(FENCE.match(x)) for x in lines) % 2 == 1
        if code:
            yield Record(p.text, p.line_start, p.line_end, kind="code", headings=tuple(path_of.values()))
            continue
        if len(lines) == 1 and _BREAK.match(lines[0]):
            continue
        if commented or p.text.lstrip().startswith("<!--"):  # an HTML comment: the page shows none of it
            commented = not p.text.rstrip().endswith("-->")
            continue
        for level, name in _headings(lines):
            for deeper in [k for k in path_of if k >= level]:
                del path_of[deeper]
            path_of[level] = name
        heads = tuple(path_of.values())
        start = next((i for i in range(len(lines)) if table_at(lines, i)), None)
        if start is None:
            yield Record(p.text, p.line_start, p.line_end, kind="paragraph", headings=heads)
            continue
        yield from _table(p, lines, start, heads)


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    """The headings a paragraph states, with their levels: "# …" lines, a setext title over "===" or "---", or a
    short bold line opening it ("**Resolution:**"), a label under the headings above."""
    found = [(len(m.group(1)), m.group(2).strip()) for m in map(HEADING.match, lines) if m]
    if found:
        return found
    if len(lines) >= 2 and _SETEXT.match(lines[-1]) and "|" not in lines[0] and (not _ITEM.match(lines[0]) or (
            # "1. pg-orders-replica-1: "too many clients" …" over a rule as long as it: a digest's numbered title
            # (bench/incidents24), not a list item over a thematic break
            len(lines) == 2 and _NUMBERED.match(lines[0]) and len(lines[1].strip()) >= 0.8 * len(lines[0].strip()))):
        return [(1 if lines[-1].strip()[0] == "=" else 2, " ".join(x.strip() for x in lines[:-1]))]
    label = _BOLD_LABEL.match(lines[0])
    if not label or label.group("label").strip()[-1] in ".!?":
        return []
    name = label.group("label").strip().rstrip(":")
    if re.match(r"\d{1,2}[.)]\s", name) or names_problem(name):  # "**2. Kafka lag on orders (Jun 9)**": an item
        return [(ITEM_LEVEL, name)] if len(name.split()) <= ITEM_WORDS else []
    return [(LABEL_LEVEL, name)] if len(name.split()) <= LABEL_WORDS else []


def _table(p, lines: list[str], start: int, heads: tuple[str, ...]) -> Iterator[Record]:
    """The text before a table, its rows, and what follows the table in the same paragraph."""
    if start:
        yield Record("\n".join(lines[:start]).strip(), p.line_start, p.line_at(start - 1), kind="paragraph", headings=heads)
    header = cells(lines[start])
    when = _time_column(header)
    i = start + 2
    while i < len(lines) and "|" in lines[i]:
        row = cells(lines[i])
        text = render_row(header, row)
        time = plain(row[when]) if when is not None and when < len(row) else ""
        if text:
            yield Record(text, p.line_at(i), p.line_at(i), kind="table_row", headings=heads, time=time)
        i += 1
    rest = "\n".join(lines[i:]).strip()
    if rest:
        first = i + next(k for k, x in enumerate(lines[i:]) if x.strip())
        yield Record(rest, p.line_at(first), p.line_end, kind="paragraph", headings=heads)
