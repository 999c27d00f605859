"""The one ``dg.Definitions`` of poimen: assets, checks, resources, jobs, the nightly schedule and the sources sensor."""


import dagster as dg

import poimen  # noqa: F401  (applies the offline environment before anything else loads)
from poimen import settings
from assets import CHECKS, assets_for
from assets.shards import DEFAULT_SHARDS
from pipelines.jobs import full_build, nightly_rebuild, rebuild_job
from pipelines.sensors import sources_sensor
from resources import CorpusResource, EmbedderResource, EventLogResource, IndexDatabaseResource, LLMResource


def _from_env(**fields: str) -> dict:
    """The resource fields whose ``POIMEN_*`` variable is set where the code location loads, each as a ``dg.EnvVar``.

    Dagster resolves an EnvVar when a step runs (a changed value needs no reload) and shows the variable in the UI,
    never its value (the API key). It fails a step whose variable is not set, so a variable unset at load is left
    out: its field stays unset, and the resource resolves it through ``poimen.settings`` when a step runs, as the CLI
    does. A run worker inherits the code server's environment, so what is set at load is what a step sees."""
    return {field: dg.EnvVar.int(name) if field == "chunk_tokens" else dg.EnvVar(name)
            for field, name in fields.items() if settings.is_set(name)}


def default_resources() -> dict:
    """Offline by default; each setting the environment names reaches its resource as a ``dg.EnvVar``."""
    return {
        "corpus": CorpusResource(**_from_env(sources=settings.SOURCES, reference=settings.REFERENCE,
                                             queries=settings.QUERIES, chunk_tokens=settings.CHUNK_TOKENS)),
        "event_log": EventLogResource(**_from_env(root=settings.HOME)),
        "llm": LLMResource(**_from_env(model=settings.MODEL, api_base=settings.API_BASE, api_key=settings.API_KEY,
                                       constrain=settings.CONSTRAIN)),
        "embedder": EmbedderResource(**_from_env(model=settings.EMBEDDER)),
        "duckdb": IndexDatabaseResource(**_from_env(database=settings.DB)),
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
