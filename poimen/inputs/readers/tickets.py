"""CSV exports of tickets (Jira, GitHub, most trackers): one ``ticket`` record per ticket (key, summary,
description) and one ``comment`` record per comment, threaded to the ticket's key.

Columns are found by their header names (``columns.Columns``), not by a fixed layout: Jira repeats a "Comment"
column once per comment, each cell "date;author;body"; github-csv-tools writes one row per comment with dotted
headers (``issue.number`` … ``comment.body``) and the issue's columns repeated on every row, so a key seen before
adds its row's comment to the ticket it already read. A CSV with no ticket columns is a table: each row a
``record`` "header: value; …". A comment cell that holds several comments, a rule line ("---") between each, is
read as that many comments. Every record keeps the file lines of the cells it was read from (a quoted
description may span many lines; a comment row's repeated issue body is not the comment's).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.readers.columns import Columns, is_ticket_header
from poimen.inputs.readers.fields import rendered
from poimen.inputs.readers.markdown import render_row
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

__all__ = ["is_ticket_header", "read"]

_JIRA_COMMENT = re.compile(r"^(?P<when>\d{1,2}/\w{3}/\d{2,4} [\d:]+(?: [AP]M)?|\d{4}-\d{2}-\d{2}[ T][\d:]+);(?P<who>[^;\n]*);(?P<body>.*)$", re.S)

csv.field_size_limit(1 << 26)


_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$", re.M)


def _comments(raw: str) -> list[tuple[int, str]]:
    """The comments of one cell, as (lines after the cell's first line, text): several comments pasted into one cell
    are told apart by a rule line ("---") between them, as an export that joins them writes it."""
    out, at = [], 0
    for piece in _RULE.split(raw):
        text = piece.strip()
        if text:
            out.append((at + piece[:len(piece) - len(piece.lstrip())].count("\n"), text))
        at += piece.count("\n")  # the rule sits on the line the piece ends on
    return out


def _cell_lines(raw: str, first: int) -> list[tuple[int, int]]:
    """The (first, last) file line of each cell of one CSV row whose text is ``raw`` and starts on line ``first``
    (RFC 4180: a quoted cell may hold commas, doubled quotes and newlines)."""
    spans: list[tuple[int, int]] = []
    line, start, quoted, i = first, first, False, 0
    while i < len(raw):
        ch = raw[i]
        if quoted:
            if ch == '"' and raw[i + 1:i + 2] == '"':
                i += 1
            elif ch == '"':
                quoted = False
            elif ch == "\n":
                line += 1
        elif ch == '"':
            quoted = True
        elif ch == ",":
            spans.append((start, line))
            start = line
        elif ch == "\n":
            break
        i += 1
    spans.append((start, line))
    return spans


def _rows(path: Path, text: str) -> Iterator[tuple[list[str], int, int, list[tuple[int, int]]]]:
    """Each row with its first and last file line and the lines of each of its cells."""
    reader = csv.reader(io.StringIO(text, newline=""))
    newlines = [m.start() for m in re.finditer("\n", text)]
    last = 0
    try:
        for row in reader:
            start, end = last + 1, max(last + 1, reader.line_num)
            lo = newlines[start - 2] + 1 if start >= 2 else 0
            hi = newlines[end - 1] if end - 1 < len(newlines) else len(text)
            cells = _cell_lines(text[lo:hi].replace("\r\n", "\n"), start)
            yield row, start, end, cells if len(cells) == len(row) else [(start, end)] * len(row)
            last = reader.line_num
    except csv.Error as exc:
        raise SourceError(f"{path}:{reader.line_num}: invalid CSV ({exc})") from exc


def read(path: Path, options) -> Iterator[Record]:
    rows = _rows(path, whole_text(path))
    header, _, _, _ = next(rows, ([], 0, 0, []))
    if not is_ticket_header(header):
        for row, start, end, _ in rows:
            text = render_row(header, row)
            if text:
                yield Record(text, start, end, kind="record")
        return
    cols = Columns.of(header)
    seen: set[str] = set()
    for row, start, end, lines in rows:
        if not any(c.strip() for c in row):
            continue

        def cell(i: int | None) -> str:
            return row[i].strip() if i is not None and i < len(row) else ""

        def span(*idx: int | None) -> tuple[int, int]:
            at = [lines[i] for i in idx if i is not None and i < len(lines) and row[i].strip()]
            return (min(a for a, _ in at), max(b for _, b in at)) if at else (start, end)

        key = cell(cols.key) or f"row {start}"
        if key not in seen:
            seen.add(key)
            title = f"{key}: {cell(cols.summary)}" if cols.key is not None else cell(cols.summary)
            text = "\n".join(x for x in (title, cell(cols.description)) if x)
            when, who = cell(cols.time), cell(cols.author)
            first, last = span(cols.key, cols.summary, cols.description, cols.author, cols.time)
            yield Record(rendered(when, who, text), first, last, kind="ticket", time=when, author=who, thread=key,
                         attrs=tuple(sorted((name, cell(i)) for name, i in cols.attrs if cell(i))))
        for i in cols.comments:
            whole = cell(i)
            if not whole or whole.isdigit():  # a count of comments (a REST export's "comments": 3) is no comment
                continue
            first, last = span(i)
            for skip, body in _comments(row[i]):
                m = _JIRA_COMMENT.match(body)
                if m:
                    when, who, body = m.group("when"), m.group("who").strip(), m.group("body").strip()
                else:
                    when, who = cell(cols.comment_time), cell(cols.comment_author)
                at = first + skip
                yield Record(rendered(when, who, body), at, min(last, at + body.count("\n")), kind="comment",
                             time=when, author=who, thread=key)
