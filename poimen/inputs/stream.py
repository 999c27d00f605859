"""A source file read as a stream of text pieces, each with the file lines it spans.

A source is read in fixed-size blocks through a strict incremental UTF-8 decoder, so a large file (or a 200 MB
single line) is never held whole: pieces end at a boundary (a blank line, a newline), and a piece that would
outgrow ``max_chars`` is cut at whitespace. Every reader starts here, so every record knows its lines.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from poimen.errors import SourceError
from poimen.text.terminal import shown

BLOCK = 1 << 16
NUL = b"\x00"


def blocks(path: Path) -> Iterator[str]:
    """The file's text in blocks; invalid UTF-8 or a NUL byte is one line naming the file and the byte."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    offset = 0
    with path.open("rb") as fh:
        while True:
            raw = fh.read(BLOCK)
            if NUL in raw:
                raise SourceError(f"{path}: binary file (NUL byte at byte {offset + raw.index(NUL)})")
            try:
                text = decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as exc:
                raise SourceError(f"{path}: invalid UTF-8 at byte {offset + exc.start}") from exc
            offset += len(raw)
            if text:
                yield text
            if not raw:
                return


def _split(parts: Iterator[str], boundary: str, max_chars: int) -> Iterator[tuple[str, bool]]:
    """(piece, whether a boundary ended it) for ``split_stream``.

    The search for the boundary resumes where the last one stopped, so a text with no boundary is searched once.
    """
    buf = ""
    searched = 0  # no boundary starts before this offset of ``buf``
    for block in parts:
        buf += block
        while True:
            cut = buf.find(boundary, searched)
            if 0 <= cut <= max_chars:
                yield buf[:cut], True
                buf, searched = buf[cut + len(boundary):], 0
                continue
            if len(buf) > max_chars:
                space = max(buf.rfind(" ", 0, max_chars), buf.rfind("\n", 0, max_chars))
                cut = space if space > max_chars // 2 else max_chars
                yield buf[:cut], False
                buf, searched = buf[cut:], 0
                continue
            searched = max(0, len(buf) - len(boundary) + 1)
            break
    if buf:
        yield buf, False


def split_stream(parts: Iterator[str], boundary: str, max_chars: int) -> Iterator[str]:
    """Split a stream of text blocks at ``boundary``; pieces longer than ``max_chars`` are cut at whitespace."""
    return (piece for piece, _ in _split(parts, boundary, max_chars))


@dataclass(frozen=True)
class Piece:
    """A stripped, non-blank piece of a file and the 1-based file lines (inclusive) it spans."""

    text: str
    line_start: int
    line_end: int
    indent: int = 0  # the whitespace stripped from the start of its first line (a log trace is indented)


def pieces(path: Path, boundary: str, max_chars: int) -> Iterator[Piece]:
    """``split_stream`` of the file, stripped, blank pieces dropped, each with its lines.

    The line of a piece is the count of newlines before its first non-blank character; a piece cut inside a long
    line (no boundary within ``max_chars``) starts on the line the cut fell in.
    """
    line = 1  # the file line at the start of the next raw piece
    for raw, bounded in _split(blocks(path), boundary, max_chars):
        text = raw.strip()
        if text:
            lead = len(raw) - len(raw.lstrip())
            start = line + raw.count("\n", 0, lead)
            yield Piece(text, start, start + text.count("\n"), lead - raw.rfind("\n", 0, lead) - 1)
        line += raw.count("\n") + (boundary.count("\n") if bounded else 0)


def shown_pieces(path: Path, boundary: str, max_chars: int) -> Iterator[Piece]:
    """``pieces`` as a terminal showed them (``poimen.text.terminal.shown``: colours, titles and carriage-return
    overwrites dropped), for the streams a terminal records: sessions and logs. A piece that showed nothing is
    dropped."""
    for p in pieces(path, boundary, max_chars):
        text = shown(p.text).strip()
        if text:
            yield p if text == p.text else replace(p, text=text)


def whole_text(path: Path) -> str:
    """The whole file, decoded as ``blocks`` decodes it (a JSON document is parsed whole, with positions)."""
    return "".join(blocks(path))
