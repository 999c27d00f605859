"""Application and system logs: one record per log line, a multi-line trace joined to the line that raised it.

A log line begins with a timestamp, a level or an id, whatever token comes first (loghub's HPC lines open with a
numeric id, Thunderbird's and BGL's with "-", OpenStack's with the file name). A continuation — an indented line,
"at …", "Caused by: …", "Traceback …", a Python frame, an exception class line, "... 12 more" — belongs to the
record above it, up to ``MAX_TRACE_LINES``, so a trace stays with its error. Every other line is a record, as
every line of a .log always was.
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


def _record(lines: list[str], start: int) -> Record:
    head = lines[0]
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
