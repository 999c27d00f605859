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
    """The file's text in blocks; invalid UTF-8 or a NUL byte is one line naming the file and the byte. A byte order
    mark opening the file (Windows tools and Google Docs' .txt export write one) is no text."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="strict")
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
    Pieces are read at an offset into the buffer, which is cut only when the next block joins it: cutting it
    after every piece copied the rest of its 64 KB block each time, for each of a block's hundreds of lines.
    """
    buf = ""
    start = 0  # where the unread text of ``buf`` begins
    searched = 0  # no boundary starts before this offset of ``buf``
    width = len(boundary)
    for block in parts:
        buf, searched, start = buf[start:] + block, searched - start, 0
        while True:
            cut = buf.find(boundary, searched)
            if 0 <= cut <= start + max_chars:
                yield buf[start:cut], True
                start = searched = cut + width
                continue
            if len(buf) - start > max_chars:
                space = max(buf.rfind(" ", start, start + max_chars), buf.rfind("\n", start, start + max_chars)) - start
                cut = start + (space if space > max_chars // 2 else max_chars)
                yield buf[start:cut], False
                start = searched = cut
                continue
            searched = max(start, len(buf) - width + 1)
            break
    if len(buf) > start:
        yield buf[start:], False


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
    origin: tuple[int, ...] = ()  # the file line of each of its lines, where they are not consecutive (a page's HTML)

    def line_at(self, i: int) -> int:
        """The file line of the piece's ``i``-th line (0-based)."""
        return self.origin[i] if i < len(self.origin) else self.line_start + i


def pieces(path: Path, boundary: str, max_chars: int) -> Iterator[Piece]:
    """``split_stream`` of the file, stripped, blank pieces dropped, each with its lines.

    The line of a piece is the count of newlines before its first non-blank character; a piece cut inside a long
    line (no boundary within ``max_chars``) starts on the line the cut fell in.
    """
    newlines = boundary.count("\n")  # the lines a boundary ends
    line = 1  # the file line at the start of the next raw piece
    for raw, bounded in _split(blocks(path), boundary, max_chars):
        text = raw.strip()
        if text:
            lead = len(raw) - len(raw.lstrip())
            start = line + raw.count("\n", 0, lead)
            end = start + text.count("\n")
            yield Piece(text, start, end, lead - raw.rfind("\n", 0, lead) - 1)
            line = end + raw.count("\n", lead + len(text))  # what ``raw`` has past ``text``: not counted again
        else:
            line += raw.count("\n")
        line += newlines if bounded else 0


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
