"""Stream a source into token-bounded, sentence-aware L0 chunks.

A source is read in fixed-size blocks through a strict incremental UTF-8
decoder, so a large file (or a 200 MB single line) is never held whole. The
text is cut into *units* (paragraphs for .md/.txt, lines for .log, records for
.jsonl), units are packed into chunks under ``max_tokens``, and a unit that is
too big on its own is split at sentence boundaries, then at whitespace, and only
as a last resort inside a run of characters with no whitespace at all.

Token counts are exact and each unit is encoded once: tiktoken's pre-tokenizer
never merges across the end of a separator followed by non-space text, so
``tokens(a + sep + b) == tokens(a + sep) + tokens(b)`` for stripped units. Only
the last unit of each chunk is encoded a second time, without its separator.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from poimen.domain import Chunk
from poimen.errors import ConfigError, SourceError
from poimen.text.tokens import count_tokens

DEFAULT_MAX_TOKENS = 5000
SUFFIXES = {".md": "\n\n", ".txt": "\n\n", ".log": "\n", ".jsonl": "\n"}
_BLOCK = 1 << 16
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_MAX_JSON_DEPTH = 64
NUL = b"\x00"


@dataclass(frozen=True)
class _Unit:
    text: str
    tokens_with_sep: int


def source_id(path: Path, root: Path | None = None) -> str:
    """A stable name for a source (its stream id): its path relative to the sources root.

    With no root, a file is its own folder's only source: its name. A root that is the filesystem's own
    (files that share no folder) gives absolute paths. A source outside an explicit root is refused, so a
    symlink cannot reach past the folder a pipeline was pointed at.
    """
    if root is not None:
        root = Path(root).resolve()
        try:
            rel = path.resolve().relative_to(root).as_posix()
        except ValueError as exc:
            raise SourceError(f"{path}: outside the sources root {root}") from exc
        return "/" + rel if root == Path(root.anchor) else rel
    return path.name


def sources_root(paths: Sequence[str | Path]) -> Path | None:
    """The default sources root: the deepest folder all the given files share (resolved), or None for none.

    Files of one folder keep their bare names (the stream ids logs written before path ids hold), and
    ``a/app.log`` and ``b/app.log`` passed together stay two streams. Only regular files count: anything
    else (a folder, a missing file, a symlink loop) is refused by ``check_source``, naming it.
    """
    folders = []
    for p in paths:
        try:
            if Path(p).is_file():
                folders.append(str(Path(p).resolve().parent))
        except (OSError, RuntimeError):
            continue
    return Path(os.path.commonpath(folders)) if folders else None


def check_source(path: Path, root: Path | None = None) -> None:
    """Fail early, with one line naming the file, for anything that cannot be a text source."""
    if path.is_symlink():
        try:
            path.resolve(strict=True)
        except (RuntimeError, OSError) as exc:
            raise SourceError(f"{path}: broken or looping symlink") from exc
    if not path.exists():
        raise SourceError(f"{path}: no such file")
    if not path.is_file():
        raise SourceError(f"{path}: not a regular file")
    if path.suffix.lower() not in SUFFIXES:
        raise SourceError(f"{path}: unsupported type {path.suffix or '(none)'}; expected one of {', '.join(sorted(SUFFIXES))}")
    if root is not None:
        source_id(path, root)
    if path.stat().st_size == 0:
        raise SourceError(f"{path}: empty file")


def _blocks(path: Path) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    offset = 0
    with path.open("rb") as fh:
        while True:
            raw = fh.read(_BLOCK)
            if b"\x00" in raw:
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


def _split_stream(blocks: Iterator[str], boundary: str, max_chars: int) -> Iterator[str]:
    """Split a stream of text blocks at ``boundary``; pieces longer than ``max_chars`` are cut at whitespace."""
    buf = ""
    for block in blocks:
        buf += block
        while True:
            cut = buf.find(boundary)
            if cut >= 0 and cut <= max_chars:
                yield buf[:cut]
                buf = buf[cut + len(boundary):]
                continue
            if len(buf) > max_chars:
                space = max(buf.rfind(" ", 0, max_chars), buf.rfind("\n", 0, max_chars))
                cut = space if space > max_chars // 2 else max_chars
                yield buf[:cut]
                buf = buf[cut:]
                continue
            break
    if buf:
        yield buf


def _json_depth_ok(line: str) -> bool:
    depth = deepest = 0
    in_string = escaped = False
    for ch in line:
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
            deepest = max(deepest, depth)
            if deepest > _MAX_JSON_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def _record_text(path: Path, lineno: int, line: str) -> str:
    """A JSON-lines record's text: its ``text`` field (prefixed by a speaker if any) or the whole line."""
    if not _json_depth_ok(line):
        raise SourceError(f"{path}:{lineno}: JSON nested deeper than {_MAX_JSON_DEPTH} levels")
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if isinstance(record, dict) and isinstance(record.get("text"), str):
        who = next((record[k] for k in ("speaker", "user", "author") if isinstance(record.get(k), str)), None)
        when = next((record[k] for k in ("ts", "time", "timestamp", "date") if isinstance(record.get(k), str)), None)
        prefix = " ".join(p for p in (when and f"[{when}]", who and f"{who}:") if p)
        return f"{prefix} {record['text']}".strip() if prefix else record["text"]
    return line


