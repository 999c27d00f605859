"""The time zone a log's banner says its clocks are in, and a log time written with that zone's offset.

A log printed in local time under a banner that names the zone ("Tuesday 2025-03-18, times are Europe/Helsinki",
"(UTC+02:00)", "TZ=America/Chicago") is read in that zone, so its lines compare with the comments pasted under it,
which a tracker writes in UTC ("Comment 3 Dorota Kwiatek 2025-03-18 09:45:20 UTC"). A zone is an IANA name the
``tzdata`` package knows, or a UTC/GMT offset; the offset a name gives is the one on the line's own day (summer time
included). A time that states its own offset keeps it; a time without a date is left as written (no day, no offset).

A day written between rules over a chat's messages ("-------- Tuesday, April 16, 2024 --------", Rocket.Chat and
Mattermost copied from the browser) dates the messages under it that show a clock alone ("03:41", ``banner_day``,
``on_day``). A comment stamped with a month and a day and no year (Linear's "Mar 4, 11:12 AM", GitHub's "commented on Feb 11", Teams'
"17/09 14:06") is in
the year of the log above it (``with_year``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_NAME = re.compile(r"(?<![\w/])([A-Z][a-z]+(?:/[A-Z][A-Za-z_-]+){1,2})(?![\w/])")
_OFFSET = re.compile(r"\b(?:UTC|GMT)\s?([+-])(\d{1,2})(?::?(\d{2}))?\b")
_UTC = re.compile(r"\b(?:times?|clocks?)\s+(?:are|is|in)\s+(?:UTC|GMT)\b|\((?:UTC|GMT)\)")
_DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?$")


def zone_of(text: str) -> tzinfo | None:
    """The zone a banner's text names, or None when it names none."""
    for name in _NAME.findall(text):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    if m := _OFFSET.search(text):
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0)))
    return timezone.utc if _UTC.search(text) else None


def zoned(when: str, zone: tzinfo | None) -> str:
    """``when`` ("2025-03-18 08:41:03,288") with the offset ``zone`` has on that day ("…,288+02:00"); as written
    when there is no zone, or ``when`` has no date or states its own offset."""
    m = _DATED.match(when) if zone is not None else None
    if not m:
        return when
    try:
        y, mo, d, h, mi, s = (int(g or 0) for g in m.groups())
        offset = datetime(y, mo, d, h, mi, s, tzinfo=zone).utcoffset()
    except ValueError:
        return when  # a date-shaped time that is no date: as written, as times.seconds reads it
    if offset is None:
        return when
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{when}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


_NO_YEAR = re.compile(r"^([A-Z][a-z]{2,8}\.? \d{1,2}),? (?:at )?(\d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?)$")  # ("May 12 at 8:09am")
# GitHub's "commented on Feb 11" (and "Feb 11 • edited"): a day alone
_DAY_NO_YEAR = re.compile(r"^([A-Z][a-z]{2})[a-z]*\.? (\d{1,2})(?:\s*[•·].*)?$")
_NUMERIC_NO_YEAR = re.compile(r"^(\d{1,2})/(\d{1,2}),? (\d{1,2}:\d{2}(?::\d{2})?)(?: ?([AaPp][Mm]))?$")
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}


def with_year(when: str, day: str) -> str:
    """``when`` ("Mar 4, 11:12 AM", "Feb 11") in the year of ``day`` (the date of the last log line read,
    "2025-03-06"): "Mar 4, 2025, 11:12 AM", "2025-02-11"; as written when it names a year, or no day is known."""
    if not day[:4].isdigit():
        return when
    if m := _NO_YEAR.match(when):
        return f"{m.group(1)}, {day[:4]}, {m.group(2)}"
    if m := _NUMERIC_NO_YEAR.match(when):  # Teams' "17/09 14:06": day first, unless a 12-hour clock says US
        a, b, clock, half = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        day_of, month = (b, a) if (half and a <= 12) or b > 12 else (a, b)
        if half:
            h, rest = clock.split(":", 1)
            clock = f"{int(h) % 12 + (12 if half.lower() == 'pm' else 0):02d}:{rest}"
        if 1 <= month <= 12 and 1 <= day_of <= 31:
            return f"{day[:4]}-{month:02d}-{day_of:02d} {clock}"
    if (m := _DAY_NO_YEAR.match(when)) and m.group(1).lower() in _MONTHS and 1 <= int(m.group(2)) <= 31:
        return f"{day[:4]}-{_MONTHS[m.group(1).lower()]:02d}-{int(m.group(2)):02d}"
    return when


