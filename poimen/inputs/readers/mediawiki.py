"""MediaWiki markup (a wiki page's source, saved from "Edit" or an XML dump's text): read as the Markdown reader
reads a page, each line at its file line.

"== Cause ==" is a heading of level 2 (the "="s on each side give the level), "{| class="wikitable"" opens a table
whose rows "|-" separates, "! a !! b" its header cells and "| a || b" (or one "| cell" a line) its cells, up to "|}";
``<pre>`` and ``<syntaxhighlight>`` fence a block; "*", "#" and ":" open list items. What only decorates or links
leaves its text, as a reader sees the page rendered: '''bold''', ''italic'', ``<code>x</code>``, "[[User:a|Name]]",
"[https://… label]", an inline template's last argument ("{{Jira|HOPS-3310}}"); a template over several lines (an
infobox), "__TOC__" and other tags leave nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers import markdown
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, whole_text

HEADING = re.compile(r"^(={1,6})\s*(\S.*?)\s*\1\s*$")
_PRE_OPEN = re.compile(r"^\s*<(pre|syntaxhighlight|source)\b[^>]*>(.*)$", re.I)
_PRE_CLOSE = re.compile(r"</(?:pre|syntaxhighlight|source)>", re.I)
_TEMPLATE = re.compile(r"\{\{([^{}]*)\}\}")
_INTERNAL = re.compile(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]")
_EXTERNAL = re.compile(r"\[(https?://\S+)\s+([^\]]+)\]")
_EMPHASIS = re.compile(r"'{2,5}")
_TAG = re.compile(r"</?[a-z][a-z0-9]*\b[^>]*>", re.I)
_MAGIC = re.compile(r"__[A-Z]+__")
_LIST = re.compile(r"^([*#:;]+)\s*")
# A page's own markup, beyond "== … ==" headings a plain text may use too: a table, a link, bold, a fenced block
_MARKUP = re.compile(r"^\{\||\[\[[^\]]+\]\]|'''\S|<pre>|\{\{[A-Za-z]", re.M)
MARKS = 2  # "== … ==" headings a text needs, with the page's own markup, to be read as MediaWiki (``detect``)


def is_mediawiki(lines: list[str]) -> bool:
    """Whether a text's lines are MediaWiki markup: two "== … ==" headings or more, and a table, a link, bold, a
    ``<pre>`` block or a template."""
    return sum(bool(HEADING.match(x)) for x in lines) >= MARKS and bool(_MARKUP.search("\n".join(lines)))


def _template(m: re.Match) -> str:
    parts = m.group(1).split("|")
    return parts[-1].strip() if len(parts) > 1 else ""  # "{{Jira|HOPS-3310}}": its argument; "{{Blameless}}": none


def inline(text: str) -> str:
    """A line's text as the page shows it."""
    text = re.sub(r"<code>(.*?)</code>", r"`\1`", text, flags=re.I)
    text = _TEMPLATE.sub(_template, text)
    text = _INTERNAL.sub(r"\1", text)
    text = _EXTERNAL.sub(r"\2 (\1)", text)
    text = _EMPHASIS.sub("", text)
    return _MAGIC.sub("", _TAG.sub("", text)).strip()


def _cells(line: str, bar: str) -> list[str]:
    """The cells of a table line after its first mark ("! a !! b", "| a || b"), each without its attributes."""
    cells = []
    for cell in line[1:].split(bar * 2 if bar == "|" else "!!"):
        attrs, sep, said = cell.partition("|")  # '| style="color:red" | text'
        cells.append(inline(said if sep and "=" in attrs and "[[" not in attrs else cell).replace("|", "\\|"))
    return cells


def page_pieces(text: str) -> Iterator[Piece]:
    """The page as the blocks of a Markdown page, each line at the file line it came from."""
    block: list[tuple[str, int]] = []
    fenced = False
    table = False
    header: list[str] = []
    row: list[str] = []
    row_at = 0
    depth = 0  # an open template's braces: a template over several lines (an infobox) is furniture

    def flush() -> Iterator[Piece]:
        if block:
            yield Piece("\n".join(x for x, _ in block), block[0][1], block[-1][1], origin=tuple(n for _, n in block))
        block.clear()

    def end_row() -> None:
        nonlocal row
        if row and header:
            block.append((f"| {' | '.join(row)} |", row_at))
        elif row:  # a table with no header row: a box of rows
            header.extend([""] * len(row))
            block.extend([(f"| {' | '.join(header)} |", row_at), ("|" + "---|" * len(header), row_at),
                          (f"| {' | '.join(row)} |", row_at)])
        row = []

    for n, line in enumerate(text.split("\n"), 1):
        if fenced:
            close = _PRE_CLOSE.search(line)
            if close:
                if line[:close.start()].strip():
                    block.append((line[:close.start()], n))
                block.append(("```", n))
                fenced = False
                yield from flush()
            else:
                block.append((line, n))
            continue
        stripped = line.strip()
        if depth or (stripped.startswith("{{") and stripped.count("{{") > stripped.count("}}")):
            depth += stripped.count("{{") - stripped.count("}}")
            continue
        if (pre := _PRE_OPEN.match(line)) is not None:
            yield from flush()
            block.append(("```", n))
            rest = pre.group(2)
            if _PRE_CLOSE.search(rest):  # "<pre>one line</pre>"
                block += [(_PRE_CLOSE.split(rest)[0], n), ("```", n)]
                yield from flush()
            else:
                fenced = True
                if rest.strip():
                    block.append((rest, n))
            continue
        if table:
            if stripped.startswith("|}"):
                end_row()
                table = False
                yield from flush()
            elif stripped.startswith("|-") or stripped.startswith("|+"):
                end_row()
            elif stripped.startswith("!"):
                header.extend(_cells(stripped, "!"))
                block.extend([(f"| {' | '.join(header)} |", n), ("|" + "---|" * len(header), n)])
            elif stripped.startswith("|"):
                row_at = row_at if row else n
                row.extend(_cells(stripped, "|"))
            elif stripped and row:  # a cell's text going on
                row[-1] = f"{row[-1]} {inline(stripped)}".strip()
            continue
        if stripped.startswith("{|"):
            yield from flush()
            table, header, row = True, [], []
            continue
        if not stripped or _MAGIC.fullmatch(stripped) or re.fullmatch(r"-{4,}", stripped):
            yield from flush()
            continue
        if (head := HEADING.match(stripped)) is not None:
            yield from flush()
            block.append(("#" * len(head.group(1)) + " " + inline(head.group(2)), n))
            yield from flush()
            continue
        item = _LIST.match(stripped)
        said = inline(stripped[item.end():] if item else stripped)
        if said:
            block.append((f"- {said}" if item else said, n))
    yield from flush()


def read(path: Path, options) -> Iterator[Record]:
    return markdown.read_pieces(page_pieces(whole_text(path)))
