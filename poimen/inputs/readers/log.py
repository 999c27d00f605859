"""Application and system logs: one record per log line, a multi-line trace joined to the line that raised it.

A log line begins with a timestamp, a level or an id, whatever token comes first (loghub's HPC lines open with a
numeric id, Thunderbird's and BGL's with "-", OpenStack's with the file name). A continuation — an indented line,
"at …", "Caused by: …", "Traceback …", a Python frame, an exception class line, "... 12 more" — belongs to the
record above it, up to ``MAX_TRACE_LINES``, so a trace stays with its error. Every other line is a record, as
every line of a .log always was. A line that is someone speaking — "[14/May/24 10:40] priya.n: paged for …", the
shape a ticket's comments take when pasted under the log they are about — is a ``comment`` with its time and
author, so what people said about an error reads as their words, not as one more log line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces
from poimen.text.log_lines import LOG_START, level_of, time_of

MAX_TRACE_LINES = 64  # a runaway "trace" (an indented dump) is cut into records of this many lines

CONTINUATION = re.compile(
    r"^(?:at [\w$.<>]+[(.]|Caused by\b|Suppressed:|Traceback \(|During handling of|File \"|\.\.\. \d+ (?:more|common)"
    r"|[\w$]+(?:\.[\w$]+)*(?:Exception|Error|Throwable)\b)")


SAYS = re.compile(r"^\[(?P<time>[^\]]{4,40})\]\s+(?P<who>[A-Za-z][\w.@-]{0,40}):\s+\S")
_SPEAKER = re.compile(r"^\]?\s*(?P<who>[A-Za-z][\w.@-]{0,40}):\s+\S")


def said(line: str) -> tuple[str, str] | None:
    """(time, author) of a line that is someone speaking: "[14/May/24 10:40] priya.n: …" or "2024-06-03 08:31
    rafael.m: …" (a stamp, then a name and a colon, no level between); None for a log line."""
    m = SAYS.match(line)
    if m:
        time, rest_at = m.group("time"), m.start("who")
    else:
        time = time_of(line)
        if not time:
            return None
        rest_at = line.index(time) + len(time)
        m = _SPEAKER.match(line[rest_at:])
        if not m:
            return None
        rest_at += m.start("who")
    if level_of(line[:rest_at + 1]):
        return None
    who = _SPEAKER.match(line[rest_at:]) or SAYS.match(line)
    return time, who.group("who")


def _record(lines: list[str], start: int) -> Record:
    head = lines[0]
    speaker = said(head)
    if speaker:
        return Record("\n".join(lines), start, start + len(lines) - 1, kind="comment", time=speaker[0],
                      author=speaker[1])
    return Record("\n".join(lines), start, start + len(lines) - 1, kind="log", time=time_of(head), level=level_of(head))


def read(path: Path, options) -> Iterator[Record]:
    current: list[str] = []
    start = 0
    for p in pieces(path, "\n", options.max_chars):
        raw_line = p.text
        joins = (current and len(current) < MAX_TRACE_LINES and not LOG_START.match(raw_line)
                 and (p.indent > 0 or CONTINUATION.match(raw_line)))
        if joins:
            current.append(raw_line)
            continue
        if current:
            yield _record(current, start)
        current, start = [raw_line], p.line_start
    if current:
        yield _record(current, start)
