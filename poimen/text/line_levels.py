"""The log level a line states, in the shapes log formats write one: one recogniser for every reader of levels.

The scorer grades failure lines by it (``poimen.relevance.terms.severity``) and
signature extraction keys error lines by it (``poimen.signatures.templates``),
so a logcat ``E/`` line or a ``level=error`` line is an error line to both.

A level is a level word where a log format puts one, each shape capturing the word: upper case anywhere (WARN,
[ERROR], ERROR:); any case only in a level's own markup — bracketed as Apache and nginx write it ([error], [warn],
[crit]), a logfmt or JSON level field (level=error, "level": "warn"); pino's and bunyan's number as the value of a
JSON "level" member ("level":50; 40 warn, 50 error, 60 fatal), never a number in prose ("level 50"); a command's
"error: " opening a line or a journal message after "prog[pid]: " (git, cargo, npm; "Error: " and "Fatal: " too,
as cobra and Node CLIs print them, and the Go runtime's "fatal error: " and "panic: ", but not "Warning: ", which
opens a document's admonition as often); a single letter only in a level column: Android
logcat's (after date, time, pid and tid, or E/Tag(pid): opening a line) and glog/klog's (E0312 10:15:30 opening a
line), and WebSphere's and Open Liberty's event type ("[3/11/25, 9:14:02:113 UTC] 0000004a com.ibm.ejs.j2c.FreePool
E J2CA0046E: …"); a kernel or sd-daemon priority opening a line. Prose ("an error in judgement", "E. coli") has none of these
shapes.

The quiet levels (INFO, DEBUG, logcat's I/D/V, level=info, "level":30, I0312, <5> to <7>) are read in the same
shapes: they grade 0, and a line that states one says of itself that it reports no failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

ERROR_SEVERITY = 1.5
FATAL_SEVERITY = 2.0
_LEVEL_NAMES = r"WARN(?:ING)?|ERROR|ERR|FATAL|CRIT(?:ICAL)?|SEVERE|PANIC|EMERG|ALERT"
_QUIET_NAMES = r"INFO|DEBUG|TRACE|NOTICE|VERBOSE"
_LOGCAT_TIME = r"(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d\.\d+"


def _shapes(names: str, letters: str, openers: str, priorities: str, numbers: str) -> str:
    """The level shapes (see the module docstring) for one set of level words, letters, priorities and numbers."""
    return "|".join((
        rf"\b({names})\b",
        rf"\[(?i:({names}))\]",
        rf"\b(?:level|lvl|severity)=\"?(?i:({names}))\b",
        rf"\"(?:level|lvl|severity)\"\s*:\s*\"(?i:({names}))\"",
        rf"\"level\"\s*:\s*({numbers})(?=\s*[,}}])",
        rf"^{_LOGCAT_TIME}\s+\d+\s+\d+\s+([{letters}])\s",
        rf"^(?:{_LOGCAT_TIME}\s+)?([{letters}])/[^\s(:]+\s*(?:\(\s*\d+\))?:",
        rf"^([{letters}])\d{{4}} \d\d:\d\d:\d\d",
        rf"^\[[^\]]{{6,40}}\]\s+[0-9a-fA-F]{{8}}\s+\S+\s+([{letters}])\s",  # WebSphere's, Open Liberty's event type
        rf"(?:^|(?<=\d\]: ))({openers}):\s",
        rf"(?<=\d\]: )[\w.-]+: ({openers}):\s",  # a script's tool in a journal: "extract.sh[4077]: pg_dump: error: "
        rf"^<([{priorities}])>",
    ))


FAILURE_LEVELS = _shapes(_LEVEL_NAMES, "WEF", "fatal error|error|fatal|warning|panic|Error|Fatal", "0-4", "40|50|60")
_FAILURE_GROUPS = re.compile(FAILURE_LEVELS).groups
_FAILURE_LEVEL = re.compile(FAILURE_LEVELS, re.M)
_ANY_LEVEL = re.compile(f"{FAILURE_LEVELS}|{_shapes(_QUIET_NAMES, 'IDV', 'info|debug', '5-7', '10|20|30')}", re.M)
_LEADING_TIME = re.compile(rf"{_LOGCAT_TIME}|\[[^\]]{{6,40}}\]\s+[0-9a-fA-F]{{8}}\s")
# Each failure level as the upper-case word grades: a warning 1, an error ERROR_SEVERITY, a fatal FATAL_SEVERITY.
_GRADE = {"WARN": 1.0, "WARNING": 1.0, "ERROR": ERROR_SEVERITY, "ERR": ERROR_SEVERITY,
          "SEVERE": ERROR_SEVERITY, "FATAL": FATAL_SEVERITY, "CRIT": FATAL_SEVERITY,
          "CRITICAL": FATAL_SEVERITY, "PANIC": FATAL_SEVERITY, "FATAL ERROR": FATAL_SEVERITY, "EMERG": FATAL_SEVERITY, "ALERT": FATAL_SEVERITY,
          "W": 1.0, "E": ERROR_SEVERITY, "F": FATAL_SEVERITY,  # logcat's and glog's letters
          "4": 1.0, "3": ERROR_SEVERITY, "2": FATAL_SEVERITY, "1": FATAL_SEVERITY, "0": FATAL_SEVERITY,  # <n>
          "40": 1.0, "50": ERROR_SEVERITY, "60": FATAL_SEVERITY}  # pino's and bunyan's "level":n


@dataclass(frozen=True)
class LineLevel:
    """One level a text states: its word as written, its grade (0 for a quiet level) and the span of its markup.

    The markup is the level with what its format wraps it in ("[error]", "level=error", '"level":"error"', "<3>",
    "error: "), but not the time and ids a logcat line puts before its letter: a key that starts at ``start``
    holds no timestamp.
    """

    word: str
    grade: float
    start: int
    end: int


def _level(m: re.Match, text: str) -> LineLevel:
    group = next(g for g in range(1, len(m.groups()) + 1) if m.group(g) is not None)
    word = m.group(group)
    start = m.start(group) if _LEADING_TIME.match(text, m.start()) else m.start()
    return LineLevel(word, _GRADE[word.upper()] if group <= _FAILURE_GROUPS else 0.0, start, m.end())


def line_levels(text: str) -> Iterator[LineLevel]:
    """Every level ``text`` states, failure and quiet, in order."""
    return (_level(m, text) for m in _ANY_LEVEL.finditer(text))


def first_failure_level(text: str) -> LineLevel | None:
    """The first warning, error or fatal level ``text`` states, or None."""
    m = _FAILURE_LEVEL.search(text)
    return _level(m, text) if m else None


def without_failure_levels(text: str) -> str:
    """``text`` with every warning, error and fatal level marker blanked out: what it says besides its level."""
    return _FAILURE_LEVEL.sub(" ", text)
