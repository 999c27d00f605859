"""Chat exports: Slack's channel export (a JSON list of messages per day) and Mattermost's (``mattermost``).

Slack: ``ts`` is the time, ``thread_ts`` (when it differs from ``ts``) makes a message a ``reply`` in the thread of
its parent's ts, and a thread's parent is threaded to its own ts. The author is the profile's real name, else the
user name, the bot's name or the user id. A bot's message whose ``text`` is empty says what it says in its
attachments or blocks (``attachments``). Slack's markup is read as text: "<@U123>" mentions with the names the
file gives those ids, "<url|label>" links as "label (url)", "<#C1|name>" as "#name", "<!here>" as "@here", and
the HTML entities Slack escapes (``&lt;`` ``&gt;`` ``&amp;``). Join, leave and other channel-membership subtypes
say nothing and are skipped. Each message keeps the lines its JSON object occupies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers import jsonpos, mattermost
from poimen.inputs.readers.attachments import extra_lines
from poimen.inputs.readers.fields import as_text, get, readable_time, rendered
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

SKIPPED_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave", "bot_add", "bot_remove",
                    "channel_archive", "channel_unarchive"}
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]+))?>")
_MARKUP = re.compile(r"<(?P<sigil>[#!])(?P<id>[^|>]*)(?:\|(?P<label>[^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto|ftp):[^|>\s]+)(?:\|([^>]+))?>")
_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))

is_mattermost = mattermost.is_post


def is_slack(value: object) -> bool:
    return isinstance(value, dict) and "ts" in value and ("type" in value or "user" in value) and (
        "text" in value or "attachments" in value or "files" in value or "blocks" in value)


def _slack_author(m: dict) -> str:
    for key in ("user_profile.real_name", "user_profile.display_name", "user_name", "username", "bot_profile.name", "user", "bot_id"):
        v = get(m, key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


def _markup(match: re.Match) -> str:
    sigil, ident, label = match.group("sigil"), match.group("id"), match.group("label")
    if sigil == "#":
        return "#" + (label or ident)
    if label:  # <!subteam^S1|@oncall>, <!date^1714556040^{date}|May 1st>
        return label
    return "@" + ident.split("^")[0]  # <!here>, <!channel>, <!everyone>


def slack_text(text: str, names: dict[str, str]) -> str:
    """Slack's markup and entities as plain text."""
    text = _MENTION.sub(lambda g: "@" + (g.group(2) or names.get(g.group(1), g.group(1))), text)
    text = _LINK.sub(lambda g: f"{g.group(2)} ({g.group(1)})" if g.group(2) and g.group(2) != g.group(1) else g.group(1), text)
    text = _MARKUP.sub(_markup, text)
    for entity, char in _ENTITIES:
        text = text.replace(entity, char)
    return text


def _slack_text(m: dict, names: dict[str, str]) -> str:
    own = as_text(m.get("text")).strip()
    parts = [own, *extra_lines(own, m)]
    for f in m.get("files") or []:
        if isinstance(f, dict) and f.get("title"):
            parts.append(f"[file: {as_text(f['title'])}]")
    return slack_text("\n".join(p.strip() for p in parts if p and p.strip()), names)


def _slack(items: list[jsonpos.Located]) -> Iterator[Record]:
    names = {as_text(m.value.get("user")): _slack_author(m.value) for m in items if m.value.get("user")}
    for item in items:
        m = item.value
        if m.get("subtype") in SKIPPED_SUBTYPES:
            continue
        text = _slack_text(m, names)
        if not text:
            continue
        ts, parent = as_text(m.get("ts")), as_text(m.get("thread_ts"))
        reply = bool(parent) and parent != ts
        who = _slack_author(m)
        attrs = tuple(sorted((k, as_text(m[k])) for k in ("subtype", "bot_id") if m.get(k)))
        yield Record(rendered(readable_time(ts), who, text), item.line_start, item.line_end, kind="reply" if reply else "message",
                     time=ts, author=who, thread=parent if parent else (ts if m.get("reply_count") else ""), attrs=attrs)


def read(path: Path, options) -> Iterator[Record]:
    if mattermost.is_bulk_export(path):
        yield from mattermost.read_bulk(path, options)
        return
    items = jsonpos.records(jsonpos.load(path, whole_text(path)))
    if sum(is_mattermost(i.value) for i in items) > sum(is_slack(i.value) for i in items):
        yield from mattermost.read_posts(items)
    else:
        yield from _slack(items)
