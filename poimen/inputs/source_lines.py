"""Where a unit of a chunk sits in its source file: the file lines it spans.

The log records chunks, not file offsets: a chunk is its units joined by the
format's separator (blank lines dropped, a chat message rendered
``[ts] speaker: text``), and the offline engine's memory lines are units of a
chunk. So a unit is found again by reading the file the way the chunker does
(its reader's records, ``poimen.inputs.chunking.records``) with whitespace collapsed,
and searching for the unit's n-th occurrence, n counted in the chunks before
it. Each record maps back through its line span: a record written as its file
lines (a paragraph, a log line and its trace) line by line, any other (a JSON
object, a CSV row) to all the lines it occupies. A source that
is gone, or edited since, leaves the line numbers unknown (0), never wrong
ones from another file: a unit that is not found is not guessed.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from poimen.inputs.chunking import records
from poimen.errors import PoimenError  # the one definition of how a source is read
from poimen.settings import default_root, local_dir, sources as build_sources


@dataclass(frozen=True)
class SourceRef:
    """A stretch of a source file: the stream id the log records, the file found for it, its lines (1-based)."""

    stream: str
    path: str = ""  # '' when no file was found for the stream
    first_line: int = 0  # 0: unknown
    last_line: int = 0

    @property
    def found(self) -> bool:
        return self.first_line > 0

    def label(self) -> str:
        name = self.path or self.stream
        if not self.found:
            return f"{name} (line unknown: {'source not found' if not self.path else 'text not in the file'})"
        lines = f"{self.first_line}" if self.first_line == self.last_line else f"{self.first_line}-{self.last_line}"
        return f"{name}:{lines}"


def squash(text: str) -> str:
    return " ".join(text.split())


class SourceText:
    """One source file read as the chunker reads it, whitespace collapsed, with the file line of each character."""

    def __init__(self, path: Path, fmt: str | None = None, fields: str | None = None):
        self.path = path
        parts: list[str] = []
        self._starts: list[int] = []  # offset in ``text`` where each segment's text begins
        self._lines: list[tuple[int, int]] = []  # the file lines (first, last) of each segment
        at = 0
        for record in records(path, fmt=fmt, fields=fields):
            lines = record.text.split("\n")
            verbatim = len(lines) == record.line_end - record.line_start + 1
            spans = ([(squash(x), record.line_start + i, record.line_start + i) for i, x in enumerate(lines)] if verbatim
                     else [(squash(record.text), record.line_start, record.line_end)])
            for line, first, last in spans:
                if not line:
                    continue
                self._starts.append(at)
                self._lines.append((first, last))
                parts.append(line)
                at += len(line) + 1
        self.text = " ".join(parts)

    def line_at(self, offset: int) -> int:
        """The first file line of what stands at ``offset``."""
        return self._lines[bisect.bisect_right(self._starts, offset) - 1][0]

    def last_line_at(self, offset: int) -> int:
        """The last file line of what stands at ``offset`` (a JSON object's closing line)."""
        return self._lines[bisect.bisect_right(self._starts, offset) - 1][1]

    def find(self, unit: str, nth: int = 0, after: int = 0) -> tuple[int, int] | None:
        """The (offset, end) in ``text`` of the ``nth`` occurrence (0-based) of ``unit`` at or after ``after``."""
        needle = squash(unit)
        if not needle:
            return None
        at = after - 1
        for _ in range(nth + 1):
            at = self.text.find(needle, at + 1)
            if at < 0:
                return None
        return at, at + len(needle)


class SourceFinder:
    """Finds a stream's file under a few roots and locates units in it, reading each file once."""

    def __init__(self, roots: list[Path] | None = None,
                 readings: dict[str, tuple[str | None, str | None]] | None = None):
        self.roots = [Path(r) for r in (roots if roots is not None else default_roots())]
        self.readings = readings if readings is not None else noted_readings_of()  # stream -> (format, fields)
        self._texts: dict[str, SourceText | None] = {}

    def path_of(self, stream: str) -> Path | None:
        if not stream:
            return None
        candidate = Path(stream)
        options = [candidate] if candidate.is_absolute() else [root / candidate for root in self.roots]
        return next((p for p in options if p.is_file()), None)

    def text_of(self, stream: str) -> SourceText | None:
        if stream not in self._texts:
            path = self.path_of(stream)
            try:
                fmt, fields = self.readings.get(stream, (None, None))
                self._texts[stream] = SourceText(path, fmt, fields) if path is not None else None
            except (OSError, ValueError, PoimenError):
                self._texts[stream] = None  # unreadable now (or no longer readable as a source): the lines stay unknown
        return self._texts[stream]

    def locate(self, stream: str, first_unit: str, last_unit: str | None = None, nth: int = 0) -> SourceRef:
        """The file lines from the ``nth`` occurrence of ``first_unit`` to the end of ``last_unit`` after it."""
        text = self.text_of(stream)
        if text is None:
            return SourceRef(stream)
        first = text.find(first_unit, nth)
        if first is None:
            return SourceRef(stream, str(text.path))
        last = text.find(last_unit, 0, first[0]) if last_unit is not None else None
        end = max(first[1], last[1]) if last is not None else first[1]
        return SourceRef(stream, str(text.path), text.line_at(first[0]), text.last_line_at(end - 1))


ROOTS_FILE = "sources.roots"  # beside a local log: the sources roots its runs read, one absolute path per line


def remember_root(log_root: str | Path, root: Path | None) -> None:
    """Note ``root`` (the folder stream ids are relative to) beside a local log, so `mem show` finds the files a
    `mem run` read from anywhere. A hint for finding files, not log data: it is outside the hash chain, and a
    root that is gone only leaves line numbers unknown. Remote logs (``s3://``) keep no hint."""
    folder = local_dir(log_root)
    if root is None or folder is None:
        return
    path = folder / ROOTS_FILE
    line = str(Path(root).resolve())
    known = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    if line not in known:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def default_roots(log_root: str | Path | None = None) -> list[Path]:
    """Where a stream id is looked up: ``$POIMEN_SOURCES`` (the folder the build read), the roots `mem run` and
    `mem reference` noted beside the log (newest first), then the working directory."""
    folder = local_dir(log_root if log_root is not None else default_root())
    hint = folder / ROOTS_FILE if folder is not None else None
    noted = hint.read_text(encoding="utf-8").splitlines()[::-1] if hint is not None and hint.is_file() else []
    built = build_sources()
    return ([built] if built else []) + [Path(r) for r in noted if r.strip()] + [Path.cwd()]


def noted_readings_of(log_root: str | Path | None = None) -> dict[str, tuple[str | None, str | None]]:
    """The formats `mem run --format` chose, as noted beside the log (``poimen.inputs.reading``)."""
    from poimen.inputs.reading import noted_readings

    return noted_readings(log_root if log_root is not None else default_root())


def occurrences_before(unit: str, earlier_chunks: list[str], chunk: str, start: int) -> int:
    """How many times ``unit`` occurs before its place: in the earlier chunks of the stream, and in its own chunk
    before ``start`` (the unit's character offset in the chunk; -1 when unknown counts none of the chunk)."""
    needle = squash(unit)
    if not needle:
        return 0
    return sum(squash(c).count(needle) for c in earlier_chunks) + (squash(chunk[:start]).count(needle) if start > 0 else 0)