def _pieces(text: str, max_tokens: int) -> Iterator[str]:
    """Split an oversized unit at sentences, then words, then (no whitespace at all) characters."""
    for sentence in _SENTENCE_END.split(text):
        if count_tokens(sentence) <= max_tokens:
            yield sentence
            continue
        words, current = sentence.split(" "), ""
        for word in words:
            candidate = f"{current} {word}" if current else word
            if count_tokens(candidate) <= max_tokens:
                current = candidate
                continue
            if current:
                yield current
            # A single word longer than the bound: a character window of max_tokens // 4
            # can never exceed max_tokens tokens (no character costs more than 4).
            step = max(1, max_tokens // 4)
            while count_tokens(word) > max_tokens:
                yield word[:step]
                word = word[step:]
            current = word
        if current:
            yield current


def _units(path: Path, max_tokens: int) -> Iterator[str]:
    suffix = path.suffix.lower()
    sep = SUFFIXES[suffix]
    max_chars = max(4096, max_tokens * 16)
    for lineno, raw in enumerate(_split_stream(_blocks(path), sep, max_chars), start=1):
        text = raw.strip()
        if not text:
            continue
        if suffix == ".jsonl":
            text = _record_text(path, lineno, text).strip()
            if not text:
                continue
        yield text


def iter_chunks(path: str | Path, max_tokens: int = DEFAULT_MAX_TOKENS, root: Path | None = None) -> Iterator[Chunk]:
    """Yield the L0 chunks of one source, in order, each at most ``max_tokens`` tokens."""
    if max_tokens < 16:
        raise ConfigError(f"max_tokens={max_tokens}: a chunk bound under 16 tokens cannot hold a sentence")
    path = Path(path)
    check_source(path, root)
    sid = source_id(path, root)
    sep = SUFFIXES[path.suffix.lower()]
    sep_tokens = count_tokens(sep)
    units: list[_Unit] = []
    total = 0
    position = 0

    def flush() -> Chunk:
        nonlocal units, total, position
        last = units[-1]
        exact = sum(u.tokens_with_sep for u in units[:-1]) + count_tokens(last.text)
        chunk = Chunk(text=sep.join(u.text for u in units), source=sid, position=position, tokens=exact)
        units, total, position = [], 0, position + 1
        return chunk

    for text in _units(path, max_tokens):
        whole = _Unit(text, count_tokens(text + sep))
        if whole.tokens_with_sep <= max_tokens:
            candidates = [whole]
        else:
            candidates = [_Unit(p, count_tokens(p + sep)) for p in _pieces(text, max_tokens - sep_tokens)]
        for unit in candidates:
            if units and total + unit.tokens_with_sep > max_tokens:
                yield flush()
            units.append(unit)
            total += unit.tokens_with_sep
    if units:
        yield flush()
    elif position == 0:
        raise SourceError(f"{path}: no text (only whitespace)")
