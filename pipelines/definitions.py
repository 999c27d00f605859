"""The one ``dg.Definitions`` of poimen: assets, checks, resources, jobs, the nightly schedule and the sources sensor."""


import dagster as dg

import poimen  # noqa: F401  (applies the offline environment before anything else loads)
from assets import ASSETS, CHECKS
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


def make_definitions(resources: dict | None = None) -> dg.Definitions:
    """Every step runs in one process: the loops are already concurrent inside a step, and the writer pool
    (``dagster.yaml``) lets one step at a time, across all runs, write the log or the index."""
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[full_build, rebuild_job],
        schedules=[nightly_rebuild],
        sensors=[sources_sensor],
        resources=resources or default_resources(),
        executor=dg.in_process_executor,
    )


defs = make_definitions()
