"""Chat exports: Slack's channel export (a JSON list of messages per day) and Mattermost's posts.

Slack: ``ts`` is the time, ``thread_ts`` (when it differs from ``ts``) makes a message a ``reply`` in the thread of
its parent's ts, and a thread's parent is threaded to its own ts. The author is the profile's real name, else the
user name, the bot's name or the user id; "<@U123>" mentions are written with the names the file gives those
ids. Join, leave and other channel-membership subtypes say nothing and are skipped. Mattermost: ``message``,
``create_at`` (milliseconds), ``root_id`` for replies, ``username`` or ``user_id``; ``system_*`` posts skipped.
Each message keeps the lines its JSON object occupies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers import jsonpos
from poimen.inputs.readers.fields import as_text, get, readable_time, rendered
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

SKIPPED_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave", "bot_add", "bot_remove",
                    "channel_archive", "channel_unarchive"}
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]+))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)\|([^>]+)>")


def is_slack(value: object) -> bool:
    return isinstance(value, dict) and "ts" in value and ("type" in value or "user" in value) and (
        "text" in value or "attachments" in value or "files" in value)


def is_mattermost(value: object) -> bool:
    return isinstance(value, dict) and "message" in value and ("create_at" in value or "user_id" in value)


def _slack_author(m: dict) -> str:
    for key in ("user_profile.real_name", "user_profile.display_name", "user_name", "username", "bot_profile.name", "user", "bot_id"):
        v = get(m, key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


def _slack_text(m: dict, names: dict[str, str]) -> str:
    parts = [as_text(m.get("text"))]
    for a in m.get("attachments") or []:
        if isinstance(a, dict):
            parts += [as_text(a.get(k)) for k in ("pretext", "title", "text") if a.get(k)] or [as_text(a.get("fallback"))]
    for f in m.get("files") or []:
        if isinstance(f, dict) and f.get("title"):
            parts.append(f"[file: {as_text(f['title'])}]")
    text = "\n".join(p.strip() for p in parts if p and p.strip())
    text = _MENTION.sub(lambda g: "@" + (g.group(2) or names.get(g.group(1), g.group(1))), text)
    return _LINK.sub(lambda g: f"{g.group(2)} ({g.group(1)})", text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


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


def _mattermost(items: list[jsonpos.Located]) -> Iterator[Record]:
    for item in sorted(items, key=lambda i: (i.value.get("create_at") or 0) if isinstance(i.value.get("create_at"), (int, float)) else 0):
        m = item.value
        if as_text(m.get("type")).startswith("system_"):
            continue
        text = as_text(m.get("message")).strip()
        if not text:
            continue
        who = next((as_text(m[k]) for k in ("username", "user_name", "user", "user_id") if m.get(k)), "")
        root = as_text(m.get("root_id"))
        yield Record(rendered(readable_time(m.get("create_at")), who, text), item.line_start, item.line_end,
                     kind="reply" if root else "message", time=as_text(m.get("create_at")), author=who,
                     thread=root or as_text(m.get("id")))


def read(path: Path, options) -> Iterator[Record]:
    items = jsonpos.records(jsonpos.load(path, whole_text(path)))
    if sum(is_mattermost(i.value) for i in items) > sum(is_slack(i.value) for i in items):
        yield from _mattermost(items)
    else:
        yield from _slack(items)
