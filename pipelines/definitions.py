"""The one ``dg.Definitions`` of poimen: assets, checks, resources, jobs, the nightly schedule and the sources sensor."""


import dagster as dg

import poimen  # noqa: F401  (applies the offline environment before anything else loads)
from assets import CHECKS, assets_for
from assets.shards import DEFAULT_SHARDS
from pipelines.jobs import full_build, nightly_rebuild, rebuild_job
from pipelines.sensors import sources_sensor
from resources import CorpusResource, EmbedderResource, EventLogResource, LLMResource, duckdb_resource


def default_resources() -> dict:
    """Offline by default. Nothing here reads the environment: each resource resolves its unset fields
    (``POIMEN_MODEL``, ``POIMEN_API_BASE``, ``POIMEN_API_KEY``, ``POIMEN_EMBEDDER``, ``POIMEN_HOME``, ``POIMEN_DB``,
    ``POIMEN_SOURCES``…) when a step uses it, so loading the code location is the same on every machine."""
    return {
        "corpus": CorpusResource(),
        "event_log": EventLogResource(),
        "llm": LLMResource(),
        "embedder": EmbedderResource(),
        "duckdb": duckdb_resource(),
    }


# The executors a code location can name. On a cluster, pass the ExecutorDefinition itself (dagster_k8s's
# k8s_job_executor, dagster_celery's celery_executor, dagster_docker's docker_executor): docs/deploy.md.
EXECUTORS = {"in_process": dg.in_process_executor, "multiprocess": dg.multiprocess_executor}


def make_definitions(resources: dict | None = None, executor: str | dg.ExecutorDefinition = "in_process",
                     shards: int = DEFAULT_SHARDS) -> dg.Definitions:
    """The code location. The default is the fastest on one machine: every step in one process, one shard (the
    loops are already concurrent inside a step). ``shards`` > 1 fans `chunks` and `l1_memories` out into that
    many steps, which the multiprocess executor (``max_concurrent`` in run config) or a cluster executor runs at
    once. Steps that need the log or the index to themselves are in the writer pool (``dagster.yaml``)."""
    return dg.Definitions(
        assets=assets_for(shards),
        asset_checks=CHECKS,
        jobs=[full_build, rebuild_job],
        schedules=[nightly_rebuild],
        sensors=[sources_sensor],
        resources=resources or default_resources(),
        executor=EXECUTORS[executor] if isinstance(executor, str) else executor,
    )


defs = make_definitions()
