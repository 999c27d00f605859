"""A log with everything forgetting must reach: two sources (L0, L1, L2, symptoms), reference docs, typed stores of
three namespaces (one fed by the pipeline), chunk files, model-reply and embedding caches, unfinished journals, the
DuckDB index with its manifest and the typed-store database."""

from __future__ import annotations

import asyncio
from pathlib import Path
from unittest import mock

import numpy as np

from poimen.agent.pipeline import import_pipeline
from poimen.agent.projection import default_db as stores_db, rebuild as rebuild_stores
from poimen.inputs.chunk_store import chunk_path, write_chunks
from poimen.write.core import RunRequest, run_loops
from poimen.domain import EventKind, sha256_text
from poimen.embedding.embedders import EmbeddingCache, HashEmbedder
from poimen.index import build_projections, default_db, write_manifest
from poimen.llm.client import CachingClient, ScriptedClient
from poimen.llm.offline import respond
from poimen.log import payloads as P
from poimen.log.events import SCHEME, EventDraft
from poimen.log.store import EventLog
from poimen.write.reference import ingest_reference
from poimen.write.symptoms import project_log
from poimen.testing.gate import GatePrompt, scripted_gate
from typed_helpers import memory

PAYROLL = """\
Payroll export for March: Dana Kowalski earns 7300 EUR gross per month.
The payroll exporter failed with HTTP 500 Internal Server Error at 04:10.
Fixed by rotating the SFTP key of the payroll-archive bucket.
"""
WORKER = """\
The nightly settlement started at 02:00 as usual on the batch cluster.
Pods of payments-worker restarted: OOMKilled, exit code 137.
We rolled out batch size 500 at 02:36 and the restarts stopped.
"""
RUNBOOK = "# Runbook: restarts\n\nWhen payments-worker is OOMKilled, lower the settlement batch size first.\n"
QUERIES = 'queries:\n  - id: failures\n    text: "What failed, and how was it fixed?"\n    store: semantic\n'
DANA = ["Hi, I'm Dana and I prefer email contact at dana.k@example.org.", "Dana's daughter starts school in Gdansk."]
ERIK = ["Hi, I'm Erik and I prefer phone calls after lunch.", "Erik manages the Rotterdam returns desk."]
KEYS = ("failed", "Fixed", "OOMKilled", "batch size")


def keep_lines(p: GatePrompt) -> str | None:
    """The memory gains, verbatim, each chunk line about a failure or a fix (as the offline engine copies units)."""
    new = [line for line in p.chunk.splitlines() if any(k in line for k in KEYS) and line not in p.memory]
    return "\n".join(([p.memory] if p.memory else []) + new) if new else None


class CachedHash:
    """The hash embedder behind an on-disk embedding cache, noting which text each cached vector is of."""

    def __init__(self, root: Path, texts: dict[str, str]):
        self.inner = HashEmbedder(64)
        self.model_id, self.dim = self.inner.model_id, self.inner.dim
        self.cache = EmbeddingCache(root / "cache" / "embeddings", self.model_id)
        self.texts = texts

    def embed(self, texts):
        vectors = self.inner.embed(texts)
        for t, v in zip(texts, vectors):
            self.texts[sha256_text(t)] = t
            self.cache.put(sha256_text(t), np.asarray(v))
        return vectors


def unfinished(log: EventLog, run_id: str, stream: str, text: str) -> None:
    """A journal of a run killed after its first turn."""
    with log.writer():
        journal = log.open_run(run_id)
        journal.append([EventDraft(kind=EventKind.RUN_START, level="L1", attrs=P.RunStart(
            query_id="failures", stream_id=stream, chunks=1).to_attrs())])
        journal.append([EventDraft(kind=EventKind.EVIDENCE, level="L0", turn=1, sha=sha256_text(text), text=text,
                                   attrs=P.Evidence(stream, 0, 9).to_attrs())])


def make_world(tmp: Path, scheme: int | None = None) -> tuple[Path, dict[str, str]]:
    """Build it all under ``tmp``; returns the log root and {sha: text} of every vector in the embedding cache."""
    src = tmp / "sources"
    src.mkdir(parents=True)
    (src / "payroll.md").write_text(PAYROLL)
    (src / "worker.md").write_text(WORKER)
    (tmp / "queries.yaml").write_text(QUERIES)
    (tmp / "runbook.md").write_text(RUNBOOK)
    root = tmp / "log"
    log = EventLog(root)
    client = CachingClient(ScriptedClient([scripted_gate(keep_lines)], repeat_last=True), root / "cache" / "llm")
    base = dict(root=root, queries=tmp / "queries.yaml", chunk_tokens=24, concurrency=1)
    # Every writer below opens its own EventLog: the scheme a new run is written in is pinned at its one home.
    with mock.patch("poimen.log.store.SCHEME", scheme or SCHEME):
        assert run_loops(RunRequest(sources=sorted(src.iterdir()), **base), client).ok
        assert run_loops(RunRequest(level="L2", **base), client).ok
        ingest_reference(root, [tmp / "runbook.md"], max_tokens=40)
        symptoms = CachingClient(ScriptedClient([respond], repeat_last=True, model_id="scripted/offline"),
                                 root / "cache" / "llm")
        with log.writer():
            asyncio.run(project_log(log, symptoms))
        for ns, lines in (("dana", DANA), ("erik", ERIK)):
            mem = memory(root, namespace=ns)
            for line in lines:
                mem.remember(line)
        import_pipeline(memory(root, namespace="ops"), tmp / "queries.yaml")
        unfinished(log, "f" * 64, "payroll.md", PAYROLL.splitlines()[0])
        unfinished(log, "e" * 64, "worker.md", WORKER.splitlines()[0])
    for source in sorted(src.iterdir()):
        write_chunks(chunk_path(root / "chunks", source.name), source, src, 24)
    texts: dict[str, str] = {}
    stats = build_projections(root, default_db(root), CachedHash(root, texts))
    write_manifest(root, stats)
    rebuild_stores(root, stores_db(root))
    return root, texts
