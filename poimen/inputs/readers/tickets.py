"""CSV exports of tickets (Jira, GitHub, most trackers): one ``ticket`` record per row (key, summary, description)
and one ``comment`` record per comment, threaded to the ticket's key.

Jira repeats a "Comment" column once per comment, each cell "date;author;body"; GitHub-style exports have a
"comments" column. Columns are matched by name, case-insensitively. A CSV with none of a ticket's columns is a
table: each row a ``record`` "header: value; …". Every record keeps the file lines its row spans (a quoted
description may span many).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.readers.fields import rendered
from poimen.inputs.readers.markdown import render_row
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

KEY = ("issue key", "key", "number", "issue", "id", "#", "ticket")
SUMMARY = ("summary", "title", "subject")
DESCRIPTION = ("description", "body", "details")
COMMENT = ("comment", "comments", "comment body")
AUTHOR = ("reporter", "author", "creator", "user", "opened by", "created by")
TIME = ("created", "created_at", "date", "opened")
ATTRS = ("status", "priority", "resolution", "labels", "component/s", "components", "assignee", "state", "type", "issue type")
_JIRA_COMMENT = re.compile(r"^(?P<when>\d{1,2}/\w{3}/\d{2,4} [\d:]+(?: [AP]M)?|\d{4}-\d{2}-\d{2}[ T][\d:]+);(?P<who>[^;\n]*);(?P<body>.*)$", re.S)

csv.field_size_limit(1 << 26)


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    low = [h.strip().lower() for h in header]
    return next((low.index(n) for n in names if n in low), None)


def is_ticket_header(header: list[str]) -> bool:
    return _column(header, SUMMARY) is not None and (_column(header, DESCRIPTION) is not None or _column(header, COMMENT) is not None)


def _rows(path: Path) -> Iterator[tuple[list[str], int, int]]:
    reader = csv.reader(io.StringIO(whole_text(path), newline=""))
    last = 0
    try:
        for row in reader:
            yield row, last + 1, max(last + 1, reader.line_num)
            last = reader.line_num
    except csv.Error as exc:
        raise SourceError(f"{path}:{reader.line_num}: invalid CSV ({exc})") from exc


def read(path: Path, options) -> Iterator[Record]:
    rows = _rows(path)
    header, _, _ = next(rows, ([], 0, 0))
    if not is_ticket_header(header):
        for row, start, end in rows:
            text = render_row(header, row)
            if text:
                yield Record(text, start, end, kind="record")
        return
    col = {name: _column(header, names) for name, names in
           (("key", KEY), ("summary", SUMMARY), ("description", DESCRIPTION), ("author", AUTHOR), ("time", TIME))}
    comments = [i for i, h in enumerate(header) if h.strip().lower() in COMMENT]
    attrs = [i for i, h in enumerate(header) if h.strip().lower() in ATTRS]

    def cell(row: list[str], i: int | None) -> str:
        return row[i].strip() if i is not None and i < len(row) else ""

    for row, start, end in rows:
        if not any(c.strip() for c in row):
            continue
        key = cell(row, col["key"]) or f"row {start}"
        title = f"{key}: {cell(row, col['summary'])}" if col["key"] is not None else cell(row, col["summary"])
        text = "\n".join(x for x in (title, cell(row, col["description"])) if x)
        yield Record(rendered(cell(row, col["time"]), cell(row, col["author"]), text), start, end, kind="ticket",
                     time=cell(row, col["time"]), author=cell(row, col["author"]), thread=key,
                     attrs=tuple(sorted((header[i].strip().lower(), cell(row, i)) for i in attrs if cell(row, i))))
        for i in comments:
            body = cell(row, i)
            if not body:
                continue
            m = _JIRA_COMMENT.match(body)
            when, who, body = (m.group("when"), m.group("who").strip(), m.group("body").strip()) if m else ("", "", body)
            yield Record(rendered(when, who, body), start, end, kind="comment", time=when, author=who, thread=key)
