"""poimen's code location for more than one process: the multiprocess executor, `chunks` and `l1_memories` in 4 shards.

`dagster dev -m pipelines.scaled` (or `dg launch --job full_build -m pipelines.scaled`) runs the shards as steps of
their own, ``max_concurrent`` at a time (run config ``execution: config: max_concurrent: N``; by default the number
of CPUs). On a cluster, use ``make_definitions(executor=<k8s_job_executor …>, shards=16)``: docs/deploy.md.

This location opts into the speed patches, and only it: importing a code location patches nothing. Its executor
(``multiprocess_preloaded``) is Dagster's multiprocess executor that, when a run starts, shares Dagster's migration
scripts in the run's process (``pipelines.alembic_scripts``) and lets a fork server import this code location
(``pipelines.forkserver``); the run config ``execution_config(n)`` names the fork server's preload
(``pipelines.preload``), which applies the same patch, warm, before any step process forks. docs/scale.md has the
measurements.
"""

import dagster as dg

from pipelines.alembic_scripts import share_migration_scripts
from pipelines.definitions import make_definitions
from pipelines.forkserver import fork_server_imports_the_code_location

SHARDS = 4
PRELOAD = "pipelines.preload"


@dg.executor(name="multiprocess", config_schema=dg.multiprocess_executor.config_schema.as_field(),
             requirements=dg.multiple_process_executor_requirements())
def multiprocess_preloaded(init_context: dg.InitExecutorContext):
    """Dagster's multiprocess executor (same run config), with this location's speed patches applied when a run
    starts: Dagster's migration scripts read once in the run's process, and a fork server (``start_method:
    forkserver``) able to import the preload the run config names, from any working directory."""
    share_migration_scripts()
    if "forkserver" in (init_context.executor_config.get("start_method") or {}):
        fork_server_imports_the_code_location()
    return dg.multiprocess_executor.executor_creation_fn(init_context)


defs = make_definitions(executor=multiprocess_preloaded, shards=SHARDS)


def execution_config(max_concurrent: int) -> dict:
    """Run config for ``max_concurrent`` step processes, forked from a server that preloaded ``pipelines.preload``.

    Without the preload each step process imported Dagster's storage, litellm, pyarrow and pandas and built the
    tokenizer on its own: 2-5 s per step on 2 loaded cores, more than a shard's work (docs/scale.md).
    """
    return {"execution": {"config": {"max_concurrent": max_concurrent, "start_method": {
        "forkserver": {"preload_modules": [PRELOAD]}}}}}


def full_build_job() -> dg.JobDefinition:
    """The sharded `full_build`, for ``dg.reconstructable`` (the step processes import it again)."""
    return defs.resolve_job_def("full_build")
