"""One writer from any launch path: an untagged "Materialize all" run and a `full_build` launched at once.

Both go through one Dagster instance configured by the repository's own dagster.yaml (the `poimen_writer` pool,
limit 1). Steps that only append runs to the log (the shards of chunks and L1, reference docs, L2) share the writer
turn: runs are claimed one by one and the index commit is safe for concurrent writers, so the two runs' appenders
may overlap, and meeting on one run means waiting for it, then skipping it sealed. Steps that need the log or the
index to themselves (symptom projections, typed stores, the DuckDB projections, the checks) are in the pool and take
the turn exclusively: the pool queues them in the UI; the turn is the guarantee, since Dagster's SQLite storage can
grant one pool slot to two claims made at the same instant. Both runs succeed, no exclusive turn overlaps any other
turn, and every run is in the index once.
"""

import multiprocessing as mp
import os
import shutil
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipeline_helpers import REPO, make_resources
from pipelines.definitions import make_definitions
from poimen.log.store import EventLog
from resources import WRITER_POOL, EventLogResource

pytestmark = pytest.mark.usefixtures("dagster_home")


def launch(home: Path, tmp_path: Path, corpus, job: str, ready) -> None:
    """One run in a process of its own (as the webserver, a sensor or the CLI would launch it), on the shared instance."""
    instance = dg.DagsterInstance.from_config(str(home))
    defs = make_definitions(make_resources(tmp_path, corpus))
    job_def = defs.resolve_implicit_global_asset_job_def() if job == "all_assets" else defs.resolve_job_def(job)
    ready.wait()
    result = job_def.execute_in_process(instance=instance, raise_on_error=False)
    os._exit(0 if result.success else 1)


def turn_spans(instance: dg.DagsterInstance, run_id: str) -> list[tuple[float, float, str, str]]:
    """(taken, released, run:step, mode) of each writer turn in a run, from the steps' log messages in the instance."""
    spans: dict[tuple[str, str], list[float]] = {}
    for record in instance.get_records_for_run(run_id, limit=10_000).records:
        entry = record.event_log_entry
        message = entry.user_message or ""
        for mode in ("shared", "exclusive"):
            if message.endswith((f"writer turn taken ({mode})", f"writer turn released ({mode})")):
                spans.setdefault((message.split(":")[0], mode), []).append(entry.timestamp)
    assert all(len(ts) == 2 for ts in spans.values()), spans
    return [(min(ts), max(ts), f"{run_id[:8]}:{step}", mode) for (step, mode), ts in spans.items()]


def test_materialize_all_and_full_build_at_once_both_succeed_one_writer_step_at_a_time(tmp_path, corpus):
    for extra in ("adr-007-queue-choice.md", "incident-channel.jsonl"):  # one source is enough to meet on the lock
        (corpus.sources_dir / extra).unlink()
    home = tmp_path / "instance"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    assert yaml.safe_load((home / "dagster.yaml").read_text())["concurrency"]["pools"]["default_limit"] == 1
    instance = dg.DagsterInstance.from_config(str(home))  # its storage is created here, not raced by the two runs
    # A pool is created, at dagster.yaml's default limit, by its first claim; two runs making that very first claim
    # at the same instant can both get in (docs/pipeline.md). A deployment's first build does it once; so do we.
    instance.event_log_storage.initialize_concurrency_limit_to_default(WRITER_POOL)
    jobs = ("all_assets", "full_build")
    fork = mp.get_context("fork")
    ready = fork.Barrier(len(jobs))
    children = [fork.Process(target=launch, args=(home, tmp_path, corpus, job, ready)) for job in jobs]
    for child in children:
        child.start()
    for child in children:
        child.join()

    runs = {r.job_name: r for r in instance.get_runs()}
    assert {name: run.status for name, run in runs.items()} == {
        "__ASSET_JOB": dg.DagsterRunStatus.SUCCESS, "full_build": dg.DagsterRunStatus.SUCCESS}
    assert [c.exitcode for c in children] == [0, 0]
    assert "poimen/writer" not in runs["__ASSET_JOB"].tags  # the UI's "Materialize all": untagged
    defs = make_definitions(make_resources(tmp_path, corpus))
    jobs_of = {"__ASSET_JOB": defs.resolve_implicit_global_asset_job_def(), "full_build": defs.resolve_job_def("full_build")}
    pooled = {name: {node.name for node in job.graph.node_dict.values() if getattr(node.definition, "pool", None) == WRITER_POOL}
              for name, job in jobs_of.items()}
    assert {"symptom_projections", "typed_stores", "projection_tables"} <= pooled["full_build"]
    assert not {"chunks_shard_00", "incidents", "l1_memories_shard_00", "l2_memories", "reference_docs"} & \
        pooled["full_build"]
    assert {limit.name: limit.limit for limit in instance.event_log_storage.get_pool_limits()}[WRITER_POOL] == 1
    spans = []
    for name, run in runs.items():  # every pooled step took the turn exclusively, once; the appenders shared it
        turns = turn_spans(instance, run.run_id)
        assert len([t for t in turns if t[3] == "exclusive"]) == len(pooled[name]), (name, turns, pooled[name])
        assert {"chunks_shard_00", "incidents", "l1_memories_shard_00", "l2_memories", "reference_docs"} == \
            {t[2].split(":")[1] for t in turns if t[3] == "shared"}  # the appenders
        spans += turns
    assert "rebuild_hashes_match" in {span[2].split(":")[1] for span in spans}
    overlapping = [(a[2], b[2]) for a in spans if a[3] == "exclusive" for b in spans
                   if b is not a and b[0] < a[1] and a[0] < b[1]]
    assert not overlapping, f"an exclusive writer step overlapped another writer step: {overlapping}"
    run_ids = EventLog(tmp_path / "log").sealed_run_ids()
    assert len(run_ids) == len(set(run_ids)), "two runs committed the same run"


def take_turn(root: str, took) -> None:
    with EventLogResource(root=root).writer_turn("second"):
        took.value = time.time()
    os._exit(0)


def test_a_second_writer_step_waits_for_the_turn_in_any_process(tmp_path):
    """The guarantee beneath the pool: while one step holds the turn, another (in any process) waits, then gets it."""
    fork = mp.get_context("fork")
    took = fork.Value("d", 0.0)
    resource = EventLogResource(root=str(tmp_path / "log"))
    with resource.writer_turn("first"):
        assert (tmp_path / "log" / "WRITER").read_text() == f"pid {os.getpid()}, step first"
        child = fork.Process(target=take_turn, args=(str(tmp_path / "log"), took))
        child.start()
        time.sleep(1.0)
        assert took.value == 0.0 and child.is_alive()  # still waiting
        released = time.time()
    child.join(30)
    assert child.exitcode == 0 and took.value >= released
    assert (tmp_path / "log" / "WRITER").read_text() == ""  # nobody holds it now
