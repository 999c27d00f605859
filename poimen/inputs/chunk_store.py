"""L0 chunks kept as byte-stable Parquet, one file per source, and read back as the loop's streams.

The build chunks each source once (``write_chunks``); the L1 loops then read
their streams from these files (``stored_stream``) instead of chunking the
source again (`mem run` does the same in a folder of its own: ``file_stream``), and the nightly rebuild re-chunks the sources and compares the
chunk shas with these files (``compare_chunks``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from poimen.inputs.chunking import iter_chunks, source_id
from poimen.domain import Chunk
from poimen.inputs.reading import DETECT, Reading
from poimen.errors import SourceError
from poimen.domain import Stream

CHUNK_DIR = "chunks"
CHUNK_SCHEMA = pa.schema([("source", pa.string()), ("position", pa.int64()), ("sha", pa.string()),
                          ("tokens", pa.int64()), ("text", pa.string())])
# The bound a file's chunks were cut at, in its schema metadata: the L1 runs reading it record it, and the rebuild
# re-chunks the source at it, whatever bound the environment names when they run (files before it have none).
BOUND_KEY = b"poimen.chunk_tokens"


def chunk_path(out_dir: Path, sid: str) -> Path:
    return Path(out_dir) / f"{sid}.parquet"


def write_chunks(path: Path, source: Path, root: Path, max_tokens: int,
                 forgotten: frozenset[str] = frozenset(), reading: Reading = DETECT) -> tuple[int, str, bool]:
    """Write one source's chunks (byte-stable Parquet), but those ``mem forget`` removed; returns rows, file sha and
    whether the bytes changed."""
    rows = [{"source": c.source, "position": c.position, "sha": c.sha, "tokens": c.tokens, "text": c.text}
            for c in _chunks(source, max_tokens, root, reading) if c.sha not in forgotten]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    schema = CHUNK_SCHEMA.with_metadata({BOUND_KEY: str(max_tokens).encode()})
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp, compression="NONE", write_statistics=False)
    sha = hashlib.sha256(tmp.read_bytes()).hexdigest()
    changed = not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha
    tmp.replace(path) if changed else tmp.unlink()
    return len(rows), sha, changed


def read_chunks(path: Path) -> list[Chunk]:
    """The chunks of one stored file; a text that no longer matches its sha raises (``Chunk`` checks it)."""
    return [Chunk(text=r["text"], source=r["source"], position=r["position"], tokens=r["tokens"], sha=r["sha"])
            for r in pq.read_table(path, schema=CHUNK_SCHEMA).to_pylist()]


def stored_stream(out_dir: Path, source: Path, root: Path) -> Stream:
    """A source as the loop's stream, read from its chunks file under ``out_dir`` (the build's `chunks`)."""
    sid = source_id(source, root)
    path = chunk_path(out_dir, sid)
    if not path.exists():
        raise SourceError(f"{source}: no stored chunks at {path} (materialize `chunks` first)")
    return file_stream(path, sid)


def file_stream(path: Path, sid: str) -> Stream:
    """The stream ``sid`` read from the chunks file at ``path``: the shas first (they name the run), texts on demand."""
    shas = tuple(pq.read_table(path, columns=["sha"]).column("sha").to_pylist())
    return Stream(sid, shas, lambda: iter(read_chunks(path)), stored_bound(path))


def stored_bound(path: Path) -> int | None:
    """The chunk bound a stored file records; None for a file written before the bound was recorded."""
    raw = (pq.read_schema(path).metadata or {}).get(BOUND_KEY)
    return int(raw) if raw else None


@dataclass(frozen=True)
class ChunkDiff:
    """The first chunk of a source whose sha differs between the stored file and a fresh chunking."""

    source: str
    position: int
    stored_sha: str
    fresh_sha: str

    def __str__(self) -> str:
        return (f"chunk {self.source}#{self.position}: stored sha {self.stored_sha[:16] or '(none)'}, "
                f"re-chunked sha {self.fresh_sha[:16] or '(none)'}")


def first_chunk_diff(out_dir: Path, fresh: dict[str, list[Chunk]]) -> tuple[int, ChunkDiff | None]:
    """Compare, source by source and chunk by chunk, a fresh chunking with the stored files: chunks equal, first diff."""
    compared = 0
    for sid, chunks in fresh.items():
        path = chunk_path(out_dir, sid)
        stored = pq.read_table(path, columns=["sha"]).column("sha").to_pylist() if path.exists() else []
        for position in range(max(len(stored), len(chunks))):
            old = stored[position] if position < len(stored) else ""
            new = chunks[position].sha if position < len(chunks) else ""
            if old != new:
                return compared, ChunkDiff(sid, position, old, new)
            compared += 1
    return compared, None


def _chunks(source: Path, max_tokens: int, root: Path, reading: Reading):
    return iter_chunks(source, max_tokens, root, reading.format_for(source_id(source, root)), reading.fields)


def chunk_sources(sources: list[Path], root: Path, max_tokens: int,
                  forgotten: frozenset[str] = frozenset(), reading: Reading = DETECT) -> dict[str, list[Chunk]]:
    """Every source chunked afresh, by source id, without forgotten chunks (a ``SourceError`` names a bad file)."""
    return {source_id(s, root): [c for c in _chunks(s, max_tokens, root, reading) if c.sha not in forgotten]
            for s in sources}
