"""The one ``dg.Definitions`` of poimen: assets, checks, resources, jobs, the nightly schedule and the sources sensor."""


import os

import dagster as dg

import poimen  # noqa: F401  (applies the offline environment before anything else loads)
from assets import ASSETS, CHECKS
from pipelines.jobs import full_build, nightly_rebuild, rebuild_job
from pipelines.sensors import sources_sensor
from poimen.embedding import DEFAULT_MODEL as DEFAULT_EMBEDDER
from poimen.llm.client import DEFAULT_MODEL
from resources import CorpusResource, EmbedderResource, EventLogResource, LLMResource, duckdb_resource


def default_resources() -> dict:
    """Offline by default; ``POIMEN_MODEL``/``POIMEN_API_BASE``/``POIMEN_API_KEY`` choose a real model."""
    return {
        "corpus": CorpusResource(),
        "event_log": EventLogResource(),
        "llm": LLMResource(
            model=os.environ.get("POIMEN_MODEL") or DEFAULT_MODEL,
            api_base=os.environ.get("POIMEN_API_BASE"),
            api_key=dg.EnvVar("POIMEN_API_KEY") if os.environ.get("POIMEN_API_KEY") else None,
        ),
        "embedder": EmbedderResource(model=os.environ.get("POIMEN_EMBEDDER") or DEFAULT_EMBEDDER),
        "duckdb": duckdb_resource(),
    }


def make_definitions(resources: dict | None = None) -> dg.Definitions:
    """Every step runs in one process: the log has one writer at a time, and the loops are already concurrent inside."""
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
