"""The Dagster code location: the whole chain under tmp_path, the rebuild job, new sources, the sensor, the checks.

Offline throughout: a scripted gate (a function of the prompt, so concurrent runs
get the same replies whatever their order) and the hash embedder.
"""

import asyncio
import shutil
from dataclasses import replace

import dagster as dg
import duckdb
import pytest

from assets import chunks, l1_memories
from assets.checks import acceptance_within, log_integrity, memories_within_budget
from pipeline_helpers import REPO, full_build, gate, make_resources, materialization
from pipelines.definitions import make_definitions
from pipelines.sensors import sources_sensor
from poimen import settings
from poimen.domain import Level, sha256_text
from poimen.index import TABLES
from poimen.llm.client import ScriptedClient
from poimen.log.runs import Run, loop_runs, read_runs
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.write.loop import ListSink, LoopConfig, run_loop
from poimen.inputs.queries import load_queries
from poimen.write.runner import l2_stream
from poimen.text.tokens import count_tokens
from resources import EmbedderResource, EventLogResource, ScriptedLLMResource

pytestmark = pytest.mark.usefixtures("dagster_home")
LOOP_TABLES = ("evidence", "memory", "edge", "run", "gate", "memory_vector")


def first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def stripped(events):
    return [{k: v for k, v in e.to_row().items() if k not in ("level", "run_id", "prev_hash", "hash")} for e in events]


@pytest.mark.slow
def test_chain_materializes_every_table_with_linked_parents_and_l2_equal_to_l1_but_for_level(tmp_path, corpus):
    resources = make_resources(tmp_path, corpus)
    assets = make_definitions(resources).assets
    result = dg.materialize(assets, resources=resources)
    assert result.success

    con = duckdb.connect(str(tmp_path / "index.duckdb"), read_only=True)
    assert set(LOOP_TABLES) <= set(TABLES)
    for table in LOOP_TABLES:
        assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] > 0, table
    kinds = {r[0] for r in con.execute("SELECT DISTINCT kind FROM memory_vector").fetchall()}
    assert kinds - {"headline"} == {"text"}  # titled docs add a headline vector; no symptom vectors in this chain
    assert {r[0] for r in con.execute("SELECT DISTINCT level FROM memory").fetchall()} == {"L1", "L2"}
    assert con.execute("SELECT count(*) FROM evidence WHERE level = 'R'").fetchone()[0] > 0
    dangling = con.execute("""SELECT count(*) FROM edge WHERE parent_sha NOT IN (SELECT sha FROM evidence)
                              AND parent_sha NOT IN (SELECT sha FROM memory)""").fetchone()[0]
    assert dangling == 0
    l1_without_evidence = con.execute("""SELECT count(*) FROM memory m WHERE level = 'L1' AND NOT EXISTS (
        SELECT 1 FROM edge e JOIN evidence v ON v.sha = e.parent_sha
        WHERE e.child_sha = m.sha AND e.run_id = m.run_id AND e.kind = 'evidence' AND v.level = 'L0')""").fetchone()[0]
    assert l1_without_evidence == 0
    con.close()

    l1 = materialization(result, "l1_memories")
    assert l1["runs"].value == 6 and l1["runs_new"].value == 6
    assert 0 < l1["acceptance_rate"].value < 1 and l1["model_id"].value == "scripted/test"
    assert l1["memory_tokens_max"].value > 0 and len(l1["content_hash"].value) == 64
    timeline = l1["gate_timeline"].value
    assert "| turn | chunk | gate | exit | memory_tokens | memory |" in timeline
    for query in load_queries(corpus.queries_file):  # each run is headed by its question, not only the query id
        assert f"{query.id}: “{query.text}”" in timeline
    log = EventLog(tmp_path / "log")
    loops = [r.run_id for r in loop_runs(read_runs(log), "L1") if r.kind == "loop"]  # incident cards: their own asset
    memories = [e for r in loops for e in log.run_events(r) if e.kind == "memory"]
    assert memories and all(f"`{m.sha[:12]}`" in timeline for m in memories)  # each memory's sha, per turn
    assert not any(first_line(m.text) in timeline for m in memories)  # and never its text (forget cannot reach it)
    finals = [evs[-1] for r in loops if (evs := log.run_events(r))[-1].kind == "run_end" and evs[-1].text]
    assert all(f"_final memory ({count_tokens(e.text)} tokens):_ `{e.sha[:12]}`" in timeline for e in finals)
    assert "`mem show <sha>`" in timeline
    assert materialization(result, "memory_index")["rows_memory_vector"].value > 0

    # The L2 loop is the L1 loop: replay each L2 run's stream at level L1 with the same script.
    l2_runs = [evs for r in log.sealed_run_ids()
               if (evs := log.run_events(r))[0].level == "L2" and evs[0].kind == "run_start"]  # not symptom runs
    assert len(l2_runs) == 2
    for query in load_queries(corpus.queries_file):
        stream = l2_stream(log, query)
        (l2_events,) = [evs for evs in l2_runs if evs[0].attributes["query_id"] == query.id]
        sink = ListSink()
        outcome = asyncio.run(run_loop(Level.L1, query, stream, ScriptedClient([gate], repeat_last=True), sink,
                                       LoopConfig(memory_budget=corpus.memory_budget)))
        assert outcome.chunks_used > 0
        assert stripped(l2_events) == stripped(sink.events)
        assert {e.level for e in l2_events if e.kind == "memory"} == {"L2"}
    assert verify(tmp_path / "log").ok


