"""Plain text: paragraphs, a blank line apart (the chunker's reading of .txt since the first release)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces


def read(path: Path, options) -> Iterator[Record]:
    for p in pieces(path, "\n\n", options.max_chars):
        yield Record(p.text, p.line_start, p.line_end, kind="paragraph")
