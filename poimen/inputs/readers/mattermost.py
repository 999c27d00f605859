"""Mattermost's exports: a channel's posts as JSON, and the bulk export (``mmctl export``), JSON Lines.

Posts (the API's list, or {"order": …, "posts": {id: post}}): ``message``, ``create_at`` (milliseconds),
``root_id`` for replies, ``username`` or ``user_id``; ``system_*`` posts are skipped.

The bulk export is one object a line, {"type": T, T: {…}}: a "version" line, then "team", "channel", "user"
(and "scheme", "emoji", "direct_channel") lines, which say nothing about what happened and are skipped, then
"post" and "direct_post" lines. A post is a ``message`` (``user``, ``message``, ``create_at``), and each of its
``replies`` a ``reply`` threaded to it; a webhook's post (an alert) says what it says in ``props.attachments``
and is signed with ``props.override_username``. The export's Go-style escapes (``\\u0026``, ``\\u003e``) are
JSON's own. Every record keeps its post's line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers import jsonpos
from poimen.inputs.readers.attachments import extra_lines
from poimen.inputs.readers.fields import as_text, get, readable_time, rendered
from poimen.inputs.records import Record

BULK_TYPES = frozenset({"version", "scheme", "team", "channel", "user", "bot", "emoji", "post", "direct_channel",
                        "direct_post", "role"})
_POSTS = ("post", "direct_post")
_HEAD_LINES = 5


def is_post(value: object) -> bool:
    return isinstance(value, dict) and "message" in value and ("create_at" in value or "user_id" in value)


def is_bulk_line(value: object) -> bool:
    """A line of the bulk export: {"type": "post", "post": {…}} (or "version": 1 for the version line)."""
    if not isinstance(value, dict) or value.get("type") not in BULK_TYPES:
        return False
    kind = value["type"]
    return isinstance(value.get(kind), dict) or (kind == "version" and isinstance(value.get("version"), int))


def is_bulk_head(lines: list[str]) -> bool:
    """The first lines of a file are bulk-export lines."""
    seen = 0
    for line in lines[:_HEAD_LINES]:
        try:
            value = json.loads(line)
        except ValueError:
            return False
        if not is_bulk_line(value):
            return False
        seen += 1
    return seen > 0


def is_bulk_export(path: Path) -> bool:
    lines = []
    with path.open("rb") as fh:
        for raw in fh:
            if raw.strip():
                lines.append(raw.decode("utf-8", errors="ignore"))
            if len(lines) >= _HEAD_LINES:
                break
    return is_bulk_head(lines)


def _post_text(post: dict) -> str:
    own = as_text(post.get("message")).strip()
    props = post.get("props") if isinstance(post.get("props"), dict) else {}
    return "\n".join(x for x in (own, *extra_lines(own, props)) if x)


def _author(post: dict) -> str:
    props = post.get("props") if isinstance(post.get("props"), dict) else {}
    return as_text(props.get("override_username") or post.get("user") or post.get("username")).strip()


def _bulk_post(post: dict, line: int) -> Iterator[Record]:
    channel = as_text(post.get("channel")) or ",".join(sorted(as_text(m) for m in post.get("channel_members") or []))
    replies = [r for r in post.get("replies") or [] if isinstance(r, dict)]
    thread = f"{channel}:{as_text(post.get('create_at'))}" if replies else ""
    attrs = tuple(sorted((k, v) for k, v in (("team", as_text(post.get("team"))), ("channel", channel)) if v))
    text, who = _post_text(post), _author(post)
    if text:
        yield Record(rendered(readable_time(post.get("create_at")), who, text), line, line, kind="message",
                     time=as_text(post.get("create_at")), author=who, thread=thread, attrs=attrs)
    for reply in sorted(replies, key=lambda r: r.get("create_at") if isinstance(r.get("create_at"), (int, float)) else 0):
        text, who = _post_text(reply), _author(reply)
        if text:
            yield Record(rendered(readable_time(reply.get("create_at")), who, text), line, line, kind="reply",
                         time=as_text(reply.get("create_at")), author=who, thread=thread, attrs=attrs)


def read_bulk(path: Path, options) -> Iterator[Record]:
    for value, p in jsonpos.json_lines(path, options.max_chars):
        if value is None:
            yield Record(p.text, p.line_start, p.line_end, kind="record")  # a line of no JSON is kept as written
            continue
        kind = value.get("type") if isinstance(value, dict) else None
        if kind in _POSTS and isinstance(value.get(kind), dict):
            yield from _bulk_post(value[kind], p.line_start)


def read_posts(items: list[jsonpos.Located]) -> Iterator[Record]:
    for item in sorted(items, key=lambda i: (i.value.get("create_at") or 0) if isinstance(i.value.get("create_at"), (int, float)) else 0):
        m = item.value
        if as_text(m.get("type")).startswith("system_"):
            continue
        text = _post_text(m)
        if not text:
            continue
        who = next((as_text(m[k]) for k in ("username", "user_name", "user", "user_id") if m.get(k)), "")
        who = as_text(get(m, "props.override_username")) or who
        root = as_text(m.get("root_id"))
        yield Record(rendered(readable_time(m.get("create_at")), who, text), item.line_start, item.line_end,
                     kind="reply" if root else "message", time=as_text(m.get("create_at")), author=who,
                     thread=root or as_text(m.get("id")))
