"""How sources are read when detection is not to decide: one format for all, a format per file, JSON fields.

``mem run --format chat --fields text=body``, or the Dagster corpus resource's ``format``, ``formats`` (a file
name or glob over the stream id -> a format) and ``fields``. The choice is noted beside a local log
(``sources.formats``), as the sources root is, so `mem show` reads a file the way its chunks were cut.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from poimen.inputs.readers import Fields, format_named
from poimen.settings import local_dir

FORMATS_FILE = "sources.formats"  # beside a local log: "stream<TAB>format<TAB>fields", one stream a line


@dataclass(frozen=True)
class Reading:
    format: str | None = None
    per_file: tuple[tuple[str, str], ...] = ()  # (file name or glob over the stream id, format)
    fields: str | None = None

    def __post_init__(self) -> None:
        """Names are checked when given, not when the first file is read: a typo is one line before any work."""
        for name in [self.format, *(f for _, f in self.per_file)]:
            if name:
                format_named(name)
        Fields.parse(self.fields)

    @property
    def chosen(self) -> bool:
        return bool(self.format or self.per_file or self.fields)

    def format_for(self, stream: str) -> str | None:
        """The format named for a stream id (its pattern, else the one for all), None to detect it."""
        name = stream.rsplit("/", 1)[-1]
        return next((f for pat, f in self.per_file if fnmatch.fnmatchcase(stream, pat) or fnmatch.fnmatchcase(name, pat)),
                    self.format)


DETECT = Reading()


def remember_reading(log_root: str | Path, stream: str, reading: Reading) -> None:
    """Note a stream's chosen format beside a local log (outside the hash chain, like ``sources.roots``)."""
    folder = local_dir(log_root)
    if not reading.chosen or folder is None:
        return
    path = folder / FORMATS_FILE
    line = "\t".join((stream, reading.format_for(stream) or "", reading.fields or ""))
    known = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    if line not in known:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def noted_readings(log_root: str | Path) -> dict[str, tuple[str | None, str | None]]:
    """stream -> (format, fields) as noted beside a log, the last note of a stream winning."""
    folder = local_dir(log_root)
    path = folder / FORMATS_FILE if folder is not None else None
    out: dict[str, tuple[str | None, str | None]] = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path is not None and path.is_file() else []:
        stream, _, rest = line.partition("\t")
        fmt, _, fields = rest.partition("\t")
        out[stream] = (fmt or None, fields or None)
    return out