@pytest.mark.slow
def test_rebuild_job_matches_then_names_rows_when_the_embedder_changes(tmp_path, corpus):
    resources = make_resources(tmp_path, corpus)
    build = full_build(resources)
    assert build.success
    checks = build.get_asset_check_evaluations()
    assert {c.check_name for c in checks} >= {"l1_acceptance_rate", "l1_memory_budget", "l2_memory_budget"}
    assert all(c.passed for c in checks if c.check_name != "l1_acceptance_rate")
    projections = tmp_path / "log" / "projections"
    before = {p.name: p.read_bytes() for p in sorted(projections.glob("*.parquet"))}
    assert set(LOOP_TABLES) <= {n.removesuffix(".parquet") for n in before}

    rebuild = make_definitions(resources).resolve_job_def("rebuild")
    result = rebuild.execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success
    assert {p.name: p.read_bytes() for p in sorted(projections.glob("*.parquet"))} == before

    changed = dict(resources, embedder=EmbedderResource(model="hash-256"))
    result = make_definitions(changed).resolve_job_def("rebuild").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    message = failure.step_failure_data.error.message
    con = duckdb.connect(str(tmp_path / "index.duckdb"), read_only=True)
    vector_sha = con.execute("SELECT sha FROM memory_vector ORDER BY sha LIMIT 1").fetchone()[0]
    con.close()
    assert "memory_vector" in message and "model_id" in message and vector_sha[:16] in message
    assert "poimen/hash-bow-256" in message


@pytest.mark.slow
def test_new_source_is_picked_up_and_only_its_loops_run(tmp_path, corpus):
    resources = make_resources(tmp_path, corpus)
    assert full_build(resources).success
    log = EventLog(tmp_path / "log")
    before = set(log.sealed_run_ids())

    context = dg.build_sensor_context(cursor=None, resources={"corpus": corpus})
    first = sources_sensor(context)
    assert len(first.run_requests) == 1
    unchanged = sources_sensor(dg.build_sensor_context(cursor=first.cursor, resources={"corpus": corpus}))
    assert isinstance(unchanged, dg.SkipReason)

    shutil.copy(REPO / "examples" / "sources" / "deploy-tool-output.log", corpus.sources_dir / "deploy-tool-output.log")
    picked = sources_sensor(dg.build_sensor_context(cursor=first.cursor, resources={"corpus": corpus}))
    assert len(picked.run_requests) == 1 and picked.run_requests[0].run_key != first.run_requests[0].run_key

    result = full_build(resources)
    assert result.success
    new = [log.run_events(r)[0] for r in log.sealed_run_ids() if r not in before]
    new_l1 = [e for e in new if e.level == "L1" and e.kind == "run_start"]  # not the new memories' symptom runs
    loops = [e for e in new_l1 if e.attributes.get("kind") != "incident"]
    assert sorted(e.attributes["query_id"] for e in loops) == ["decisions", "root-causes"]
    assert {e.attributes["stream_id"] for e in new_l1} == {"deploy-tool-output.log"}  # its incidents too, and only its
    # the new source's L0 stream run; each query's L2 reads one more L1 memory, and the typed stores import the
    # new final memories; R is unchanged
    assert {e.level for e in new} <= {"L0", "L1", "L2", "store"}
    assert {e.attributes["stream_id"] for e in new if e.level == "L0"} == {"deploy-tool-output.log"}
    l1 = materialization(result, "l1_memories")
    assert (l1["runs_new"].value, l1["runs_skipped"].value) == (2, 6)
    assert materialization(result, "chunks")["sources_changed"].value == 1


