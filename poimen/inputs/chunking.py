"""Stream a source into token-bounded, sentence-aware L0 chunks.

A source is read by its format's reader (``poimen.inputs.readers``: paragraphs
for text and Markdown, log lines with their traces, chat messages, tickets and
comments, shell commands and output), streamed so a large file (or a 200 MB
single line) is never held whole. Its records are the *units*, packed into
chunks under ``max_tokens`` and joined by the format's separator; a unit that is
too big on its own is split at sentence boundaries, then at whitespace, and only
as a last resort inside a run of characters with no whitespace at all.

Token counts are exact and each unit is encoded once: tiktoken's pre-tokenizer
never merges across the end of a separator followed by non-space text, so
``tokens(a + sep + b) == tokens(a + sep) + tokens(b)`` for stripped units. Only
the last unit of each chunk is encoded a second time, without its separator.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from poimen.domain import Chunk
from poimen.errors import ConfigError, SourceError
from poimen.inputs.readers import SUFFIXES as READER_SUFFIXES, Fields, ReadOptions, format_of
from poimen.inputs.records import Record
from poimen.inputs.stream import blocks as _blocks, split_stream as _split_stream  # noqa: F401 (tests read them here)
from poimen.text.tokens import count_tokens

DEFAULT_MAX_TOKENS = 5000
# The suffixes a folder of sources is scanned for, each with the format it reads as unless its content says
# otherwise (``poimen.inputs.readers.detect``).
SUFFIXES = READER_SUFFIXES
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def source_id(path: Path, root: Path | None = None) -> str:
    """A stable name for a source (its stream id): its path relative to the sources root.

    With no root, a file is its own folder's only source: its name. A root that is the filesystem's own
    (files that share no folder) gives absolute paths. A source outside an explicit root is refused, so a
    symlink cannot reach past the folder a pipeline was pointed at.
    """
    if root is not None:
        root = Path(root).resolve()
        try:
            rel = path.resolve(strict=path.is_symlink()).relative_to(root).as_posix()
        except (RuntimeError, OSError) as exc:
            raise SourceError(f"{path}: broken or looping symlink") from exc
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


def check_source(path: Path, root: Path | None = None, fmt: str | None = None) -> None:
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
    format_of(path, fmt)  # an unknown format: one line naming the formats poimen reads
    if root is not None:
        source_id(path, root)
    if path.stat().st_size == 0:
        raise SourceError(f"{path}: empty file")


def _long_word(word: str, max_tokens: int) -> Iterator[str]:
    """A word over the bound in character windows of ``max_tokens // 4`` (no character costs more than 4
    tokens), the rest yielded last once it fits.

    The first window whose rest fits is found by bisection over the rests short enough to fit at all (a token
    is at least a byte: a rest of ``max_tokens`` bytes fits; one over ``4 * max_tokens`` characters is cut
    unread): counting every rest in turn cost the word's length squared. Tokens of a rest fall as it shortens,
    so this is the first window the old scan found."""
    step = max(1, max_tokens // 4)

    def fits(k: int) -> bool:
        rest = word[k * step:]
        return len(rest.encode()) <= max_tokens or (len(rest) <= 4 * max_tokens and count_tokens(rest) <= max_tokens)

    lo = max(0, -(-(len(word) - 4 * max_tokens) // step))  # the first window whose rest is short enough to count
    hi = -(-len(word) // step)  # an empty rest fits
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    for k in range(lo):
        yield word[k * step:(k + 1) * step]
    yield word[lo * step:]


def _words(sentence: str, max_tokens: int) -> Iterator[str]:
    """A sentence over the bound packed greedily into pieces of whole words.

    Each word is counted once, with the space before it: tiktoken's pre-tokenizer starts a piece at a space that
    follows a non-space, so a word adds ``tokens(" " + word)`` to what is before it. Counting the growing
    candidate at each word instead cost the square of the piece's length (150 s a megabyte). Where runs of
    spaces make the sum an estimate, each piece is counted whole before it goes out, and halved if over.
    """
    current: list[str] = []
    used = 0
    for word in sentence.split(" "):
        cost = count_tokens(" " + word) if current else count_tokens(word)
        if current and used + cost > max_tokens:
            yield from _exact(" ".join(current), max_tokens)
            current, used = [], 0
            cost = count_tokens(word)
        if cost > max_tokens:
            *heads, word = _long_word(word, max_tokens)
            yield from heads
            cost = count_tokens(word)
        current.append(word)
        used += cost
    if current:
        yield from _exact(" ".join(current), max_tokens)


def _exact(piece: str, max_tokens: int) -> Iterator[str]:
    if count_tokens(piece) <= max_tokens or " " not in piece.strip():
        yield piece
        return
    words = piece.split(" ")
    half = len(words) // 2
    yield from _exact(" ".join(words[:half]), max_tokens)
    yield from _exact(" ".join(words[half:]), max_tokens)


def _pieces(text: str, max_tokens: int) -> Iterator[str]:
    """Split an oversized unit at sentences, then words, then (no whitespace at all) characters."""
    for sentence in _SENTENCE_END.split(text):
        if count_tokens(sentence) <= max_tokens:
            yield sentence
        else:
            yield from (p for p in _words(sentence, max_tokens) if p)


def read_options(max_tokens: int, fields: str | Fields | None = None) -> ReadOptions:
    """How a source is read for a chunk bound: pieces with no boundary are cut past 16 characters a token."""
    parsed = fields if isinstance(fields, Fields) else Fields.parse(fields)
    return ReadOptions(max_chars=max(4096, max_tokens * 16), fields=parsed)


def records(path: Path, max_tokens: int = DEFAULT_MAX_TOKENS, fmt: str | None = None,
            fields: str | Fields | None = None) -> Iterator[Record]:
    """The records of a source as the chunker reads them: its format's reader, blank records dropped."""
    for record in format_of(path, fmt).read(path, read_options(max_tokens, fields)):
        if record.text.strip():
            yield record


