"""A record's time as seconds, from the shapes streams write one in: only differences between records matter.

Read in order: a Unix epoch (a Slack ``ts`` such as ``1709388311.000200``, epoch milliseconds), ISO 8601 and
its log variants (``2024-03-02T14:05:11Z``, ``2024-03-02 14:05:11,123``, an offset), Apache's
``[02/Mar/2024:14:05:11 +0000]``, a day and month by name ("04 Jun 2024 03:31", "Sep 3, 2024 1:55 PM"), Jira's ``14/May/24 10:40`` and ``14/May/24 3:02 PM`` (a comment export), what ``date``
and C's ``asctime`` print (``Tue Oct  8 11:21:40 UTC 2024``, read as UTC), syslog's ``Mar  2 14:05:11`` (no year: the year 2000 is assumed, so two
syslog times compare, and a syslog time is not compared with a dated one by accident of year), and a bare time
of day ``14:05`` / ``14:05:11`` (as a Markdown timeline writes one; seconds into its day). ``None`` when the
text states no time: such a record is placed by structure alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_EPOCH = re.compile(r"^\s*(\d{10}|\d{13})(?:\.\d+)?\s*$")
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?\s*(Z|[+-]\d{2}:?\d{2})?")
_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\s*$")
_APACHE = re.compile(r"(\d{2})/([A-Z][a-z]{2})/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\s*([+-]\d{4}))?")
_JIRA = re.compile(r"\b(\d{1,2})[/-]([A-Z][a-z]{2})[/-](\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp][Mm]))?")
# "04 Jun 2024 03:31", "4 June 2024, 3:31 PM", and "Sep 3, 2024 1:55 PM", "June 3 2024 13:55": a day, a month by
# name and a year, then a time of day with its AM/PM.
_DAY_MONTH = re.compile(r"\b(\d{1,2})\s+([A-Z][a-z]{2})[a-z]*\.?,?\s+(\d{4}),?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?"
                        r"(?:[.,]\d{1,9})?(?:\s*([AaPp][Mm]))?(?:\s+([+-]\d{2}:?\d{2}))?")  # an e-mail's "Thu, 17 Apr 2025 16:48:02 +0200"
_MONTH_DAY = re.compile(r"\b([A-Z][a-z]{2})[a-z]*\.?\s+(\d{1,2}),?\s+(\d{4}),?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?"
                        r"(?:[.,]\d{1,9})?(?:\s*([AaPp][Mm]))?")
# WebSphere's and Open Liberty's "[3/11/25, 9:14:02:113 UTC]": month, day, year (a day over 12 comes first), a time
_SLASHED = re.compile(r"^\[?(\d{1,2})/(\d{1,2})/(\d{4}|\d{2}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:[:.,]\d{1,3})?"
                      r"(?:\s*([AaPp][Mm]))?(?:\s+(?:UTC|GMT|Z)\b)?")
# A day written with dots, day first, then a time: "10.03.2025 08:21" (Zammad, German-speaking trackers); or with
# dashes, as European trackers print it: TOPdesk's "10-06-2025 08:12" (bench/incidents44)
_DOTTED = re.compile(r"^\s*(\d{1,2})([.-])(\d{1,2})\2(\d{4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\b")
_CTIME = re.compile(r"\b([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})(?:\s+[A-Z]{1,5})?\s+(\d{4})\b")
_SYSLOG = re.compile(r"\b([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\b")
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
# Where a time may be found in a record's text when its reader gave none: at the front of a log line.
_LEADING = 40


def _offset(text: str | None) -> timezone:
    if not text or text == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def seconds(text: str) -> float | None:
    """``text`` (a record's time field, or the front of a log line) as seconds, or None if it states no time."""
    if not text:
        return None
    m = _EPOCH.match(text)
    if m:
        value = float(text)
        return value / 1000 if len(m.group(1)) == 13 else value
    try:
        m = _ISO.search(text)
        if m:
            y, mo, d, h, mi, s = (int(g or 0) for g in m.groups()[:6])
            return datetime(y, mo, d, h, mi, s, tzinfo=_offset(m.group(7))).timestamp()
        m = _DATE.match(text)
        if m:
            return datetime(*(int(g) for g in m.groups()), tzinfo=timezone.utc).timestamp()
        m = _APACHE.search(text)
        if m and m.group(2).lower() in _MONTHS:
            d, mon, y, h, mi, s, off = m.groups()
            return datetime(int(y), _MONTHS[mon.lower()], int(d), int(h), int(mi), int(s),
                            tzinfo=_offset(off)).timestamp()
        for pattern, order in ((_DAY_MONTH, "dmy"), (_MONTH_DAY, "mdy")):
            m = pattern.search(text)
            if m:
                a, b, y, h, mi, s, half, *off = m.groups()
                d, mon = (a, b) if order == "dmy" else (b, a)
                if mon.lower() in _MONTHS:
                    hour = int(h) % 12 + (12 if half.lower() == "pm" else 0) if half else int(h)
                    return datetime(int(y), _MONTHS[mon.lower()], int(d), hour, int(mi), int(s or 0),
                                    tzinfo=_offset(off[0] if off else None)).timestamp()
        m = _DOTTED.match(text)
        if m:
            d, mo, y, h, mi, s = (int(g or 0) for k, g in enumerate(m.groups()) if k != 1)
            d, mo = (mo, d) if mo > 12 >= d else (d, mo)  # (a month over 12 is the day: written month first)
            return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()
        m = _SLASHED.match(text)
        if m:
            a, b, y, h, mi, s, half = m.groups()
            mon, d = (int(b), int(a)) if int(a) > 12 else (int(a), int(b))
            hour = int(h) % 12 + (12 if half.lower() == "pm" else 0) if half else int(h)
            return datetime(int(y) + (2000 if len(y) == 2 else 0), mon, d, hour, int(mi), int(s or 0),
                            tzinfo=timezone.utc).timestamp()
        m = _JIRA.search(text)
        if m and m.group(2).lower() in _MONTHS:
            d, mon, y, h, mi, s, half = m.groups()
            hour = int(h) % 12 + (12 if half and half.lower() == "pm" else 0) if half else int(h)
            year = int(y) + (2000 if len(y) == 2 else 0)
            return datetime(year, _MONTHS[mon.lower()], int(d), hour, int(mi), int(s or 0),
                            tzinfo=timezone.utc).timestamp()
        m = _CTIME.search(text)
        if m and m.group(1).lower() in _MONTHS:
            mon, d, h, mi, s, y = m.groups()
            return datetime(int(y), _MONTHS[mon.lower()], int(d), int(h), int(mi), int(s),
                            tzinfo=timezone.utc).timestamp()
        m = _SYSLOG.search(text)
        if m and m.group(1).lower() in _MONTHS:
            mon, d, h, mi, s = m.groups()
            return datetime(2000, _MONTHS[mon.lower()], int(d), int(h), int(mi), int(s),
                            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None  # a date-shaped text that is no date (month 13): no time, as for any text without one
    m = _CLOCK.search(text)
    if m and int(m.group(1)) < 24:
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)
    return None


_UNTIMED_KINDS = frozenset({"output", "command", "code"})


def record_seconds(time: str, text: str, kind: str = "") -> float | None:
    """A record's time: its ``time`` field, else a time at the very front of its text (a log line's stamp). A
    command's output, a command and a code block state no time of their own: a date at the front of an output
    line is what the command printed (a secret's creation time, a release's date), not when it ran."""
    if time:
        return seconds(time)
    if kind in _UNTIMED_KINDS:
        return None
    head = text.lstrip()[:_LEADING]
    if head[:1].isdigit() or head[:1] == "[" or head[:3].lower() in _MONTHS:
        return seconds(head)
    return None


def paragraph_seconds(text: str) -> list[float]:
    """The dates a plain paragraph's lines state at their front when its reader gave it no time: the stamps of a log
    pasted into a document, and a comment's header ("Nadia Farrell · 08/Oct/24 10:34 AM · Internal note" over its
    words): a ticket export in plain text with its log under it places each section by them (bench/incidents47). A
    day and a time only: a timeline's clock ("10:14 every gateway panics") is placed by the reader that knows its
    day, and a syslog time has no year."""
    from poimen.inputs.readers.speakers import speaker  # (the reader's shapes of a comment's header)
    out = []
    for line in text.split("\n"):
        said = speaker(line) if line[:1].isupper() else None
        value = seconds(said[0]) if said else record_seconds("", line)
        if value is not None and time_kind(value) == "date":
            out.append(value)
    return out


DAY = 86400.0
_SYSLOG_YEAR = (datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp(), datetime(2001, 1, 1, tzinfo=timezone.utc).timestamp())


def time_kind(value: float) -> str:
    """What a ``seconds`` value is: "clock" (a time of day), "syslog" (a day of a year not given) or "date"."""
    if value < 2 * DAY:
        return "clock"
    if _SYSLOG_YEAR[0] <= value < _SYSLOG_YEAR[1]:
        return "syslog"
    return "date"


# A timeline entry's clock at the start of its line, or in its first cell as a table row reads ("Time (CET): 13:40;
# What happened: …")
_CLOCK_LED = re.compile(r"^\W*(?:[A-Za-z][\w ()]{0,20}:\s+)?(?:\*\*)?(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\*\*)?[\s;|,]")


def clock_of(text: str) -> int | None:
    """The time of day a timeline line opens with ("10:14  every gateway panics", "- **03:44** — …", a table row's
    "Time (CET): 13:40; …"), in seconds; None for any other line."""
    m = _CLOCK_LED.match(text)
    if not m or int(m.group(1)) > 23:
        return None
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)


def line_clocks(lines: Sequence) -> list[int | None]:
    """Each line's time of day: its own, or that of the timeline entry above it in the same record (a wrapped
    entry's next line, the error it quotes)."""
    out: list[int | None] = []
    for i, line in enumerate(lines):
        own = clock_of(line.text)
        if own is None and i and lines[i - 1].record is line.record:
            own = out[-1]
        out.append(own)
    return out