def materialize_alone(asset, **resources) -> dict:
    """Materialize one asset (its shard steps and their collect step) and return its metadata values."""
    result = dg.materialize([asset], resources=resources)
    assert result.success
    return {k: v.value for k, v in materialization(result, asset.key.path[-1]).items()}


def test_chunks_asset_writes_one_parquet_per_source(tmp_path, corpus):
    event_log = EventLogResource(root=str(tmp_path / "log"))
    result = materialize_alone(chunks, corpus=corpus, event_log=event_log)
    files = sorted(p.name for p in (tmp_path / "log" / "chunks").glob("*.parquet"))
    assert files == sorted(f"{p.name}.parquet" for p in corpus.source_files())
    assert result["sources"] == 3 and result["rows"] >= 3
    again = materialize_alone(chunks, corpus=corpus, event_log=event_log)
    assert again["sources_changed"] == 0 and again["content_hash"] == result["content_hash"]


def test_l1_asset_reads_the_stored_chunks_and_never_chunks_a_source_again(tmp_path, corpus, monkeypatch):
    reply = "<check>no</check>\n<update></update>\n<next>continue</next>"
    llm = ScriptedLLMResource(replies=[reply])
    event_log = EventLogResource(root=str(tmp_path / "log"))
    missing = materialize_alone(l1_memories, corpus=corpus, event_log=event_log, llm=llm)
    assert missing["runs"] == 0 and missing["source_errors"] == 3  # no chunks yet: named, not run

    materialize_alone(chunks, corpus=corpus, event_log=event_log)

    def no_chunking(*args, **kwargs):
        raise AssertionError("a source was chunked again")

    monkeypatch.setattr("poimen.inputs.chunking.iter_chunks", no_chunking)
    monkeypatch.setattr("poimen.write.runner.iter_chunks", no_chunking)
    monkeypatch.setattr("poimen.inputs.chunk_store.iter_chunks", no_chunking)
    result = materialize_alone(l1_memories, corpus=corpus, event_log=event_log, llm=llm)
    assert result["runs"] == 6 and result["acceptance_rate"] == 0.0
    assert result["memory_tokens_max"] == 0 and result["source_errors"] == 0


@pytest.mark.slow
def test_validators_flag_bad_logs_high_acceptance_and_over_budget_memories(tmp_path, corpus):
    resources = make_resources(tmp_path, corpus)
    assert full_build(resources).success
    log = EventLog(tmp_path / "log")
    l1 = [r for r in loop_runs(read_runs(log), "L1") if r.kind == "loop"]  # the gated runs (not the incident cards)
    assert acceptance_within(l1, limit=1.01).passed and not acceptance_within(l1, limit=0.0).passed
    assert memories_within_budget(l1).passed

    too_big = " ".join(["word"] * 50)
    tampered = [replace(e, text=too_big, sha=sha256_text(too_big)) if e.kind == "memory" else e for e in l1[0].events]
    tampered[0] = replace(tampered[0], attrs=tampered[0].attrs.replace('"memory_budget":1024', '"memory_budget":10'))
    verdict = memories_within_budget([Run(l1[0].n, l1[0].run_id, tuple(tampered))])
    assert not verdict.passed and verdict.metadata["over_budget"] >= 1

    assert log_integrity(verify(tmp_path / "log")).passed
    segment = next((tmp_path / "log" / "segments").glob("*.parquet"))
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    bad = log_integrity(verify(tmp_path / "log"))
    assert not bad.passed and "first bad event" in bad.description


def test_typed_stores_receive_each_querys_final_memory_in_its_store(tmp_path, corpus):
    resources = make_resources(tmp_path, corpus)
    assert full_build(resources).success
    con = duckdb.connect(str(tmp_path / "index.duckdb"), read_only=True)
    stores = dict(con.execute("SELECT store, count(*) FROM store_item WHERE namespace = ? GROUP BY store",
                              [settings.DEFAULT_NAMESPACE]).fetchall())
    con.close()
    assert stores and set(stores) <= {"semantic", "episodic", "procedural"}
    # idempotent: a second build imports nothing new
    result = full_build(resources)
    assert materialization(result, "typed_stores")["imported"].value == 0
