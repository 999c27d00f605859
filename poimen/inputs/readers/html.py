"""HTML pages: a wiki's export (Confluence's "Export to HTML", a page saved from a browser) read as the Markdown
reader reads a page.

The page becomes the blocks a Markdown page would have, each a piece with the file line of each of its lines:
``<h1>``…``<h6>`` a "#" heading, a paragraph (``<p>``, ``<div>``, ``<blockquote>`` …) a piece of its own, a
list's items "- …" lines of one piece, ``<pre>`` (and a CDATA section: a code macro's body) a fenced block that
keeps its lines, a table a Markdown table (its header row when the first row is all ``<th>``, else none, so a
page's box of "Status | RESOLVED" rows reads "Status: RESOLVED"), ``<strong>`` alone in a paragraph a bold label
("**Root cause**"). What is no text of the page is skipped: ``<head>``, scripts and styles, navigation, footers, a
breadcrumb trail and a table of contents (an element whose id or class names it), which only repeat the headings.
Entities are decoded; white space runs are one space outside ``<pre>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from poimen.inputs.readers import markdown
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, whole_text

SKIPPED = {"head", "script", "style", "noscript", "template", "svg", "nav", "footer", "button", "select"}
BLOCKS = {"p", "div", "section", "article", "main", "aside", "header", "blockquote", "dl", "dt", "dd", "figure",
          "figcaption", "details", "summary", "address", "form", "fieldset", "center", "hr", "body", "html"}
LISTS = {"ul", "ol"}
_CHROME = re.compile(r"(?:^|[\s_-])(?:breadcrumbs?|toc|toctree|footer)(?:$|[\s_-])", re.I)  # by id or class
_VOID = {"br", "hr", "img", "input", "meta", "link", "col", "area", "base", "wbr", "source", "track", "embed"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[list[tuple[str, int, int]]] = []  # each block: its lines, with their first and last file line
        self._line: list[str] = []  # the text of the line being read
        self._span: list[int] = []  # its first and last file line
        self._list: list[tuple[str, int, int]] | None = None  # the list being read, its items' lines
        self._skip: tuple[str, int] | None = None  # the element being skipped and how deep in it we are
        self._pre = 0
        self._bold: tuple[int, int] | None = None  # where a <strong> began in the line, and the line's length then
        self._tables: list[dict] = []  # the tables being read, innermost last

    # --- where text goes ---
    def _text(self, data: str, line: int) -> None:
        if self._tables and self._tables[-1]["cell"] is not None:
            self._tables[-1]["cell"].append(data)
            self._tables[-1]["line"] = self._tables[-1]["line"] or line
            return
        self._line.append(data)
        if data.strip() or (self._pre and not self._span):  # (a pre's lines are counted from its first newline)
            self._span = [self._span[0] if self._span else line, line + data.count("\n")]

    def _flush(self) -> None:
        raw = "".join(self._line)
        text = raw.strip("\n").rstrip() if self._pre else " ".join(raw.split())
        if text and self._span:
            first, last = self._span
            if self._pre:
                first += raw[:len(raw) - len(raw.lstrip("\n"))].count("\n")
                lines = text.split("\n")
                self.blocks.append([("```", first, first)] + [(x, first + k, first + k) for k, x in enumerate(lines)]
                                   + [("```", first + len(lines) - 1, first + len(lines) - 1)])
            elif self._list is not None:
                self._list.append((f"- {text}", first, last))
            else:
                self.blocks.append([(text, first, last)])
        self._line, self._span = [], []

    def _end_list(self) -> None:
        self._flush()
        if self._list:
            self.blocks.append(self._list)
        self._list = None

    # --- the parser's callbacks ---
    def handle_starttag(self, tag: str, attrs) -> None:
        if self._skip is not None:
            if tag == self._skip[0] and tag not in _VOID:
                self._skip = (tag, self._skip[1] + 1)
            return
        named = " ".join(v or "" for k, v in attrs if k in ("id", "class"))
        if tag in SKIPPED or (named and _CHROME.search(named)):
            if tag not in _VOID:
                self._skip = (tag, 1)
            return
        line = self.getpos()[0]
        if tag == "table":
            self._flush()
            self._tables.append({"rows": [], "row": None, "cell": None, "line": 0, "heads": []})
        elif self._tables and tag == "tr":
            self._tables[-1]["row"] = []
            self._tables[-1]["heads"] = []
            self._tables[-1]["row_line"] = line
        elif self._tables and tag in ("td", "th"):
            t = self._tables[-1]
            t["cell"], t["line"] = [], 0
            t["heads"].append(tag == "th")
        elif self._tables and t_in_cell(self._tables) and tag in ("br", "p", "div", "li"):
            self._tables[-1]["cell"].append(" ")
        elif re.fullmatch(r"h[1-6]", tag) or tag in BLOCKS or tag == "li":
            self._flush()
            if tag in ("li",) and self._list is None:
                self._list = []
        elif tag in LISTS:
            self._flush()
            if self._list is None:
                self._list = []
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag == "br":
            if self._pre:
                self._text("\n", line)
            else:
                self._flush()
        elif tag in ("strong", "b"):
            self._bold = (len(self._line), len("".join(self._line).strip()))
        if re.fullmatch(r"h[1-6]", tag):
            self._line = ["#" * int(tag[1]) + " "]

    def handle_endtag(self, tag: str) -> None:
        if self._skip is not None:
            if tag == self._skip[0]:
                depth = self._skip[1] - 1
                self._skip = (tag, depth) if depth else None
            return
        if self._tables and tag in ("td", "th"):
            t = self._tables[-1]
            if t["cell"] is not None and t["row"] is not None:
                t["row"].append((" ".join("".join(t["cell"]).split()).replace("|", "\\|"), t["line"]))
            t["cell"] = None
        elif self._tables and tag == "tr":
            t = self._tables[-1]
            if t["row"]:
                t["rows"].append((t["row"], all(t["heads"]), t.get("row_line", 0)))
            t["row"] = None
        elif self._tables and tag == "table":
            self._end_table(self._tables.pop())
        elif self._tables and t_in_cell(self._tables):
            return
        elif tag in ("strong", "b") and self._bold is not None:
            at, before = self._bold
            inner = "".join(self._line[at:]).strip()
            if not before and inner:  # a bold run that opens its line: a label if nothing follows it
                self._line = self._line[:at] + [f"**{inner}**"]
            self._bold = None
        elif tag == "pre":
            self._flush()
            self._pre = max(0, self._pre - 1)
        elif tag in LISTS:
            self._end_list()
        elif re.fullmatch(r"h[1-6]", tag) or tag in BLOCKS or tag == "li":
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._skip is None:
            self._text(data, self.getpos()[0])

    def unknown_decl(self, data: str) -> None:  # <![CDATA[ … ]]>: a code macro's body, as written
        if self._skip is None and data.startswith("CDATA["):
            self._flush()
            self._pre += 1
            self._text(data[len("CDATA["):], self.getpos()[0])
            self._flush()
            self._pre -= 1

    def _end_table(self, t: dict) -> None:
        rows = [(cells, heads, line) for cells, heads, line in t["rows"] if any(c for c, _ in cells)]
        if not rows:
            return
        if self._tables:  # a table inside a cell: its rows are that cell's text
            outer = self._tables[-1]
            if outer["cell"] is not None:
                outer["cell"].append(" ".join("; ".join(c for c, _ in cells if c) for cells, _, _ in rows))
            return
        width = max(len(cells) for cells, _, _ in rows)
        first, heads, line0 = rows[0]
        header = [c for c, _ in first] if heads else [""] * width
        body = rows[1:] if heads else rows

        def line_of(cells, line):
            return next((n for c, n in cells if c and n), line)

        lines = [(f"| {' | '.join(header + [''] * (width - len(header)))} |", line_of(first, line0), 0),
                 ("|" + "---|" * width, line_of(first, line0), 0)]
        lines += [(f"| {' | '.join(c for c, _ in cells)} |", line_of(cells, line), 0) for cells, _, line in body]
        self.blocks.append([(text, n, n) for text, n, _ in lines])

    def close(self) -> None:
        super().close()
        self._end_list()


def t_in_cell(tables: list[dict]) -> bool:
    return tables[-1]["cell"] is not None


def page_pieces(text: str) -> Iterator[Piece]:
    """The page as the pieces a Markdown page of it would have, each line at the file line it came from."""
    page = _Page()
    page.feed(text)
    page.close()
    for block in page.blocks:
        yield Piece("\n".join(x for x, _, _ in block), min(a for _, a, _ in block), max(b for _, _, b in block),
                    origin=tuple(a for _, a, _ in block))


def read(path: Path, options) -> Iterator[Record]:
    return markdown.read_pieces(page_pieces(whole_text(path)))
