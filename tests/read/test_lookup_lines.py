"""The lines a lookup hit shows: a memory found by a failure signature shows the evidence line that holds it; a chunk
hit shows its own chunk; no line is printed under two hits; a repeated template is one line ×n."""

from __future__ import annotations

from collections import Counter

import pytest

from poimen.write.core import RunRequest, run_loops
from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections
from poimen.llm.client import ScriptedClient
from poimen.relevance import dedup_key
from poimen.serve.service import ReadService
from poimen.read.shapes import hit_from, hit_shape

WARN = "2024-05-01 10:00:00 WARN lease renewal slow for client-7, will retry shortly"
FATAL = "2024-05-01 10:00:05 FATAL task attempt_7 exited: java.net.NoRouteToHostException: No route to host"
REPLY = f"<check>yes</check>\n<update>{WARN}</update>\n<next>continue</next>"


def _service(tmp_path, text: str, chunk_tokens: int = 5000) -> ReadService:
    """``text`` as one log, read by the gated loop whose memory keeps ``WARN`` only, indexed with the hash embedder."""
    source = tmp_path / "svc.log"
    source.write_text(text, encoding="utf-8")
    root = tmp_path / "log"
    assert run_loops(RunRequest(root=root, sources=[source], query="Which errors occurred?", chunk_tokens=chunk_tokens),
                     client=ScriptedClient([REPLY], repeat_last=True)).ok
    embedder = HashEmbedder(64)
    build_projections(root, root / "index.duckdb", embedder)
    return ReadService(root, root / "index.duckdb", embedder)


def test_a_memory_found_by_a_signature_its_lines_miss_shows_the_evidence_line_that_holds_it(tmp_path):
    service = _service(tmp_path, f"{WARN}\n2024-05-01 10:00:03 INFO heartbeat ok\n{FATAL}\n")
    # The memory kept the first warning only; the FATAL line that names the exception is in its evidence chunk.
    hits = service.lookup("java.net.NoRouteToHostException: No route to host")
    memory = next(h for h in hits if h["kind"] == "memory")
    assert memory["tier"] == "signature" and FATAL not in memory["text"]
    assert FATAL in [line["text"] for line in memory["lines"]]


# A service log in small chunks: a warning the memory keeps, a checksum failure, then a retry loop of one template.
RETRIES = [f"2024-05-01 10:01:{10 + 2 * n:02d} ERROR connection refused by ledger-db at 10.0.0.5:5432 (attempt {n})"
           for n in range(1, 7)]
LOG = "\n".join([WARN, "2024-05-01 10:00:01 INFO heartbeat ok from node-1",
                 "2024-05-01 10:00:02 ERROR replica sync failed for block blk_1: checksum mismatch",
                 "2024-05-01 10:00:03 INFO heartbeat ok from node-2", *RETRIES,
                 "2024-05-01 10:01:30 INFO ledger-db reachable again, resuming writes"]) + "\n"
QUESTION = "ledger-db connection refused, checksum mismatch, lease renewal slow: which errors occurred?"


@pytest.fixture
def hits(tmp_path):
    return _service(tmp_path, LOG, chunk_tokens=100).lookup(QUESTION, k=10)


def test_a_chunk_hit_shows_lines_of_its_own_chunk_not_the_memory_lines_of_its_stream(hits):
    chunks = [h for h in hits if h["kind"] == "evidence"]
    assert len(chunks) >= 3 and any(h["lines"] for h in chunks)  # several chunks, each found; some with new lines
    for h in chunks:
        for line in h["lines"]:
            # the line is the chunk's own, and tagged with the chunk, where this hit found it
            assert line["origins"][0]["sha"] == h["sha"], (h["sha"], line)


def test_no_line_is_shown_under_two_hits_and_a_hit_says_which_higher_hit_shows_its_lines(hits):
    shown_by = {}
    for n, h in enumerate(hits, start=1):
        for line in h["lines"]:
            key = dedup_key(line["text"])
            assert key not in shown_by, f"hit {n} repeats a line of hit {shown_by.get(key)}: {line['text']}"
            shown_by[key] = n
        for above, count in h["shown_above"]:
            assert above < n and count >= 1
    # The warning is both the memory's line and a line of its chunk: shown once, and the other hit points to it.
    warn_hit = shown_by[dedup_key(WARN)]
    assert any(above == warn_hit for h in hits for above, _ in h["shown_above"])


def test_a_template_repeated_in_a_chunk_is_one_line_with_its_count(hits):
    retry = [line for h in hits for line in h["lines"] if "connection refused by ledger-db" in line["text"]]
    assert len(retry) == 1 and retry[0]["repeats"] >= 2


def test_the_shown_above_note_survives_the_json_round_trip(hits):
    for shape in hits:
        hit, shown = hit_from(shape)
        assert hit_shape(hit, shown) == shape
