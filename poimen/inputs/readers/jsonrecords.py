"""JSON arrays and JSON Lines of arbitrary records: each record's text, time, author and thread found from the
records' shape (``fields.infer``) or named by ``--fields``.

JSON Lines most of whose records are log events (pino, bunyan, zap …) read as logs (``jsonlog``). JSON Lines
whose records carry a string ``text`` read as they always have ("[ts] speaker: text", the first of
speaker/user/author and ts/time/timestamp/date present). A record with a title (an issue, a ticket) is a
``ticket`` "title\\nbody"; a list of objects under "comments" or "replies" (else any list of objects that say
something in a text field: ``child_keys``) gives one ``comment`` record each,
threaded to it, and so does a list beside it whose records name it ({"issues": […], "comments": […]} joined by
``issue_url``: ``jsonlinks``; a Trello board's actions by "data.card.id"), in time order. A GraphQL connection's
"nodes" are a list, an issue's "timelineItems" say what their pull request or commit says (``said``), records that
answer one another gather into threads (``replies``), a text kept as HTML reads as its page (Microsoft Graph), and a
record with nothing said where the others speak (a reaction, a card moved) is no record. A line that is no JSON
object is kept as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from poimen.inputs.readers import jsonlinks, jsonpos, replies
from poimen.inputs.readers.attachments import attachment_lines, embed_lines
from poimen.inputs.readers.jsonlog import is_log_event, log_record
from poimen.inputs.readers.fields import Fields, as_text, flat, get, infer, readable_time, rendered
from poimen.inputs.readers.html import page_pieces
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

CHILD_KEYS = ("comments", "replies", "comment")
# An issue's timeline (GitHub's GraphQL "timelineItems"): its events say what their pull request or commit says
# ("closer": {"title": …, "body": …}), and a label added says nothing
TIMELINE_KEYS = ("timelineItems", "timeline_items", "timeline")
_NESTED_SAID = ("title", "messageheadline", "body")
CHILD_TEXT = 20  # characters: a comment says something; a label's name or a login does not
_SAID = ("body", "text", "content", "message", "notes", "comment")  # not a label's or a milestone's "description"
_LEGACY_WHO = ("speaker", "user", "author")
_LEGACY_WHEN = ("ts", "time", "timestamp", "date")
_MARKUP = re.compile(r"<[a-z][\w:-]*(?:\s[^>]*)?/?>(?:.*>)?$", re.I | re.S)  # a text that opens with a tag and ends one


def legacy_text(record: dict) -> str | None:
    """The JSON-lines text poimen wrote before readers, for a record with a string ``text``; None otherwise."""
    if not isinstance(record.get("text"), str):
        return None
    who = next((record[k] for k in _LEGACY_WHO if isinstance(record.get(k), str)), None)
    when = next((record[k] for k in _LEGACY_WHEN if isinstance(record.get(k), str)), None)
    return rendered(when or "", who or "", record["text"])


def render(record: dict, f: Fields, raw: str, start: int, end: int, parent: str = "", thread: str = "") -> Record | None:
    value = get(record, f.text) if f.text else None
    text = as_text(value).strip() if isinstance(value, (str, int, float)) else ""
    if not text and parent and not f.text:  # a timeline's event: what its pull request or commit says
        text = said(record)
    if _MARKUP.match(text):  # a message kept as HTML (Microsoft Graph's body.content, a wiki's comment)
        text = "\n".join(p.text for p in page_pieces(text))
    if not text:  # a bot's post says it in its embeds or attachments (Discord's alert and deploy bots)
        text = "\n".join([x for e in _listed(record, "embeds") for x in embed_lines(e)]
                         + [x for a in _listed(record, "attachments") for x in attachment_lines(a)])
    title = as_text(get(record, f.title)).strip() if f.title else ""
    when_value = get(record, f.time) if f.time else None
    when = when_value if isinstance(when_value, str) else readable_time(when_value) if when_value is not None else ""
    who = get(record, f.author) if f.author else None
    who = as_text(who) if isinstance(who, (str, int)) else ""
    thread = parent or thread or as_text(get(record, f.thread) if f.thread else "")
    kind = "comment" if parent else "ticket" if title else "message" if who and when else "record"
    if (parent or f.text) and not (title or text):
        return None  # a record with nothing said where the others speak: a tracker's own event, a reaction
    body = "\n".join(x for x in (title, text) if x) or raw.strip()
    line = rendered(when, who, body).strip()
    if not line:
        return None
    return Record(line, start, end, kind=kind, time=as_text(when_value) if when_value is not None else "", author=who,
                  thread=thread)


def said(record: dict) -> str:
    """What an event says: its own text (a "commented" event of GitHub's REST timeline carries the comment's
    "body"; bench/incidents46), else what its nested object says: its titles, then its bodies ("closer.title",
    "closer.body", "commit.messageHeadline"), each once."""
    own = next((v.strip() for k in _SAID if isinstance(v := record.get(k), str) and v.strip()), "")
    if own:
        return own
    flat_record = flat(record)
    parts = [v.strip() for name in _NESTED_SAID for k, v in flat_record.items()
             if "." in k and k.rsplit(".", 1)[1].lower() == name and isinstance(v, str) and v.strip()]
    return "\n".join(dict.fromkeys(parts))


def _listed(record: dict, key: str) -> list:
    value = record.get(key)
    return value if isinstance(value, list) else []


def _is_log(value: dict) -> bool:
    """A structured log event, not a chat turn that happens to carry a level."""
    return is_log_event(value) and not any(isinstance(value.get(k), str) for k in _LEGACY_WHO)


def read_jsonl(path: Path, options) -> Iterator[Record]:
    rows = [(value, p.text, p.line_start) for value, p in jsonpos.json_lines(path, options.max_chars)]
    objects = [v for v, _, _ in rows if isinstance(v, dict)]
    logs = not options.fields.text and sum(map(_is_log, objects)) * 2 > len(objects)
    dicts = [v for v in objects if not (legacy_text(v) is not None and not options.fields.text)]
    f = options.fields.over(infer(dicts)) if dicts else options.fields
    for value, raw, n in rows:
        if not isinstance(value, dict):
            yield Record(raw, n, n, kind="record")
            continue
        if logs and _is_log(value):
            yield log_record(value, n, n)
            continue
        legacy = None if options.fields.text else legacy_text(value)
        if legacy is not None:
            if legacy.strip():
                yield Record(legacy.strip(), n, n, kind="message", time=as_text(next((value[k] for k in _LEGACY_WHEN if isinstance(value.get(k), str)), "")),
                             author=next((value[k] for k in _LEGACY_WHO if isinstance(value.get(k), str)), ""),
                             thread=as_text(value.get("thread_ts") or value.get("thread") or ""))
            continue
        rec = render(value, f, raw, n, n)
        if rec is not None:
            yield _heading_thread(rec, value)
            yield from _children(value, f, rec, lambda key: [(c, n, n) for c in listed(value, key) or [] if isinstance(c, dict)])


def _heading_thread(rec: Record, value: dict) -> Record:
    """A record with no thread of its own that heads a list of comments is in their thread ("line N", as they are
    threaded to it): a YouTrack issue with no id field the records' shape gives is one thread with its comments,
    not the flow every other such issue is in too (bench/incidents39)."""
    if rec.thread or not any(listed(value, k) for k in child_keys(value)):
        return rec
    return replace(rec, thread=f"line {rec.line_start}")


def child_keys(value: dict) -> list[str]:
    """The keys of ``value`` whose lists hold its thread: "comments", "replies", else any list of objects most of
    which say something in a text field ("comments_data" an export script added to a GitHub issue, Redmine's
    "journals" with their "notes"; bench/incidents21), not its labels or assignees."""
    def says(c) -> bool:
        return isinstance(c, dict) and any(isinstance(c.get(k), str) and len(c[k].strip()) >= CHILD_TEXT
                                           for k in _SAID)

    named = [k for k in CHILD_KEYS if listed(value, k) is not None]
    timeline = [k for k in TIMELINE_KEYS if isinstance(listed(value, k), list)]
    return (named or [k for k in value if (v := listed(value, k)) and sum(map(says, v)) * 2 > len(v)
                      and k not in timeline]) + timeline


def list_path(value: dict, key: str) -> tuple[str, ...] | None:
    """Where the list ``key`` names sits in ``value``: under ``key``, or under its "nodes" (a GraphQL connection:
    "comments": {"totalCount": 2, "nodes": […]}) or its "comments" (Jira's "comment": {"comments": […], "total": 3}),
    each also inside the record's "fields" (Jira's REST issue keeps its own there; bench/incidents39); None for none."""
    for holder, pre in ((value, ()), (value.get("fields"), ("fields",))):
        v = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(v, list):
            return (*pre, key)
        inner = next((k for k in _INNER if isinstance(v.get(k), list)), None) if isinstance(v, dict) else None
        if inner:
            return (*pre, key, inner)
    return None


_INNER = ("nodes", "comments")


def listed(value: dict, key: str) -> list | None:
    """The list under ``key`` (``list_path``), None for anything else."""
    path = list_path(value, key)
    for k in path or ():
        value = value[k]
    return value if path else None


def _children(value: dict, f: Fields, parent: Record, located) -> Iterator[Record]:
    for key in child_keys(value):
        if listed(value, key) is not None:
            items = located(key)
            cf = _child_fields(f, [c for c, _, _ in items])
            cf = replace(cf, text="") if key in TIMELINE_KEYS else cf  # (what each event's object says: ``said``)
            for child, start, end in items:
                rec = render(child, cf, json.dumps(child), start, end, parent=parent.thread or f"line {parent.line_start}")
                if rec is not None:
                    yield rec


def read_json(path: Path, options) -> Iterator[Record]:
    return read_json_text(path, whole_text(path), options)


def read_json_text(path: Path, text: str, options) -> Iterator[Record]:
    """The records of the JSON document ``text`` (the file at ``path``, or one part of it with the rest blanked)."""
    doc = jsonpos.load(path, text)
    links = jsonlinks.related(jsonpos.lists(doc))
    located = links[0].parents if links else jsonpos.records(doc)
    f = options.fields.over(infer([r.value for r in located]))
    threads = {} if f.thread else replies.threads([r.value for r in located])
    linked: dict[str | None, list[tuple[jsonpos.Located, Fields]]] = {}
    for link in links:
        cf = _child_fields(f, [c.value for c in link.children])
        for child in link.children:
            linked.setdefault(link.child_key(child), []).append((child, cf))
    for n, item in enumerate(located):
        value = item.value
        rec = render(value, f, doc.text[item.start:item.end], item.line_start, item.line_end, thread=threads.get(n, ""))
        mine = linked.get(links[0].parent_key(item)) if links else None
        if rec is None:  # (its replies still say something, under its line)
            rec = Record("", item.line_start, item.line_end, thread=threads.get(n, ""))
        else:  # (a record its linked comments name is in their thread: a Bugzilla bug, known by its "id" alone)
            yield replace(rec, thread=f"line {rec.line_start}") if mine and not rec.thread else _heading_thread(rec, value)

        def children(key: str, item=item) -> list[tuple[dict, int, int]]:
            at = item.start
            for step in list_path(item.value, key) or ():  # (down to the list: a connection's "nodes", Jira's …)
                at = next(v for k, v in doc.members(at) if k == step).start
            return [(c.value, c.line_start, c.line_end) for _, c in doc.members(at) if isinstance(c.value, dict)]

        yield from _children(value, f, rec, children)
        for child, cf in sorted(linked.pop(links[0].parent_key(item), []) if links else [], key=_when(f)):
            yield from _child(doc, child, cf, rec.thread or f"line {rec.line_start}")
    for parent, orphans in linked.items():  # comments whose issue is not in the file stay threaded to it
        for child, cf in orphans:
            yield from _child(doc, child, cf, parent or "")


def _when(f: Fields):
    """A linked child's place under its parent: by its time where the children have one (a board's actions are
    newest first), else where the file has it."""
    def key(pair: tuple[jsonpos.Located, Fields]):
        child, cf = pair
        when = get(child.value, cf.time) if cf.time else None
        return (as_text(when), child.start) if isinstance(when, str) else ("", child.start)
    return key


def _child_fields(f: Fields, children: list[dict]) -> Fields:
    """The children's own fields (a task's "notes" is no field of its comments), the parent's where they have none."""
    own = infer(children) if children else Fields()
    return Fields(text=own.text or f.text, time=own.time or f.time, author=own.author or f.author)


def _child(doc: jsonpos.JsonText, child: jsonpos.Located, f: Fields, parent: str) -> Iterator[Record]:
    rec = render(child.value, f, doc.text[child.start:child.end], child.line_start, child.line_end, parent=parent)
    if rec is not None:
        yield rec
