"""Both code locations load, and hold exactly the graph the design card draws (issue 26; at the top of tests/ as
it spans both locations).

``pipelines.definitions`` (one process) and ``pipelines.scaled`` (the multiprocess executor, sharded steps) are two
executions of one graph: the same asset keys, groups, kinds and edges, the same checks, jobs, schedule, sensor and
resources. A new asset, a renamed group or a lost edge fails here, where it is read, not in a UI a user opens.
"""

from __future__ import annotations

import importlib

import pytest

# asset -> (group, kinds, upstream assets)
GRAPH = {
    "chunks": ("evidence", {"parquet"}, set()),
    "reference_docs": ("evidence", {"parquet"}, set()),
    "l1_memories": ("memory", {"litellm", "parquet"}, {"chunks"}),
    "l2_memories": ("memory", {"litellm", "parquet"}, {"l1_memories"}),
    "incidents": ("memory", {"litellm", "parquet"}, {"chunks"}),
    "symptom_projections": ("tool_context", {"litellm", "parquet"}, {"incidents", "l1_memories", "l2_memories"}),
    "failure_signatures": ("tool_context", {"duckdb"}, {"incidents", "l1_memories", "l2_memories"}),
    "memory_index": ("index", {"duckdb", "parquet"},
                     {"incidents", "l1_memories", "l2_memories", "reference_docs", "symptom_projections"}),
    "context_units": ("index", {"duckdb"}, {"incidents", "l1_memories", "l2_memories", "reference_docs"}),
    "incident_index": ("index", {"duckdb"}, {"incidents", "symptom_projections"}),
    "typed_stores": ("typed_memory", {"parquet"}, {"l1_memories", "l2_memories"}),
    "typed_store_index": ("typed_memory", {"duckdb"}, {"typed_stores"}),
    "rebuild_audit": ("audit", {"duckdb", "parquet"},
                      {"context_units", "failure_signatures", "incident_index", "memory_index", "typed_store_index"}),
}
CHECKS = {"l1_memories:l1_acceptance_rate", "l1_memories:l1_memory_budget", "l2_memories:l2_memory_budget",
          "memory_index:log_integrity_check", "memory_index:rebuild_hashes_match"}
JOBS = {"full_build", "rebuild"}
RESOURCES = {"corpus", "duckdb", "embedder", "event_log", "llm"}
EXECUTORS = {"pipelines.definitions": "in_process", "pipelines.scaled": "multiprocess"}


@pytest.fixture(params=sorted(EXECUTORS), ids=lambda m: m.split(".")[-1])
def location(request, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    return request.param, importlib.import_module(request.param).defs.get_repository_def()


def test_the_assets_their_groups_kinds_and_edges(location):
    _, repo = location
    graph = repo.asset_graph
    found = {key.to_user_string(): (graph.get(key).group_name, set(graph.get(key).kinds),
                                    {p.to_user_string() for p in graph.get(key).parent_keys})
             for key in graph.get_all_asset_keys()}
    assert found == GRAPH


def test_the_checks_jobs_schedule_sensor_and_resources(location):
    _, repo = location
    assert {c.to_user_string() for c in repo.asset_graph.asset_check_keys} == CHECKS
    assert {j.name for j in repo.get_all_jobs() if not j.name.startswith("__")} == JOBS
    assert [(s.name, s.cron_schedule, s.job_name) for s in repo.schedule_defs] == [
        ("nightly_rebuild", "0 3 * * *", "rebuild")]
    assert [s.name for s in repo.sensor_defs] == ["sources_sensor"]
    assert set(repo.get_top_level_resources()) == RESOURCES


def test_each_location_runs_its_jobs_on_its_own_executor(location):
    module, repo = location
    names = {repo.get_job(name).executor_def.name for name in JOBS}
    assert len(names) == 1
    assert EXECUTORS[module] in names.pop()
