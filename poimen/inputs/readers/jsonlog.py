"""Structured log lines: one JSON object a line, as pino, bunyan, winston, zap, logstash-logback, python-json-logger,
GCP's and Docker's json-file logs write them, read as a ``log`` record a person can read.

An object is a log event when it has a level (``level``, ``severity``, ``levelname`` …; pino's and bunyan's
numbers 10–60 are named TRACE … FATAL) and a message or an error, or is Docker's {"log", "stream", "time"}. Its
text is "time LEVEL message key=value …" (epoch times written as UTC ISO 8601; the other scalar fields, one level
of nesting spelled "outer.inner", as context), then the error: its type and message, and its stack's lines as the
runtime printed them, so a trace reads as one. ``time`` keeps the time as the line wrote it.
"""

from __future__ import annotations

from poimen.inputs.readers.fields import as_text, readable_time
from poimen.inputs.records import Record
from poimen.text.log_lines import level_of

LEVEL_KEYS = ("level", "severity", "levelname", "level_name", "lvl", "loglevel", "log.level", "@l")
MESSAGE_KEYS = ("msg", "message", "@m", "@mt", "event", "log", "text")
TIME_KEYS = ("time", "timestamp", "@timestamp", "ts", "@t", "t", "asctime", "date", "datetime")
ERROR_KEYS = ("err", "error", "exception", "exc_info", "exc_text", "stack", "stack_trace", "stacktrace", "@x")
QUIET_KEYS = frozenset({"v", "pid", "@version", "level_value", "levelno"})  # say nothing a reader needs
NUMERIC_LEVELS = ((60, "FATAL"), (50, "ERROR"), (40, "WARN"), (30, "INFO"), (20, "DEBUG"), (10, "TRACE"))
MAX_VALUE = 200  # a context value longer than this (a request body) is cut


def _first(value: dict, keys: tuple[str, ...]) -> str:
    return next((k for k in keys if value.get(k) not in (None, "", [], {})), "")


def is_log_event(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("log"), str) and "stream" in value and "time" in value:  # Docker's json-file
        return True
    level = value.get(_first(value, LEVEL_KEYS))
    has_level = isinstance(level, str) or (isinstance(level, int) and not isinstance(level, bool))
    return has_level and bool(_first(value, MESSAGE_KEYS) or _first(value, ERROR_KEYS))


def level_name(level: object) -> str:
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        return next((name for floor, name in NUMERIC_LEVELS if level >= floor), "TRACE")
    name = as_text(level).strip().upper()
    return {"WARNING": "WARN", "INFORMATION": "INFO", "ERR": "ERROR", "CRIT": "CRITICAL"}.get(name, name)


def _error_lines(err: object) -> list[str]:
    """An error field as lines: a stack as printed (it opens with "Type: message"), else "type: message"."""
    if isinstance(err, str):
        return [x.rstrip() for x in err.strip("\n").split("\n") if x.strip()]
    if not isinstance(err, dict):
        return [as_text(err)] if err not in (None, False) else []
    kind = as_text(err.get("type") or err.get("name") or err.get("class") or err.get("kind"))
    message = as_text(err.get("message") or err.get("msg"))
    stack = err.get("stack") or err.get("stack_trace") or err.get("stacktrace") or err.get("trace")
    lines = _error_lines(stack) if isinstance(stack, str) else []
    head = ": ".join(x for x in (kind, message) if x)
    if head and not (lines and head in lines[0]):
        lines.insert(0, head)
    return lines


_CONSUMED = frozenset({"type", "name", "class", "kind", "message", "msg", "stack", "stack_trace", "stacktrace", "trace"})


def _context(value: dict, used: set[str], error_key: str) -> list[str]:
    """The other scalar fields as "key=value" (an error's own code and status too, its stack and message aside)."""
    out = []
    for k, v in value.items():
        if k in used or k in QUIET_KEYS or (k == error_key and not isinstance(v, dict)):
            continue
        for ik, iv in v.items() if isinstance(v, dict) else [("", v)]:
            if k == error_key and ik in _CONSUMED:
                continue
            if isinstance(iv, (str, int, float)) and not isinstance(iv, bool) and as_text(iv).strip():
                text = " ".join(as_text(iv).split())[:MAX_VALUE]
                out.append(f"{k}.{ik}={text}" if ik else f"{k}={text}")
    return out


def log_record(value: dict, line_start: int, line_end: int) -> Record:
    """A log event as a ``log`` record spanning its file lines."""
    lk, mk, tk, ek = (_first(value, keys) for keys in (LEVEL_KEYS, MESSAGE_KEYS, TIME_KEYS, ERROR_KEYS))
    raw_time = value.get(tk) if tk else None
    when = readable_time(raw_time) if raw_time is not None else ""
    message = " ".join(as_text(value.get(mk)).split()) if mk else ""
    level = level_name(value.get(lk)) if lk else level_of(message)
    errors = _error_lines(value.get(ek)) if ek else []
    head = " ".join(x for x in (when, level, message, *_context(value, {lk, mk, tk}, ek)) if x)
    return Record("\n".join([head, *errors]), line_start, line_end, kind="log", time=as_text(raw_time) if raw_time is not None else "",
                  level=level)
