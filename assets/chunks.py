"""L0 evidence: each source cut into chunks once per build and kept as one Parquet file per source."""


import dagster as dg

from poimen.chunk_store import CHUNK_DIR, chunk_path, write_chunks
from poimen.chunking import source_id
from poimen.domain import sha256_json
from poimen.errors import SourceError
from poimen.log.forgotten import forgotten
from resources import WRITER_POOL, CorpusResource, EventLogResource, writer_step


@dg.asset(group_name="evidence", kinds={"parquet"}, pool=WRITER_POOL)
@writer_step
def chunks(context: dg.AssetExecutionContext, corpus: CorpusResource, event_log: EventLogResource) -> dg.MaterializeResult:
    """L0 evidence chunks (token-bounded, sentence-aware), one Parquet file per source under `<log root>/chunks/`;
    the L1 loops read their streams from these files."""
    out_dir = event_log.path / CHUNK_DIR
    files: dict[str, str] = {}
    rows = changed = 0
    errors: list[str] = []
    gone = forgotten(event_log.log())  # what `mem forget` removed never comes back from a source left in place
    for source in corpus.source_files():
        try:
            sid = source_id(source, corpus.sources_dir)
            if sid in gone.streams:
                continue
            n, sha, new = write_chunks(chunk_path(out_dir, sid), source, corpus.sources_dir, corpus.chunk_bound,
                                       gone.shas)
        except SourceError as exc:
            errors.append(str(exc))
            context.log.warning(str(exc))
            continue
        files[sid], rows, changed = sha, rows + n, changed + new
    for stale in out_dir.rglob("*.parquet") if out_dir.exists() else []:
        if stale.relative_to(out_dir).as_posix()[: -len(".parquet")] not in files:
            stale.unlink()  # the source is gone (or unreadable now); its chunks are no longer evidence anyone can read
    return dg.MaterializeResult(metadata={
        "rows": rows, "sources": len(files), "sources_changed": changed,
        "source_errors": dg.MetadataValue.md("\n".join(f"- {e}" for e in errors) or "none"),
        "chunk_tokens": corpus.chunk_bound, "path": dg.MetadataValue.path(str(out_dir)),
        "content_hash": sha256_json(sorted(files.items())),
    })
