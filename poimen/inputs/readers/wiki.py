"""Jira and Confluence wiki markup (a page or an issue's description saved as text): read as the Markdown reader
reads a page, each line at its file line.

"h2. Root cause" is a heading of level 2, "||Time||What happened||" a table's header row and "|08:10|No difference.|"
a row under it (a table with no header row is a box of "key: value" rows), ``{code}`` / ``{noformat}`` (and their
"{code:java}" forms) fence a block, "----" is a rule, and "* item" / "# item" list items; the macros that only frame
or decorate (``{panel}``, ``{info}``, ``{toc}``, ``{status:title=Resolved}``, "{{monospace}}", "[~user]") leave their
text, as a reader sees the page rendered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers import markdown
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, whole_text

HEADING = re.compile(r"^\s*h([1-6])\.\s+(\S.*)$")
_FENCE = re.compile(r"^\s*\{(?:code|noformat)(?::[^}]*)?\}")
_FRAME_ONLY = re.compile(r"^\s*\{(?:panel|info|note|tip|warning|expand|quote|section|column|toc)(?::[^}]*)?\}\s*$", re.I)
_FRAME = re.compile(r"\{(?:panel|info|note|tip|warning|expand|quote|section|column|color|anchor)(?::[^}]*)?\}", re.I)
_STATUS = re.compile(r"\{status:[^}]*?title=([^|}]*)[^}]*\}", re.I)
_JIRA = re.compile(r"\{jira:([^|}]+)[^}]*\}", re.I)
_MONO = re.compile(r"\{\{(.+?)\}\}")
_MENTION = re.compile(r"\[~([^\]]+)\]")
_LINK = re.compile(r"\[([^|\]]+)\|([^\]]+)\]")
_LIST = re.compile(r"^\s*([*#-]+)\s+")
_STRONG = re.compile(r"(?<![\w*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])")  # "*not*": bold
MARKS = 2  # "h1." lines a text needs to be read as wiki markup (``detect``)


def is_wiki(lines: list[str]) -> bool:
    """Whether a text's lines are wiki markup: two "h1." … "h6." headings or more."""
    return sum(bool(HEADING.match(x)) for x in lines) >= MARKS


def _inline(text: str) -> str:
    text = _STATUS.sub(r"\1", text)
    text = _JIRA.sub(r"\1", text)
    text = _FRAME.sub("", text)
    text = _MONO.sub(r"\1", text)
    text = _MENTION.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    return _LINK.sub(r"\1 (\2)", text)


def _cells(line: str, bar: str) -> list[str]:
    body = line.strip()
    body = body[len(bar):] if body.startswith(bar) else body
    body = body[:-len(bar)] if body.endswith(bar) else body
    return [c.strip().replace("|", "\\|") for c in body.split(bar)]


def _row(line: str) -> list[str]:
    """A table row's cells ("|a|b|"), a link's or a status's "|" inside them kept."""
    body, cells, depth, cell = line.strip().strip("|"), [], 0, ""
    for ch in body:
        depth += ch in "[{" and 1 or 0
        depth -= ch in "]}" and 1 or 0
        if ch == "|" and depth <= 0:
            cells.append(cell)
            cell = ""
            continue
        cell += ch
    return [_inline(c).strip().replace("|", "\\|") for c in cells + [cell]]


def page_pieces(text: str) -> Iterator[Piece]:
    """The page as the blocks of a Markdown page, each line at the file line it came from."""
    block: list[tuple[str, int]] = []
    fenced = False
    width = 0  # the current table's columns: a header row, or a row that opened a table with none

    def flush() -> Iterator[Piece]:
        if block:
            yield Piece("\n".join(x for x, _ in block), block[0][1], block[-1][1], origin=tuple(n for _, n in block))
        block.clear()

    for n, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            if not fenced:
                yield from flush()
            block.append(("```", n))
            fenced = not fenced
            rest = _FENCE.sub("", line, count=1).strip()
            if rest and rest[:1] != "{":  # "{noformat}text on the same line"
                block.append((rest, n))
            if not fenced:
                yield from flush()
            continue
        if fenced:
            block.append((line, n))
            continue
        stripped = line.strip()
        if not stripped or _FRAME_ONLY.match(line) or stripped.startswith("{toc"):
            if not stripped:
                yield from flush()
                width = 0
            continue
        if (head := HEADING.match(line)) is not None:
            yield from flush()
            block.append(("#" * int(head.group(1)) + " " + _inline(head.group(2)).strip(), n))
            yield from flush()
            continue
        if re.fullmatch(r"-{4,}", stripped):
            yield from flush()
            continue
        line = _FRAME.sub("", line)  # "{panel:title=…}||Field||Value||"
        stripped = line.strip()
        if stripped.startswith("||"):
            cells = [_inline(c) for c in _cells(stripped, "||")]
            width = len(cells)
            block += [(f"| {' | '.join(cells)} |", n), ("|" + "---|" * width, n)]
        elif stripped.startswith("|") and stripped.endswith("|"):
            cells = _row(stripped)
            if not width:  # a box of rows with no header
                width = len(cells)
                block += [(f"| {' | '.join([''] * width)} |", n), ("|" + "---|" * width, n)]
            block.append((f"| {' | '.join(cells)} |", n))
        else:
            if width:
                yield from flush()
                width = 0
            item = _LIST.match(line)
            said = _inline(line[item.end():] if item else line).rstrip()
            block.append((f"- {said.strip()}" if item else said, n))
    yield from flush()


def read(path: Path, options) -> Iterator[Record]:
    return markdown.read_pieces(page_pieces(whole_text(path)))
