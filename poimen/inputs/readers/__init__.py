"""Readers: a file read as records (``poimen.inputs.records.Record``), each with the file lines it spans.

``formats.FORMATS`` is the one table of what poimen reads: a format's name, its reader, what joins its records in a
chunk, and the file suffixes it is the default for. ``read_records`` picks the format (``--format`` if given,
else ``detect.detect``: by content first, then by suffix) and reads. Nothing registers itself on import.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.readers.detect import detect
from poimen.inputs.readers.fields import Fields
from poimen.inputs.readers.formats import (FORMATS, SUFFIXES, Format, ReadOptions, UnknownFormat, format_named,
                                           known_formats)
from poimen.inputs.records import Record

__all__ = ["FORMATS", "SUFFIXES", "Fields", "Format", "ReadOptions", "UnknownFormat", "format_named", "format_of",
           "known_formats", "read_records"]


def format_of(path: Path, name: str | None = None) -> Format:
    """The format named (``--format``), else the one the file's content and suffix say."""
    return format_named(name or detect(path), path)


def read_records(path: Path, name: str | None = None, options: ReadOptions | None = None) -> Iterator[Record]:
    return format_of(path, name).read(path, options or ReadOptions())
