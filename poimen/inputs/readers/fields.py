"""Which fields of arbitrary JSON records hold the text, time, author, thread and title: found from the
records' shape, or named by the user (``--fields text=body,time=created_at``).

A known name wins (message, msg, text, body, content …); else the text is the string field that varies most and
runs longest, as a message does and an id, a level, a host or a link does not. Nested objects are read three
levels down ("user.login", "body.content", "from.user.displayName"): a text key nested under another is found by
its last part, an author's name under who posted it (``WHO``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields as dc_fields, replace
from datetime import datetime, timezone

from poimen.errors import ConfigError

TEXT_KEYS = ("text", "message", "msg", "body", "content", "description", "desc", "notes", "log", "line", "comment",
             "value")
TITLE_KEYS = ("title", "summary", "subject")
DESCRIBED = ("description", "desc", "notes")  # a record described so is an item, and its "name" its title (a card)
TIME_KEYS = ("ts", "time", "timestamp", "@timestamp", "date", "datetime", "created_at", "created", "create_at",
             "createdAt", "createdDateTime", "origin_server_ts", "time_iso8601", "when", "updated_at",
             "created_on", "creation_time", "createdDate", "created_date")  # (Redmine's, Bugzilla's, Azure DevOps')
AUTHOR_KEYS = ("speaker", "user_name", "username", "author.login", "user.login", "author.name", "user.name",
               "author", "user", "sender", "from", "owner")
# ... else a name under who posted it, however deep ("from.user.displayName" in Microsoft Graph, "memberCreator.
# fullName" in Trello, "created_by.name" in Asana), else a bare login or name
WHO = ("from", "user", "author", "sender", "creator", "created_by", "membercreator", "owner", "actor", "reporter",
       "commenter", "posted_by", "application", "bot")
NAMES = ("displayname", "display_name", "fullname", "full_name", "real_name", "name", "login", "username")
BARE_AUTHOR_KEYS = ("login", "name", "user_id")
THREAD_KEYS = ("thread_ts", "thread", "thread_id", "root_id", "parent_id", "conversation_id", "issue", "ticket", "key",
               "number")
ID_KEYS = ("key", "number", "id")


@dataclass(frozen=True)
class Fields:
    """Dotted field names; '' for none."""

    text: str = ""
    time: str = ""
    author: str = ""
    thread: str = ""
    title: str = ""

    @classmethod
    def parse(cls, spec: str | None) -> "Fields":
        """``text=body,time=created_at``; an unknown name or a malformed pair is one line naming it."""
        if not spec:
            return cls()
        names = {f.name for f in dc_fields(cls)}
        out = {}
        for pair in spec.split(","):
            role, sep, key = (s.strip() for s in pair.partition("="))
            if not sep or not key or role not in names:
                raise ConfigError(f"--fields {spec!r}: expected ROLE=FIELD pairs, ROLE one of {', '.join(sorted(names))}")
            out[role] = key
        return cls(**out)

    def over(self, inferred: "Fields") -> "Fields":
        """These fields where named, the inferred ones elsewhere."""
        return replace(inferred, **{f.name: getattr(self, f.name) for f in dc_fields(self) if getattr(self, f.name)})


NEST = 3  # levels of objects read: "from.user.displayName"


def get(record: dict, dotted: str):
    """The value at a dotted path; a key that holds a dot itself ("m.relates_to", Matrix's) is one part; of paths
    joined by "|", the first the record has."""
    if "|" in dotted:
        return next((v for v in (get(record, d) for d in dotted.split("|")) if v not in (None, "")), None)
    if not dotted:
        return None
    value: object = record
    rest = dotted
    while rest:
        if not isinstance(value, dict):
            return None
        if rest in value:
            return value[rest]
        head = rest.partition(".")[0]
        if head not in value:
            head = next((k for k in value if isinstance(k, str) and rest.startswith(k + ".")), None)
            if head is None:
                return None
        value, rest = value[head], rest[len(head) + 1:]
    return value


def flat(record: dict, prefix: str = "", depth: int = 1) -> dict[str, object]:
    """Scalar fields, nested objects down to ``NEST`` levels spelled "outer.inner"."""
    out: dict[str, object] = {}
    for k, v in record.items():
        if isinstance(v, dict):
            if depth < NEST:
                out.update(flat(v, f"{prefix}{k}.", depth + 1))
        elif isinstance(v, (str, int, float)) and not isinstance(v, bool):
            out[f"{prefix}{k}"] = v
    return out


def _present(sample: list[dict[str, object]], key: str, kinds=(str,)) -> bool:
    return sum(isinstance(r.get(key), kinds) for r in sample) * 2 >= len(sample)


def infer(records: list[dict]) -> Fields:
    sample = [flat(r) for r in records[:200]]
    if not sample:
        return Fields()

    def first(keys, kinds=(str,)) -> str:
        return next((k for k in keys if _present(sample, k, kinds)), "")

    keys = sorted({k for r in sample for k in r}, key=lambda k: (k.count("."), k))
    strings = [k for k in keys if _present(sample, k)]

    def nested(names) -> str:
        """A nested key whose last part is one of ``names`` (the earlier name, then the shallower key, first)."""
        found = [k for k in strings if "." in k and k.rsplit(".", 1)[1].lower() in names]
        return min(found, key=lambda k: (names.index(k.rsplit(".", 1)[1].lower()), k.count(".")), default="")

    text = first(TEXT_KEYS) or nested(TEXT_KEYS)
    if not text:
        def weight(k: str) -> tuple[int, float]:
            values = [r[k] for r in sample if isinstance(r.get(k), str)]
            return (len(set(values)) > 1 or len(sample) == 1, not all(_URL.match(v) for v in values),
                    any(" " in v.strip() for v in values), sum(map(len, values)) / len(sample))

        text = max(sorted(k for k in keys if any(isinstance(r.get(k), str) for r in sample)), key=weight, default="")
    title = first(TITLE_KEYS) if text not in TITLE_KEYS else ""
    parent = text.rpartition(".")[0]  # ... or beside a nested text: Jira's "fields.summary" over "fields.description"
    title = title or (first(tuple(f"{parent}.{k}" for k in TITLE_KEYS if f"{parent}.{k}" != text)) if parent else "")
    described = f"{text.rpartition('.')[0]}.description".lstrip(".")
    if not title and text.rsplit(".", 1)[-1] in ("message", "name") and _present(sample, described):
        title, text = text, described  # an alert's "message" over its "description" (Opsgenie; bench/incidents37)
    if not title and text.rsplit(".", 1)[-1] in DESCRIBED and _present(sample, "name"):
        title = "name"
    who = [k for k in keys if "." in k and k.rsplit(".", 1)[1].lower() in NAMES
           and any(p.lower() in WHO for p in k.split(".")[:-1])]
    who.sort(key=lambda k: (NAMES.index(k.rsplit(".", 1)[1].lower()), k.count(".")))
    # a person's name or a bot's, whichever the record has ("from.user.displayName|from.application.displayName")
    who = [k for k in who if k.rsplit(".", 1)[1].lower() == who[0].rsplit(".", 1)[1].lower()] if who else []
    told = sum(any(isinstance(r.get(k), str) for k in who) for r in sample) * 2 >= len(sample)
    author = first(AUTHOR_KEYS) or ("|".join(who) if who and told else "") or first(
        k for k in BARE_AUTHOR_KEYS if k not in (title, text))
    when = first(TIME_KEYS, (str, int, float)) or nested(tuple(k.lower() for k in TIME_KEYS))  # "data.createdAt"
    return Fields(text=text, time=when, author=author,
                  thread=first(THREAD_KEYS, (str, int)), title=title)


_URL = re.compile(r"https?://\S+$")


def as_text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def readable_time(value) -> str:
    """An epoch (seconds, or milliseconds as Mattermost writes) as UTC ISO 8601; any other time as written."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return as_text(value)
    if seconds > 1e11:
        seconds /= 1000
    if not 1e8 < seconds < 1e10:
        return as_text(value)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rendered(when: str, who: str, text: str) -> str:
    """A chat line as the JSON-lines reader has always written it: "[time] author: text"."""
    prefix = " ".join(p for p in (when and f"[{when}]", who and f"{who}:") if p)
    return f"{prefix} {text}".strip() if prefix else text
