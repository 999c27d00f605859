"""Feeds: a status page's incident history as Atom or RSS (Statuspage's ``history.atom`` / ``history.rss``, any
status feed saved from a browser) read as pages, one entry a section.

Each entry (Atom's ``<entry>``, RSS's ``<item>``) is a section headed by its ``<title>``, at the title's file line,
and dated by its ``<published>`` (``<updated>``, ``<pubDate>``, ``<dc:date>``). Its body (``<content>``,
``<content:encoded>``, ``<summary>``, ``<description>``; escaped HTML or CDATA) is read as the HTML reader reads a
page, each block at the file line its text stands on. A status page writes an incident's updates newest first, each
under its stamp ("Apr 9, 18:22 UTC", then "**Resolved** - …"): an entry's updates are read oldest first, each
record dated by its stamp in the entry's year, so "we reverted this morning's change … it did not change the
results" comes after what it answers and before the fix, as it happened. A feed lists its entries newest first;
they are read oldest first too.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

from poimen.inputs.readers import markdown
from poimen.inputs.readers.html import page_pieces
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, whole_text

_ENTRY = re.compile(r"<(entry|item)\b[^>]*>(.*?)</\1\s*>", re.S)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.S)
_WHEN = re.compile(r"<(published|pubDate|dc:date|updated)\b[^>]*>(.*?)</\1\s*>", re.S)
_BODY = re.compile(r"<(content:encoded|content|summary|description)\b[^>]*>(.*?)</\1\s*>", re.S)
_CDATA = re.compile(r"^\s*<!\[CDATA\[(.*)\]\]>\s*$", re.S)
_TAG = re.compile(r"<[^>]+>")
# A status page's stamp over an update: "Apr 9, 18:22 UTC", "Apr  9, 2025 - 18:22 PDT"
_STAMP = re.compile(r"^([A-Z][a-z]{2,8}\.? +\d{1,2}),?(?: +\d{4})?(?: *[-,] *| +)(\d{1,2}:\d{2}(?: ?[AaPp][Mm])?)"
                    r"(?: +([A-Z]{2,5}))?$")
FEED = re.compile(r"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:feed|rss)\b", re.S)


def is_feed(head: str) -> bool:
    return bool(FEED.match(head))


def _decoded(raw: str) -> str:
    cdata = _CDATA.match(raw)
    return cdata.group(1) if cdata else html.unescape(raw)


def read(path: Path, options) -> Iterator[Record]:
    text = whole_text(path)
    breaks = [i for i, c in enumerate(text) if c == "\n"]

    def line_of(offset: int) -> int:
        return bisect_right(breaks, offset - 1) + 1

    entries = [_entry(m, line_of) for m in _ENTRY.finditer(text)]
    if len(entries) > 1 and _newest_first([_moment(when) for when, _ in entries]):
        entries.reverse()
    for when, records in entries:
        yield from records


def _moment(when: str) -> datetime | None:
    """An entry's date: Atom's ISO 8601, RSS's RFC 822 ("Wed, 09 Apr 2025 15:02:11 +0000"); None for another."""
    try:
        return datetime.fromisoformat(when)
    except ValueError:
        try:
            return parsedate_to_datetime(when)
        except (TypeError, ValueError, IndexError):
            return None


def _newest_first(whens: list) -> bool:
    """Whether ``whens`` (all known, comparable) run backwards: a feed's entries, a status page's updates."""
    try:
        return None not in whens and whens == sorted(whens, reverse=True) and whens[0] != whens[-1]
    except TypeError:  # a date with a zone beside one without
        return False


def _entry(m: re.Match, line_of) -> tuple[str, list[Record]]:
    body_at = m.start(2)
    inner = m.group(2)
    title = _TITLE.search(inner)
    when = _WHEN.search(inner)
    stamp = _decoded(when.group(2)).strip() if when else ""
    name = " ".join(_TAG.sub(" ", _decoded(title.group(1))).split()) if title else ""
    title_line = line_of(body_at + title.start()) if title else line_of(m.start())
    records = [Record(f"# {name}", title_line, title_line, kind="paragraph", headings=(name,), time=stamp)] \
        if name else []
    body = _BODY.search(inner)
    if not body:
        return stamp, records
    first = line_of(body_at + body.start(2))
    last = line_of(body_at + body.end(2))
    found = [replace(p, line_start=min(last, first + p.line_start - 1), line_end=min(last, first + p.line_end - 1),
                     origin=tuple(min(last, first + n - 1) for n in p.origin))
             for p in page_pieces(_decoded(body.group(2)))]
    heads = (name,) if name else ()
    for dated, group in _updates(found, stamp):
        records += [replace(r, time=dated or r.time or stamp) for r in markdown.read_pieces(group, heads)]
    return stamp, records


def _updates(found: list[Piece], stamp: str) -> list[tuple[str, list[Piece]]]:
    """The entry's pieces as its updates, oldest first: each runs from a stamp to the next, with the stamp's time in
    the entry's year; the pieces as they are when no stamp opens one, or the stamps already go forward."""
    moment = None if stamp[:4].isdigit() else _moment(stamp)
    year = stamp[:4] if stamp[:4].isdigit() else str(moment.year) if moment else ""
    groups: list[tuple[str, list[Piece]]] = []
    for p in found:
        s = _STAMP.match(p.text)
        if s or not groups:
            groups.append((_dated(s, year) if s else "", []))
        groups[-1][1].append(p)
    times = [d for d, _ in groups if d]
    if len(times) > 1 and _newest_first(times):
        lead = [] if groups[0][0] else [groups.pop(0)]  # what stands before the first stamp stays first
        return lead + groups[::-1]
    return groups


_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}


def _dated(stamp: re.Match, year: str) -> str:
    """A stamp as "2025-04-09 18:22" (with " UTC" when it says so), in ``year``; "" when it names no month."""
    month_day, clock, zone = stamp.group(1), stamp.group(2), stamp.group(3)
    month = _MONTHS.get(month_day[:3].lower())
    if not month or not year:
        return ""
    half = clock[-2:].lower() if clock[-1] in "mM" else ""
    hour, minute = (clock[:-2] if half else clock).strip().split(":")
    hour = int(hour) % 12 + (12 if half == "pm" else 0) if half else int(hour)
    day = int(month_day.split()[-1])
    when = f"{year}-{month:02d}-{day:02d} {hour:02d}:{minute}"
    return f"{when} {zone}" if zone in ("UTC", "GMT") else when
