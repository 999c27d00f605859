"""Which fields of arbitrary JSON records hold the text, time, author, thread and title: found from the
records' shape, or named by the user (``--fields text=body,time=created_at``).

A known name wins (message, msg, text, body, content …); else the text is the string field that varies most and
runs longest, as a message does and an id, a level or a host does not. Nested objects are read one level down
("user.login", "user_profile.real_name").
"""

from __future__ import annotations

from dataclasses import dataclass, fields as dc_fields, replace
from datetime import datetime, timezone

from poimen.errors import ConfigError

TEXT_KEYS = ("text", "message", "msg", "body", "content", "description", "log", "line", "comment", "value")
TITLE_KEYS = ("title", "summary", "subject")
TIME_KEYS = ("ts", "time", "timestamp", "@timestamp", "date", "datetime", "created_at", "created", "create_at",
             "createdAt", "time_iso8601", "when", "updated_at")
AUTHOR_KEYS = ("speaker", "user_name", "username", "author.login", "user.login", "author.name", "user.name",
               "author", "user", "sender", "from", "login", "name", "user_id")
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


def get(record: dict, dotted: str):
    if not dotted:
        return None
    value: object = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def flat(record: dict) -> dict[str, object]:
    """Scalar fields, one level of nesting spelled "outer.inner"."""
    out: dict[str, object] = {}
    for k, v in record.items():
        if isinstance(v, dict):
            out.update({f"{k}.{ik}": iv for ik, iv in v.items() if isinstance(iv, (str, int, float)) and not isinstance(iv, bool)})
        elif isinstance(v, (str, int, float)) and not isinstance(v, bool):
            out[k] = v
    return out


def _present(sample: list[dict[str, object]], key: str, kinds=(str,)) -> bool:
    return sum(isinstance(r.get(key), kinds) for r in sample) * 2 >= len(sample)


def infer(records: list[dict]) -> Fields:
    sample = [flat(r) for r in records[:200]]
    if not sample:
        return Fields()

    def first(keys, kinds=(str,)) -> str:
        return next((k for k in keys if _present(sample, k, kinds)), "")

    text = first(TEXT_KEYS)
    if not text:
        strings = {k for r in sample for k, v in r.items() if isinstance(v, str)}

        def weight(k: str) -> tuple[int, float]:
            values = [r[k] for r in sample if isinstance(r.get(k), str)]
            return (len(set(values)) > 1 or len(sample) == 1, sum(map(len, values)) / len(sample))

        text = max(sorted(strings), key=weight, default="")
    title = first(TITLE_KEYS) if text not in TITLE_KEYS else ""
    return Fields(text=text, time=first(TIME_KEYS, (str, int, float)), author=first(AUTHOR_KEYS),
                  thread=first(THREAD_KEYS, (str, int)), title=title)


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
