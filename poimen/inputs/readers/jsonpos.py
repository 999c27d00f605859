"""JSON values with the file lines they occupy: a container's members decoded one at a time over the whole text
(``json.JSONDecoder.raw_decode`` from each member's offset), so each object knows its first and last line."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.stream import Piece, pieces

MAX_DEPTH = 64
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Located:
    value: object
    line_start: int
    line_end: int
    start: int  # character offsets of the value in the text
    end: int


def depth_ok(text: str) -> bool:
    """Nesting no deeper than ``MAX_DEPTH`` (Python's decoder recurses: a hostile file must not reach its limit)."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


class JsonText:
    """A JSON document's text, its newline offsets, and positional decoding of its containers."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._newlines, offset - 1) + 1

    def _skip(self, at: int) -> int:
        return _WS.match(self.text, at).end()

    def _fail(self, at: int, what: str) -> SourceError:
        return SourceError(f"{self.path}:{self.line_of(at)}: invalid JSON ({what})")

    def value_at(self, at: int) -> Located:
        at = self._skip(at)
        try:
            value, end = _DECODER.raw_decode(self.text, at)
        except ValueError as exc:
            raise self._fail(getattr(exc, "pos", at), getattr(exc, "msg", str(exc))) from exc
        return Located(value, self.line_of(at), self.line_of(end - 1), at, end)

    def members(self, at: int) -> list[tuple[str | None, Located]]:
        """The members of the array or object at ``at``: (None, element) or (key, value), each located."""
        at = self._skip(at)
        opener = self.text[at:at + 1]
        if opener not in ("[", "{"):
            return []
        closer = "]" if opener == "[" else "}"
        out: list[tuple[str | None, Located]] = []
        at = self._skip(at + 1)
        while self.text[at:at + 1] != closer:
            key = None
            if opener == "{":
                k = self.value_at(at)
                if not isinstance(k.value, str):
                    raise self._fail(at, "expected a key")
                key, at = k.value, self._skip(k.end)
                if self.text[at:at + 1] != ":":
                    raise self._fail(at, "expected ':'")
                at += 1
            item = self.value_at(at)
            out.append((key, item))
            at = self._skip(item.end)
            if self.text[at:at + 1] == ",":
                at = self._skip(at + 1)
            elif self.text[at:at + 1] != closer:
                raise self._fail(at, f"expected ',' or '{closer}'")
        return out


def load(path: Path, text: str) -> JsonText:
    if not depth_ok(text):
        raise SourceError(f"{path}: JSON nested deeper than {MAX_DEPTH} levels")
    return JsonText(path, text)


def _top(doc: JsonText) -> Located:
    top = doc.value_at(0)
    if doc._skip(top.end) != len(doc.text):
        raise doc._fail(doc._skip(top.end), "extra data after the document")
    if not isinstance(top.value, (list, dict)):
        raise doc._fail(top.start, "expected an array or an object")
    return top


def lists(doc: JsonText) -> list[tuple[str, list[Located]]]:
    """The record lists under a top-level object's keys, in file order: each array (or map) of objects, with the
    key it stands under ({"issues": […], "comments": […]}, Mattermost's {"order": …, "posts": {id: post}}), a map of
    arrays read as one list ({"comments": {"241": […], "238": […]}}), and a map of objects that each hold one list
    read as that list (Bugzilla's comments, {"bugs": {"20417": {"comments": […]}}}: "bugs.comments"). A top-level
    array of API answers (``wrappers``: pages saved with ``jq -s``, or the bugs and then their comments) holds the
    lists of each, a list that several pages hold read as one."""
    out: dict[str, list[Located]] = {}
    for holder in wrappers(doc):
        for key, inner in _lists_of(doc, holder):
            out.setdefault(key, []).extend(inner)
    return list(out.items())


def _lists_of(doc: JsonText, holder: Located) -> Iterator[tuple[str, list[Located]]]:
    for key, v in doc.members(holder.start):
        if not (isinstance(v.value, (list, dict)) and v.value):
            continue
        held = _held_lists(v.value) if isinstance(v.value, dict) else None
        inner = [m for _, m in doc.members(v.start) if isinstance(m.value, dict)]
        if held:
            yield f"{key}.{held}", [m for _, g in doc.members(v.start) for k, x in doc.members(g.start) if k == held
                                    for _, m in doc.members(x.start) if isinstance(m.value, dict)]
        elif inner and len(inner) * 2 > len(v.value):
            yield key or "", inner
        elif isinstance(v.value, dict) and all(isinstance(x, list) for x in v.value.values()):
            # a map of lists: comments fetched per issue, {"241": [comment, …], "238": […]}
            grouped = [m for _, g in doc.members(v.start) for _, m in doc.members(g.start)
                       if isinstance(m.value, dict)]
            if grouped:
                yield key or "", grouped


def _held_lists(value: dict) -> str | None:
    """The one key under which every value of a map holds a list of objects and nothing that speaks: {"20417":
    {"comments": […]}, "20452": {"comments": […]}} gives "comments"; None for any other map."""
    keys = set()
    for x in value.values():
        if not isinstance(x, dict) or not _wraps(x):
            return None
        keys |= {k for k, v in x.items() if isinstance(v, list) and v and all(isinstance(c, dict) for c in v)}
    return keys.pop() if len(keys) == 1 else None


def _speaks(value: dict) -> bool:
    """Whether an object says something: a text with a blank in it (a next page's URL, a cursor, "ok": true are no
    words)."""
    return any(isinstance(v, str) and any(c.isspace() for c in v.strip()) for v in value.values())


def _wraps(value: dict) -> bool:
    """Whether an object is an API's answer around records rather than a record: it says nothing, nor does an object
    it holds as one record (PagerDuty's {"incident": {…}, "log_entries": […]} is that incident, its entries under it),
    and it holds a list or map of objects."""
    if _speaks(value) or any(isinstance(v, dict) and _speaks(v) for v in value.values()):
        return False
    return any(isinstance(v, (list, dict)) and v and any(isinstance(c, dict) for c in
                                                       (v if isinstance(v, list) else v.values())) for v in value.values())


def wrappers(doc: JsonText) -> list[Located]:
    """The objects a document's record lists stand in: the top-level object, or each object of a top-level array
    whose objects all wrap records (``_wraps``); [] for an array of records."""
    top = _top(doc)
    if isinstance(top.value, dict):
        return [top]
    if not top.value or not all(isinstance(v, dict) and _wraps(v) for v in top.value):  # (asked of the values: an
        return []  # array of records fails on its first)
    return [v for _, v in doc.members(top.start)]


NESTED = 5  # the levels of objects an API's answer wraps its records in


def records(doc: JsonText) -> list[Located]:
    """The records of a document: a top-level array's objects; else the longest list of ``lists``, or the longest
    list of objects that objects wrap ("data.repository.issues.nodes" of a GraphQL answer, "hits.hits") where that is
    longer; else the one object (also when the longest is one object that holds less than half of the document).
    """
    top = _top(doc)
    if isinstance(top.value, list):
        pages = lists(doc)  # (an array of API answers: the longest list they hold)
        return max((inner for _, inner in pages), key=len) if pages else \
            [v for _, v in doc.members(top.start) if isinstance(v.value, dict)]
    best: list[Located] = []
    for _, inner in lists(doc):
        if len(inner) > len(best):
            best = inner
    wrapped = _wrapped(doc, top, NESTED)
    found = wrapped if len(wrapped) > len(best) else best
    if len(found) == 1 and (found[0].end - found[0].start) * 2 < top.end - top.start:
        return [top]  # one small object in a list (an alert's "teams": [{"id": …}]) is a detail of the one record
    return found or [top]


def _wrapped(doc: JsonText, at: Located, depth: int) -> list[Located]:
    """The longest list of objects inside the objects under ``at``, down to ``depth`` levels."""
    best: list[Located] = []
    for _, v in doc.members(at.start) if depth and isinstance(at.value, dict) else []:
        if isinstance(v.value, list) and v.value and sum(isinstance(x, dict) for x in v.value) * 2 > len(v.value):
            found = [m for _, m in doc.members(v.start) if isinstance(m.value, dict)]
        else:
            found = _wrapped(doc, v, depth - 1)
        best = found if len(found) > len(best) else best
    return best


def json_lines(path: Path, max_chars: int) -> Iterator[tuple[object, Piece]]:
    """Each non-blank line of a JSON Lines file, decoded (None for a line that is no JSON), with its piece."""
    for p in pieces(path, "\n", max_chars):
        if not depth_ok(p.text):
            raise SourceError(f"{path}:{p.line_start}: JSON nested deeper than {MAX_DEPTH} levels")
        try:
            value = json.loads(p.text)
        except ValueError:
            value = None
        yield value, p
