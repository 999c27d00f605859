"""Which columns of a ticket CSV hold a ticket's key, summary, description, author and time, and which hold its
comments: found from the header names, whatever tool wrote them.

A header is read as words ("Issue key" -> "issue key", ``issue.user.login`` -> "issue user login",
``created_at`` -> "created at"). A header whose first word is "comment" (Jira's repeated "Comment",
github-csv-tools' ``comment.body`` / ``comment.user`` / ``comment.created_at``) belongs to a comment; any other to
the ticket, with a leading "issue", "ticket" or "fields" dropped when the rest names a role (``issue.title``).
Each role takes the first of its names, in order, that some column has: "issue key" before "id" (Jira's numeric
"Issue id"), "number" before "id" (GitHub's internal id), "reporter" before "creator".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEY = ("issue key", "key", "number", "issue number", "#", "ticket", "ticket id", "ticket number", "id", "issue id")
SUMMARY = ("summary", "title", "subject")
DESCRIPTION = ("description", "body", "details", "text")
AUTHOR = ("reporter", "author login", "user login", "author", "user", "creator", "opened by", "created by",
          "submitter", "requester", "author name", "user name", "reporter name")
TIME = ("created", "created at", "createdat", "date created", "created date", "creation date", "opened",
        "opened at", "date", "submitted", "submitted at")
COMMENT_BODY = ("", "s", "body", "text", "content", "message")  # "comment", "comments", "comment body", …
ATTRS = ("status", "state", "priority", "resolution", "labels", "label", "component/s", "components", "assignee",
         "type", "issue type", "severity")
_SCOPES = ("issue", "ticket", "fields")


def words(header: str) -> str:
    """A header as lower-case words: separators ("." "_" "-" runs of space) as single spaces."""
    return " ".join(re.sub(r"[._]+", " ", header.strip().lower()).split())


def _comment_field(name: str) -> str | None:
    """What a comment column holds ("" for its body), or None for a ticket column."""
    head, _, rest = name.partition(" ")
    if head not in ("comment", "comments"):
        return None
    return ("s" if head == "comments" and not rest else rest)


def _ticket_names(name: str) -> tuple[str, ...]:
    head, _, rest = name.partition(" ")
    return (name, rest) if head in _SCOPES and rest else (name,)


def _first(names: list[tuple[str, ...]], wanted: tuple[str, ...]) -> int | None:
    for w in wanted:
        for i, options in enumerate(names):
            if w in options:
                return i
    return None


@dataclass(frozen=True)
class Columns:
    key: int | None = None
    summary: int | None = None
    description: int | None = None
    author: int | None = None
    time: int | None = None
    comments: tuple[int, ...] = ()  # every column holding a comment's body (Jira repeats "Comment")
    comment_author: int | None = None
    comment_time: int | None = None
    attrs: tuple[tuple[str, int], ...] = ()  # (attribute name, column) of status, priority, labels …

    @classmethod
    def of(cls, header: list[str]) -> "Columns":
        names = [words(h) for h in header]
        comment = [_comment_field(n) for n in names]
        ticket = [() if c is not None else _ticket_names(n) for n, c in zip(names, comment)]
        of_comment = [(c,) if c is not None else () for c in comment]
        attrs = []
        for i, options in enumerate(ticket):
            name = next((o for o in options if o in ATTRS), None)
            if name:
                attrs.append((name, i))  # a repeated column (Jira's "Labels", "Labels") keeps each value
        return cls(key=_first(ticket, KEY), summary=_first(ticket, SUMMARY), description=_first(ticket, DESCRIPTION),
                   author=_first(ticket, AUTHOR), time=_first(ticket, TIME),
                   comments=tuple(i for i, c in enumerate(comment) if c in COMMENT_BODY),
                   comment_author=_first(of_comment, AUTHOR), comment_time=_first(of_comment, TIME),
                   attrs=tuple(attrs))


def is_ticket_header(header: list[str]) -> bool:
    """A ticket export: a summary column, and a description or comment column."""
    cols = Columns.of(header)
    return cols.summary is not None and (cols.description is not None or bool(cols.comments))
