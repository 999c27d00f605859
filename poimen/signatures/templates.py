"""Error-level log lines reduced to drain3 templates.

A line qualifies when it states an error level or worse in any shape
``poimen.text.line_levels`` reads (ERROR, FATAL, nginx's ``[error]``, logcat's
``E/Tag:``, ``level=error``, klog's ``E0312``, git's ``fatal:``) or, when it
looks like a log line at all, says ``failed`` / ``Exception``. A line that
states a quiet level (INFO, DEBUG, logcat's ``I/``, ``level=info``) never
qualifies that way, and prose ("the deploy failed because…") is not a log
line. The template starts at the level's markup, so the timestamp and host in
front of it never reach the key.
"""

from __future__ import annotations

import re

from poimen.text.line_levels import ERROR_SEVERITY, line_levels
from poimen.signatures.masking import span, template

_FAILURE_WORD = re.compile(r"\b(?:[Ff]ailed|FAILED|[Ff]ailure)\b|Exception\b")
# What makes a line a log line rather than prose: a timestamp in front, a
# bracketed prefix, a "program[pid]:" prefix, or key=value fields.
_LOGLIKE = re.compile(
    r"^\s*(?:\d{4}[-/]\d{2}[-/]\d{2}|\d{2}:\d{2}:\d{2}|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}|\[|[\w.\-/]+(?:\[\d+\])?: )"
    r"|\b\w+=\S"
)
_FRAME_LINE = re.compile(r"^\s+(?:at |File \"|\.\.\. \d+ more)|^\t")
# A trace's own lines behind a log prefix (sbt's "[error]   at a.B.c(B.scala:1)", "Error:  Caused by:"): a frame, a
# frame count or a bare cause header says nothing of its own, and as a template ("log:Error: at <*>") it would be a
# key every wrapped trace shares.
_TRACE_AFTER_LEVEL = re.compile(r"^[\]:!>)\s]*(?:at [\w$.<>/@-]+\(|\.\.\. \d+ (?:more|common)|File \"|Caused by:\s*$)")


def _template_start(line: str) -> int | None:
    """Where the template begins in ``line``, or None if the line is not an error line."""
    if _FRAME_LINE.match(line):
        return None
    levels = list(line_levels(line))
    error = next((level for level in levels if level.grade >= ERROR_SEVERITY), None)
    if error:
        return None if _TRACE_AFTER_LEVEL.match(line[error.end:]) else error.start
    quiet = any(not level.grade for level in levels)
    if quiet or not _FAILURE_WORD.search(line) or not _LOGLIKE.search(line):
        return None
    return 0


def log_templates(text: str, consumed: list[tuple[int, int]]):
    """(offset, template, raw line) for each error line not already read as part of a trace."""
    offset = 0
    for line in text.split("\n"):
        start = offset + len(line) - len(line.lstrip())
        offset += len(line) + 1
        if any(lo <= start < hi for lo, hi in consumed):
            continue
        begin = _template_start(line)
        if begin is None:
            continue
        shaped = template(line[begin:])
        if shaped:
            yield start, shaped, span(line)
