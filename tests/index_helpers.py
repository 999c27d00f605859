"""A small real event log for the index tests: L1 over two sources, L2 over the L1 memories, two runbooks as R.

The scripted model decides from the chunk alone (never from call order), so the
runs are deterministic however the runner interleaves them.
"""

from __future__ import annotations

import shutil
from pathlib import Path


from poimen.write.core import RunRequest, run_loops
from poimen.embedding.embedders import HashEmbedder
from poimen.index import MemoryIndex, build_projections, default_db, write_manifest
from poimen.llm.client import ScriptedClient
from poimen.write.reference import ingest_reference
from poimen.testing.gate import GatePrompt, scripted_gate

FACTS = {
    "413": "Uploads failed with HTTP 413 Request Entity Too Large: the ingress body limit was 10k.",
    "proxy-body-size": "Raising nginx.ingress.kubernetes.io/proxy-body-size to 50m fixed the uploads.",
    "OOMKilled": "payments-worker pods were OOMKilled (exit code 137) after batch size 5000.",
    "batch size 500": "Setting batch size 500 mitigated the OOMKilled workers.",
}

INCIDENT_LOG = """\
2026-11-13T09:10:01Z deploy ingress chart 4.2 rolled out
2026-11-13T09:14:07Z upload-api POST /v1/files 413 Request Entity Too Large
2026-11-13T09:20:00Z on-call paged, looking at ingress annotations
2026-11-13T09:43:12Z applied proxy-body-size 50m annotation, uploads recover
2026-11-13T10:00:00Z all quiet, nothing to report
"""

WORKER_NOTES = """\
# Night of the settlement job

The nightly settlement started at 02:00 as usual.

Pods of payments-worker restarted: OOMKilled, exit code 137.

We rolled out batch size 500 at 02:36 and the restarts stopped.

Lunch was pizza.
"""

RUNBOOK = """\
# Runbook: ingress limits

If uploads fail with 413, check the proxy-body-size annotation on the ingress.

Raise it with kubectl annotate ingress upload-api nginx.ingress.kubernetes.io/proxy-body-size=50m.
"""

QUERIES = """\
queries:
  - id: root-causes
    text: "What caused each failure, and how was it fixed?"
    store: semantic
"""


def keep_facts(p: GatePrompt) -> str | None:
    """Open when the chunk names a failure in FACTS the memory lacks; the memory gains its fact line."""
    new = [fact for key, fact in FACTS.items() if key in p.chunk and fact not in p.memory]
    return "\n".join(([p.memory] if p.memory else []) + new) if new else None


gate = scripted_gate(keep_facts)


def make_log(root: Path) -> Path:
    """Write the sources, run L1 and L2 with the scripted model, ingest the runbook; returns the log root."""
    src = root / "sources"
    src.mkdir(parents=True)
    (src / "incident.log").write_text(INCIDENT_LOG)
    (src / "worker-notes.md").write_text(WORKER_NOTES)
    (root / "queries.yaml").write_text(QUERIES)
    (root / "runbook-ingress.md").write_text(RUNBOOK)
    log = root / "log"
    client = ScriptedClient([gate], repeat_last=True)
    base = dict(root=log, queries=root / "queries.yaml", chunk_tokens=32, concurrency=2)
    assert run_loops(RunRequest(sources=sorted(src.iterdir()), **base), client).ok
    assert run_loops(RunRequest(level="L2", **base), client).ok
    ingest_reference(log, [root / "runbook-ingress.md"], max_tokens=40)
    return log


def built(root: Path, template: Path, embedder=None) -> tuple[Path, Path]:
    """A private copy of the template log, built and recorded in its manifest; returns (log, db)."""
    log = root / "log"
    shutil.copytree(template, log)
    db = default_db(log)
    stats = build_projections(log, db, embedder or HashEmbedder(64))
    write_manifest(log, stats, stats.row_hashes)
    return log, db


def index_of_sources(root: Path, sources: dict[str, str], gate, query: str, chunk_tokens: int) -> MemoryIndex:
    """Each (name, text) as a source file, the gated loop over them with the scripted ``gate``, the projections built
    with the hash embedder: a small corpus that reaches the index the way a real one does."""
    src = root / "sources"
    src.mkdir()
    for name, text in sources.items():
        (src / name).write_text(text)
    log = root / "log"
    request = RunRequest(root=log, sources=sorted(src.iterdir()), query=query, chunk_tokens=chunk_tokens,
                         concurrency=2, sources_root=src)
    assert run_loops(request, ScriptedClient([gate], repeat_last=True)).ok
    db = default_db(log)
    build_projections(log, db, HashEmbedder(64))
    return MemoryIndex.open(db, HashEmbedder(64))
