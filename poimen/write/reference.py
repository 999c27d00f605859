"""Tier R: reference documentation (runbooks, READMEs) chunked and recorded in the log, never run through the loop.

Each document becomes its own sealed run: ``run_start``, one ``evidence`` event
per chunk at level R, ``run_end``. The run id is a hash of the document's
source name and chunk shas, so ingesting the same text again writes nothing,
and an edited document gets a new run that supersedes the old one in lookup.
R chunks get a text vector but never a symptom projection.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from pathlib import Path

from poimen.inputs.chunking import iter_chunks, source_id, sources_root
from poimen.inputs.source_lines import remember_root
from poimen.domain import Chunk, EventKind, Level, sha256_json
from poimen.log import payloads as P
from poimen.log.events import EventDraft
from poimen.log.store import EventLog

REFERENCE_KIND = "reference"
STREAM_KIND = "stream"  # an L0 source as read by the loop: every chunk, opened by a gate or not


def reference_run_id(source: str, chunks: Sequence[Chunk], max_tokens: int, kind: str = REFERENCE_KIND) -> str:
    return sha256_json({"kind": kind, "source": source, "chunks": [c.sha for c in chunks],
                        "max_tokens": max_tokens})


def reference_drafts(source: str, chunks: Sequence[Chunk], max_tokens: int,
                     level: Level = Level.R, kind: str = REFERENCE_KIND,
                     chunk_tokens: int | None = None) -> list[EventDraft]:
    """The events of one document's run (R reference, or an L0 stream). ``query_*`` keys are empty: no query reads it.
    ``chunk_tokens``: the bound an L0 stream was cut at (its ``max_tokens`` stays 0, the run-id input it always was)."""
    level = str(level)
    shas = [c.sha for c in chunks]
    drafts = [EventDraft(kind=EventKind.RUN_START, level=level, attrs=P.RunStart(
        kind=kind, stream_id=source, stream_sha=sha256_json(shas), chunks=len(chunks), max_tokens=max_tokens,
        chunk_tokens=chunk_tokens,
    ).to_attrs())]
    for turn, c in enumerate(chunks, start=1):
        drafts.append(EventDraft(kind=EventKind.EVIDENCE, level=level, turn=turn, sha=c.sha, text=c.text,
                                 attrs=P.Evidence(c.source, c.position, c.tokens).to_attrs()))
    drafts.append(EventDraft(kind=EventKind.RUN_END, level=level, turn=len(chunks),
                             attrs=P.RunEnd(len(chunks), len(chunks), "").to_attrs()))
    return drafts


def ingest_reference(log_root: Path, paths: list[Path], max_tokens: int = 1000, root: Path | None = None) -> list[str]:
    """Chunk each document and record it as a sealed R run; returns the run ids, written or already there.

    Every file is read and chunked before anything is written, so a bad file
    (raising ``SourceError`` with its name) leaves the log untouched. A document is named by its path
    relative to ``root``, by default the folder the documents share.
    """
    root = root if root is not None else sources_root(paths)
    docs = []
    for path in paths:
        path = Path(path)
        chunks = list(iter_chunks(path, max_tokens, root))
        source = source_id(path, root)
        docs.append((reference_run_id(source, chunks, max_tokens), source, chunks))
    log = EventLog(log_root)
    remember_root(log_root, root)
    with log.writer(shared=True):
        for run_id, source, chunks in docs:
            if not log.is_sealed(run_id):
                log.append_run(run_id, reference_drafts(source, chunks, max_tokens))
    return [run_id for run_id, _, _ in docs]


def record_stream(log: EventLog, stream_id: str, chunks: Sequence[Chunk], sealed: Set[str] | None = None,
                  chunk_tokens: int | None = None) -> str:
    """Record an L0 stream (every chunk the loop will read) as its own sealed run; the caller holds the writer.

    The loop's evidence events hold only the chunks a gate opened on; this run
    holds all of them, so everything derived from a source (its units, its
    failure signatures) is a projection of the log even where no gate opened.
    Idempotent: the run id hashes the stream's name and chunk shas. ``sealed``: the runs the caller knows are
    sealed, so that a known one costs no read of the index (``append_run`` checks again once it holds the run).
    """
    chunks = list(chunks)
    run_id = reference_run_id(stream_id, chunks, 0, STREAM_KIND)
    if run_id not in sealed if sealed is not None else not log.is_sealed(run_id):
        log.append_run(run_id, reference_drafts(stream_id, chunks, 0, Level.L0, STREAM_KIND, chunk_tokens))
    return run_id


def is_loop_run(events) -> bool:
    """A run of the gated loop (L1/L2), not a recorded source (an L0 stream or an R document)."""
    return bool(events) and events[0].kind == EventKind.RUN_START and \
        P.RunStart.from_event(events[0]).run_kind == P.LOOP_KIND
