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

MAX_TRACE_LINES = 64  # a runaway "trace" (an indented dump) is cut into records of this many lines

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
TIMESTAMP = (rf"(?:\[?\d{{8}}[-T_ ]?\d{{2}}:?\d{{2}}:?\d{{2}}|\[?\d{{2,4}}[-/.]\d{{1,2}}[-/.]\d{{1,4}}(?:[T _-]+\d{{1,2}}[:.]\d{{2}}(?:[:.]\d{{2}})?(?:[.,]\d+)?)?"
             rf"|\[?(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? )?{_MONTH} +\d{{1,2}},? (?:\d{{4}} )?\d{{1,2}}:\d{{2}}(?::\d{{2}})?|\[?\d{{1,2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?)")
LEVELS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|FATAL|CRITICAL|CRIT|ALERT|EMERG|PANIC)"
# Timestamp, level or a numeric id (5+ digits: an epoch, a sequence number), after at most one leading token.
LOG_START = re.compile(rf"^(?:\S+\s+)??(?:{TIMESTAMP}|\[?{LEVELS}\b|\d{{5,}}\s)")
_LEVEL = re.compile(rf"(?<![\w.-]){LEVELS}(?![\w-])")
CONTINUATION = re.compile(
    r"^(?:at [\w$.<>]+[(.]|Caused by\b|Suppressed:|Traceback \(|During handling of|File \"|\.\.\. \d+ (?:more|common)"
    r"|[\w$]+(?:\.[\w$]+)*(?:Exception|Error|Throwable)\b)")


def is_log_line(line: str) -> bool:
    return bool(LOG_START.match(line))


def level_of(line: str) -> str:
    """The first level word among a log line's first tokens (its level field), '' when none."""
    m = _LEVEL.search(line[:200])
    return ("WARN" if m.group(0) == "WARNING" else m.group(0)) if m else ""


def time_of(line: str) -> str:
    m = re.match(rf"^(?:\S+\s+)??({TIMESTAMP})", line)
    return m.group(1).lstrip("[") if m else ""


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