def iter_chunks(path: str | Path, max_tokens: int = DEFAULT_MAX_TOKENS, root: Path | None = None,
                fmt: str | None = None, fields: str | Fields | None = None) -> Iterator[Chunk]:
    """Yield the L0 chunks of one source, in order, each at most ``max_tokens`` tokens.

    Its units are the records its reader gives (``fmt`` names the format, else it is detected; ``fields``
    names a JSON record's text, time, author and thread fields), joined by the format's separator."""
    if max_tokens < 16:
        raise ConfigError(f"max_tokens={max_tokens}: a chunk bound under 16 tokens cannot hold a sentence")
    path = Path(path)
    check_source(path, root, fmt)
    sid = source_id(path, root)
    sep = format_of(path, fmt).separator
    sep_tokens = count_tokens(sep)
    texts: list[str] = []  # the units of the chunk being packed
    total = 0  # their tokens, each counted with the separator after it
    last = 0  # the last unit's share of ``total``
    position = 0

    def flush() -> Chunk:
        nonlocal texts, total, position
        exact = total - last + count_tokens(texts[-1])
        chunk = Chunk(text=sep.join(texts), source=sid, position=position, tokens=exact)
        texts, total, position = [], 0, position + 1
        return chunk

    for record in records(path, max_tokens, fmt, fields):
        text = record.text.strip()
        tokens = count_tokens(text + sep)
        # (text, tokens with the separator) pairs: the whole unit, or the pieces of one too big to stand alone.
        units = ((text, tokens),) if tokens <= max_tokens else \
            [(p, count_tokens(p + sep)) for p in _pieces(text, max_tokens - sep_tokens)]
        for text, tokens in units:
            if texts and total + tokens > max_tokens:
                yield flush()
            texts.append(text)
            total += tokens
            last = tokens
    if texts:
        yield flush()
    elif position == 0:
        raise SourceError(f"{path}: no text (only whitespace)")
