"""Bundles: several files printed one after another under the banner ``tail`` and ``head`` print over each
("==> og-dump/7731-alert.json <=="), as a user saves an API's answers (an Opsgenie alert, its log and its notes)
into one file. Each part is read as the file it was: a JSON document by the JSON reader, with the other parts
blanked so its records and its errors keep the lines they have in the bundle; any other part a paragraph per
blank-line block. Parts whose names differ only in their last word ("7731-3f9c1e52-alert.json", "…-logs.json",
"…-notes.json") are one thread. The records of all parts are read in time order where they are dated (ISO 8601), an
untimed one after the record before it. (Log files under such banners are the log reader's: a bundle is one whose
first part is a JSON document over lines, not JSON Lines.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from poimen.inputs.readers import jsonrecords
from poimen.inputs.records import Record
from poimen.inputs.stream import whole_text

BANNER = re.compile(r"^==> (.+?) <==[ \t]*$", re.M)
_NOT_NEWLINE = re.compile(r"[^\n]")


def is_bundle(head: str) -> bool:
    """Whether a file opens with a banner over a JSON document that runs over lines (not JSON Lines: a log of JSON
    events under ``kubectl logs``' banner is the log reader's)."""
    first = BANNER.match(head.lstrip())
    body = head.lstrip()[first.end():].lstrip() if first else ""
    if body[:1] not in ("{", "["):
        return False
    try:
        json.loads(body.split("\n", 1)[0])
    except ValueError:
        return True
    return False


def read(path: Path, options) -> Iterator[Record]:
    text = whole_text(path)
    marks = list(BANNER.finditer(text))
    stems = [_STEM.sub("", m.group(1)) for m in marks]
    found: list[Record] = []
    for k, mark in enumerate(marks):
        start, end = mark.end(), marks[k + 1].start() if k + 1 < len(marks) else len(text)
        part = text[start:end]
        if part.lstrip()[:1] in ("{", "["):
            blanked = _NOT_NEWLINE.sub(" ", text[:start]) + part + _NOT_NEWLINE.sub(" ", text[end:])
            records = list(jsonrecords.read_json_text(path, blanked, options))
        else:
            records = list(_paragraphs(part, text.count("\n", 0, start) + 1))
        if stems.count(stems[k]) > 1:  # "7731-3f9c1e52-alert.json", "…-logs.json", "…-notes.json": one alert's
            records = [replace(r, thread=r.thread or stems[k]) for r in records]
        found += records
    yield from _in_time_order(found)


_STEM = re.compile(r"[-_. ][A-Za-z]+(?:\.\w+)?$")  # what names a part's kind: "-notes.json", "_log.txt"


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def _in_time_order(found: list[Record]) -> list[Record]:
    """The parts' records as they happened, when their times are ISO 8601 (an alert, then its log and its notes
    interleaved); a record with no time stays after the one before it."""
    if not any(_ISO.match(r.time) for r in found):
        return found
    keys, last = [], ""
    for n, r in enumerate(found):
        last = r.time[:19].replace(" ", "T") if _ISO.match(r.time) else last
        keys.append((last, n))
    return [found[n] for _, n in sorted(keys)]


def _paragraphs(part: str, first: int) -> Iterator[Record]:
    lines = part.split("\n")
    block: list[tuple[int, str]] = []
    for n, line in enumerate(lines + [""]):
        if line.strip():
            block.append((first + n, line.rstrip()))
        elif block:
            yield Record("\n".join(x for _, x in block).strip(), block[0][0], block[-1][0], kind="paragraph")
            block = []