_ISO = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])")
_WRITTEN_DAY = re.compile(r"\b(?:([A-Z][a-z]{2,8})\.? (\d{1,2})|(\d{1,2}) ([A-Z][a-z]{2,8})\.?),? (\d{4})\b")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?(?: ?([AaPp])[Mm])?$")


def banner_day(text: str) -> str:
    """The one day a banner names, as "2024-04-16" ("--- pod, 2025-09-22 ---", "---- Tuesday, April 16, 2024 ----");
    "" for none or several."""
    iso = _ISO.findall(text)
    if iso:
        return iso[0] if len(iso) == 1 else ""
    found = _WRITTEN_DAY.findall(text)
    if len(found) != 1:
        return ""
    month, day, day2, month2, year = found[0]
    number = _MONTHS.get((month or month2)[:3].lower())
    return f"{year}-{number:02d}-{int(day or day2):02d}" if number and 1 <= int(day or day2) <= 31 else ""


def on_day(when: str, day: str) -> str:
    """A clock alone ("03:41", "2:41 PM") on ``day`` ("2024-04-16 03:41"); ``when`` as written otherwise."""
    m = _CLOCK.match(when.strip()) if day else None
    if not m:
        return when
    hour, half = int(m.group(1)), (m.group(3) or "").lower()
    hour = hour % 12 + (12 if half == "p" else 0) if half else hour
    return f"{day} {hour:02d}:{m.group(2)}"


# A chat copied from the browser or a desktop app heads each day's messages with the day alone on its line: Teams'
# "Tuesday, 12 November", Slack's "Tuesday, November 12th", Discord's and Rocket.Chat's "November 12, 2024", between
# rules or not (bench/incidents47). The year, when not written, is the document's (``written_year``) or, with a weekday
# named, the year next to it in which that day is that weekday (a chat across New Year).
_DAY_HEAD = re.compile(r"^[\s=\-~*#_]*(?:(?P<wd>Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+)?"
                       r"(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m1>[A-Z][a-z]{2,8})\.?"
                       r"|(?P<m2>[A-Z][a-z]{2,8})\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?)"
                       r",?(?:\s+(?P<y>\d{4}))?[\s=\-~*#_]*$")
_MONTH_NAMES = "january february march april may june july august september october november december".split()
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# a year as a date writes it: "2024-11-12", "13/11/2024", "Nov 2024", "12-13 Nov 2024", "12 November, 2024"; not "from 2019"
_DATED_YEAR = re.compile(r"(?<![\d.-])((?:19|20)\d{2})-\d{2}-\d{2}\b|\b\d{1,2}[/.]\d{1,2}[/.]((?:19|20)\d{2})\b"
                         r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?"
                         r"((?:19|20)\d{2})\b")


def written_year(text: str) -> str:
    """The year of the first date ``text`` writes with one ("HANDOVER … 12-13 Nov 2024" → "2024"); "" for none."""
    m = _DATED_YEAR.search(text)
    return next((g for g in m.groups() if g), "") if m else ""


def heading_day(line: str, year: str) -> str:
    """The day a line alone names, as a chat's day heading ("Tuesday, 12 November" in ``year`` 2024:
    "2024-11-12"); "" for any other line, or a day with no year written or known."""
    m = _DAY_HEAD.match(line)
    if not m:
        return ""
    name = (m.group("m1") or m.group("m2")).lower()
    month = next((i + 1 for i, full in enumerate(_MONTH_NAMES) if full.startswith(name)), None)
    if not month or not (m.group("y") or year):
        return ""
    day = int(m.group("d1") or m.group("d2"))
    years = [int(m.group("y") or year)]
    if m.group("wd") and not m.group("y"):  # the year nearest the document's in which the day is that weekday
        years = [years[0], years[0] + 1, years[0] - 1]
    for y in years:
        try:
            on = datetime(y, month, day)
        except ValueError:
            return ""
        if not m.group("wd") or on.weekday() == _WEEKDAYS.index(m.group("wd").lower()):
            return on.strftime("%Y-%m-%d")
    return ""
