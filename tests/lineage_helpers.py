"""A memory built by the offline engine from fixture sources (it copies units whole, so every line has a span and
file lines), indexed with the hash embedder: what the lineage, server and page tests walk."""

from __future__ import annotations

import shutil
from pathlib import Path

from poimen.write.core import RunRequest, run_loops
from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections, default_db, write_manifest
from poimen.llm.client import ScriptedClient
from poimen.llm.offline import respond

FIXTURE = Path(__file__).parent / "fixtures" / "incidents" / "channel.jsonl"
QUERY = "What caused the upload failures, and how were they fixed?"
DEPLOY_LOG = """\
2026-03-02T08:30:44Z deploy ingress-nginx 1.10.1 rolled out to prod-eu-1

2026-03-02T09:11:27Z upload-api POST /v1/imports 413 Request Entity Too Large
2026-03-02T09:38:55Z applied proxy-body-size 64m on the imports-api ingress, uploads recover
"""


def build(root: Path) -> tuple[Path, Path, Path]:
    """Sources under ``root/src``, an L1 run of the offline engine over them, the index; (log, db, sources)."""
    src = root / "src"
    src.mkdir(parents=True)
    shutil.copy(FIXTURE, src / FIXTURE.name)
    (src / "deploy.log").write_text(DEPLOY_LOG)
    log = root / "log"
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    result = run_loops(RunRequest(root=log, sources=sorted(src.iterdir()), query=QUERY, chunk_tokens=300,
                                  concurrency=1), client)
    assert result.ok, result
    db = default_db(log)
    stats = build_projections(log, db, HashEmbedder())
    write_manifest(log, stats, stats.row_hashes)
    return log, db, src
