"""L0 evidence: each source cut into chunks once per build and kept as one Parquet file per source."""


import dagster as dg

from assets.shards import DEFAULT_SHARDS, fan_out, shard_body, shard_sources
from poimen.inputs.chunk_store import CHUNK_DIR, chunk_path, write_chunks
from poimen.inputs.chunking import source_id
from poimen.domain import sha256_json
from poimen.errors import SourceError
from poimen.log.forgotten import forgotten
from resources import CorpusResource, EventLogResource


@shard_body("corpus", "event_log")
def chunk_shard(context: dg.OpExecutionContext, shard: int, shards: int, corpus: CorpusResource,
                event_log: EventLogResource) -> dict:
    """One shard's sources cut into chunks, one Parquet file each (unchanged sources keep their file)."""
    files: dict[str, str] = {}
    rows = changed = 0
    errors: list[str] = []
    gone = forgotten(event_log.log())  # what `mem forget` removed never comes back from a source left in place
    for source in shard_sources(corpus, shard, shards):
        try:
            sid = source_id(source, corpus.sources_dir)
            if sid in gone.streams:
                continue
            n, sha, new = write_chunks(chunk_path(event_log.path / CHUNK_DIR, sid), source, corpus.sources_dir,
                                       corpus.chunk_bound, gone.shas, corpus.reading)
        except SourceError as exc:
            errors.append(str(exc))
            context.log.warning(str(exc))
            continue
        files[sid], rows, changed = sha, rows + n, changed + new
    return {"files": files, "rows": rows, "changed": changed, "errors": errors}


@dg.op(description="Every shard's chunk files together: drop the files of sources that are gone, report the whole.")
def chunks_collect(shards: list[dict], corpus: CorpusResource, event_log: EventLogResource) -> dg.Output:
    out_dir = event_log.path / CHUNK_DIR
    files = {sid: sha for s in shards for sid, sha in s["files"].items()}
    errors = [e for s in shards for e in s["errors"]]
    for stale in out_dir.rglob("*.parquet") if out_dir.exists() else []:
        if stale.relative_to(out_dir).as_posix()[: -len(".parquet")] not in files:
            stale.unlink()  # the source is gone (or unreadable now); its chunks are no longer evidence anyone can read
    content_hash = sha256_json(sorted(files.items()))
    return dg.Output(content_hash, metadata={
        "rows": sum(s["rows"] for s in shards), "sources": len(files), "sources_changed": sum(s["changed"] for s in shards),
        "shards": len(shards), "source_errors": dg.MetadataValue.md("\n".join(f"- {e}" for e in errors) or "none"),
        "chunk_tokens": corpus.chunk_bound, "path": dg.MetadataValue.path(str(out_dir)), "content_hash": content_hash,
    })


def chunks_asset(shards: int = DEFAULT_SHARDS) -> dg.AssetsDefinition:
    @dg.graph_asset(name="chunks", group_name="evidence", kinds={"parquet"})
    def chunks():
        """L0 evidence chunks (token-bounded, sentence-aware), one Parquet file per source under `<log root>/chunks/`,
        written shard by shard; the L1 loops read their streams from these files."""
        return fan_out("chunks", shards, chunk_shard, chunks_collect)

    return chunks


chunks = chunks_asset()
