"""The lines a lookup hit shows: a memory found by a failure signature shows the evidence line that holds it."""

from __future__ import annotations

from poimen.core import RunRequest, run_loops
from poimen.embedding import HashEmbedder
from poimen.index import build_projections
from poimen.llm.client import ScriptedClient
from poimen.serve.service import ReadService

WARN = "2024-05-01 10:00:00 WARN lease renewal slow for client-7, will retry shortly"
FATAL = "2024-05-01 10:00:05 FATAL task attempt_7 exited: java.net.NoRouteToHostException: No route to host"
REPLY = f"<check>yes</check>\n<update>{WARN}</update>\n<next>continue</next>"


def test_a_memory_found_by_a_signature_its_lines_miss_shows_the_evidence_line_that_holds_it(tmp_path):
    source = tmp_path / "svc.log"
    source.write_text(f"{WARN}\n2024-05-01 10:00:03 INFO heartbeat ok\n{FATAL}\n", encoding="utf-8")
    root = tmp_path / "log"
    # The memory kept the first warning only; the FATAL line that names the exception is in its evidence chunk.
    assert run_loops(RunRequest(root=root, sources=[source], query="Which errors occurred?"),
                     client=ScriptedClient([REPLY], repeat_last=True)).ok
    embedder = HashEmbedder(64)
    build_projections(root, root / "index.duckdb", embedder)
    hits = ReadService(root, root / "index.duckdb", embedder).lookup("java.net.NoRouteToHostException: No route to host")
    memory = next(h for h in hits if h["kind"] == "memory")
    assert memory["tier"] == "signature" and FATAL not in memory["text"]
    assert FATAL in [line["text"] for line in memory["lines"]]
