"""Tool context through the Dagster chain: a raw error from a later occurrence finds the memory as a tier-1 hit.

The chain (chunks → L1 → L2 → symptom_projections → memory_index →
failure_signatures) runs under tmp_path with the gate of ``test_pipeline``
(scripted, a function of the prompt), the offline engine's symptom answer
for the projection prompt, and the hash embedder.
"""

import dagster as dg
import duckdb
import pytest
from typer.testing import CliRunner

from pipeline_helpers import gate, make_resources, materialization
from pipelines.definitions import make_definitions
from poimen.cli.app import app
from poimen.index.lookup import lookup
from poimen.llm.client import ScriptedClient
from poimen.llm.offline_symptom import symptom
from resources import ScriptedLLMResource

pytestmark = pytest.mark.usefixtures("dagster_home")

WORKER_LOG = """\
2026-04-01T02:13:55Z settlement-worker started batch 8812
2026-04-01T02:14:07Z ERROR settlement failed for batch 8812
Exception in thread "settle-4" java.lang.IllegalStateException: ledger entry 99812 already closed
\tat com.acme.settle.Ledger.close(Ledger.java:214)
\tat com.acme.settle.BatchRunner.run(BatchRunner.java:88)
\tat java.lang.Thread.run(Thread.java:829)
2026-04-01T02:30:00Z on-call: reopened the period; cause was a double close after a retry
"""

# The same failure weeks later: another thread, entry id and line numbers (a patched build).
NEXT_OCCURRENCE = """\
Exception in thread "settle-1" java.lang.IllegalStateException: ledger entry 10455 already closed
\tat com.acme.settle.Ledger.close(Ledger.java:220)
\tat com.acme.settle.BatchRunner.run(BatchRunner.java:91)
\tat java.lang.Thread.run(Thread.java:750)
"""
EXCEPTION_KEY = "java:java.lang.IllegalStateException: ledger entry <NUM> already closed"


def model(system: str, user: str) -> str:
    return symptom(system, user) if "poimen-task: symptom" in system else gate(system, user)


def test_raw_error_from_a_new_occurrence_is_a_tier_one_hit(tmp_path, corpus):
    (corpus.sources_dir / "settlement-worker.log").write_text(WORKER_LOG, encoding="utf-8")
    resources = dict(make_resources(tmp_path, corpus),
                     llm=ScriptedLLMResource.of(ScriptedClient([model], model_id="scripted/pipeline", repeat_last=True)))
    result = dg.materialize(make_definitions(resources).assets, resources=resources)  # every asset given
    assert result.success

    projected = materialization(result, "symptom_projections")
    assert projected["generated"].value > 0 and projected["model_id"].value == "scripted/pipeline"
    signatures = materialization(result, "failure_signatures")
    assert signatures["rows"].value > 0 and "exception" in signatures["kinds"].value

    db = tmp_path / "index.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = {k for (k,) in con.execute("SELECT DISTINCT kind FROM memory_vector").fetchall()}
        linked = {m for (m,) in con.execute("SELECT memory_sha FROM failure_signature WHERE key = ?",
                                            [EXCEPTION_KEY]).fetchall()}
        tool = con.execute("SELECT DISTINCT tool FROM failure_signature WHERE key = ?", [EXCEPTION_KEY]).fetchall()
        worker_l1 = {m for (m,) in con.execute(
            "SELECT final_memory_sha FROM run WHERE level = 'L1' AND stream_id = 'settlement-worker.log'").fetchall()}
    assert kinds - {"headline"} == {"text", "symptom"}  # memory_index ran after symptom_projections
    assert tool == [("java",)] and worker_l1 and worker_l1 <= linked

    hits = lookup(db, NEXT_OCCURRENCE, k=5, explain=True)
    assert hits[0].tier == "signature" and hits[0].sha in linked
    assert EXCEPTION_KEY in hits[0].signature_keys and len(hits[0].signature_keys) == 2  # message shape and frames
    assert "settlement-worker.log" in {p.source for p in hits[0].evidence}
    assert {h.sha for h in hits if h.tier == "signature"} == linked
    assert "tier 1: signature" in hits[0].why and f"summed specificity {hits[0].score:.2f}" in hits[0].why

    shown = CliRunner().invoke(app, ["lookup", NEXT_OCCURRENCE, "--explain", "-k", "3", "--db", str(db),
                                     "--log", str(tmp_path / "log")])
    assert shown.exit_code == 0, shown.output
    first = " ".join(shown.output.split("\n2. ")[0].split())  # the terminal width wraps lines
    assert f"{hits[0].sha[:12]} · query {hits[0].query_id}" in first and f" signature {hits[0].score:.4f} " in first
    assert "why: tier 1: signature java:java.lang.IllegalStateException" in first and "best vector" in first
