"""An asciinema recording (``.cast``, asciicast v2 and v3): a header object, then one JSON event a line,
``[time, "o", data]`` for what the terminal printed. The output events, joined, are the terminal's text, and each
of its lines is a piece at the file line of the event that printed its first character, so a terminal session
recorded by asciinema reads as one saved with ``script`` (``shell``), and its lineage reaches the event's line.
Keystrokes echoed one event each join their line; input events ("i"), markers and resizes print nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.stream import Piece
from poimen.text.terminal import shown


def is_cast(head: str) -> bool:
    """Whether a file opens with an asciicast header: {"version": 2 or 3, "width"/"term": …}."""
    first = head.lstrip().split("\n", 1)[0]
    try:
        header = json.loads(first)
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("version") in (2, 3) and ("width" in header or "term" in header)


def pieces(path: Path) -> Iterator[Piece]:
    text: list[str] = []  # what the terminal printed so far, on the line being built
    start = 0  # the file line of the event that printed the line's first character
    with path.open(encoding="utf-8", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            if n == 1 or not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except ValueError as exc:
                raise SourceError(f"{path}:{n}: invalid asciicast event ({exc.msg})") from exc
            if not (isinstance(event, list) and len(event) >= 3 and event[1] == "o" and isinstance(event[2], str)):
                continue
            for k, chunk in enumerate(event[2].split("\n")):
                if k:  # a newline ends the line being built
                    yield from _piece("".join(text), start)
                    text, start = [], 0
                if chunk and not start and shown(chunk).strip():
                    start = n
                text.append(chunk)
    yield from _piece("".join(text), start)


def _piece(raw: str, line: int) -> Iterator[Piece]:
    text = shown(raw).strip()
    if text and line:
        yield Piece(text, line, line)
