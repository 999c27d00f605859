"""L0 evidence: each source cut into chunks and kept as one Parquet file per source."""


import hashlib
import os
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from poimen.chunking import iter_chunks, source_id
from poimen.domain import sha256_json
from poimen.errors import SourceError
from resources import CorpusResource, EventLogResource

CHUNK_SCHEMA = pa.schema([("source", pa.string()), ("position", pa.int64()), ("sha", pa.string()),
                          ("tokens", pa.int64()), ("text", pa.string())])


def write_chunks(path: Path, source: Path, root: Path, max_tokens: int) -> tuple[int, str, bool]:
    """Write one source's chunks (byte-stable Parquet); returns rows, file sha and whether the bytes changed."""
    rows = [{"source": c.source, "position": c.position, "sha": c.sha, "tokens": c.tokens, "text": c.text}
            for c in iter_chunks(source, max_tokens, root)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=CHUNK_SCHEMA), tmp, compression="NONE", write_statistics=False)
    sha = hashlib.sha256(tmp.read_bytes()).hexdigest()
    changed = not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha
    tmp.replace(path) if changed else tmp.unlink()
    return len(rows), sha, changed


@dg.asset(group_name="evidence", kinds={"parquet"})
def chunks(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource) -> dg.MaterializeResult:
    """L0 evidence chunks (token-bounded, sentence-aware), one Parquet file per source under `<log root>/chunks/`."""
    out_dir = event_log.path / "chunks"
    files: dict[str, str] = {}
    rows = changed = 0
    errors: list[str] = []
    for source in corpus.source_files():
        try:
            sid = source_id(source, corpus.sources_dir)
            n, sha, new = write_chunks(out_dir / f"{sid}.parquet", source, corpus.sources_dir, corpus.chunk_tokens)
        except SourceError as exc:
            errors.append(str(exc))
            context.log.warning(str(exc))
            continue
        files[sid], rows, changed = sha, rows + n, changed + new
    for stale in out_dir.rglob("*.parquet") if out_dir.exists() else []:
        if stale.relative_to(out_dir).as_posix()[: -len(".parquet")] not in files:
            stale.unlink()  # the source is gone; its chunks are no longer evidence anyone can read
    return dg.MaterializeResult(metadata={
        "rows": rows, "sources": len(files), "sources_changed": changed,
        "source_errors": dg.MetadataValue.md("\n".join(f"- {e}" for e in errors) or "none"),
        "chunk_tokens": corpus.chunk_tokens, "path": dg.MetadataValue.path(str(out_dir)),
        "content_hash": sha256_json(sorted(files.items())),
    })
