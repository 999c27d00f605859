"""poimen's code location for more than one process: the multiprocess executor, `chunks` and `l1_memories` in 4 shards.

`dagster dev -m pipelines.scaled` (or `dagster asset materialize --select '*' -m pipelines.scaled`) runs the shards
as steps of their own, ``max_concurrent`` at a time (run config ``execution: config: max_concurrent: N``; by
default the number of CPUs). On a cluster, use ``make_definitions(executor=<k8s_job_executor …>, shards=16)``:
docs/deploy.md.
"""

import dagster as dg

from pipelines.definitions import make_definitions

SHARDS = 4

defs = make_definitions(executor="multiprocess", shards=SHARDS)


def execution_config(max_concurrent: int) -> dict:
    """Run config for ``max_concurrent`` step processes, forked from a server that preloaded ``pipelines.preload``.

    Without the preload each step process imported Dagster's storage, litellm, pyarrow and pandas and built the
    tokenizer on its own: 2-5 s per step on 2 loaded cores, more than a shard's work (docs/scale.md).
    """
    return {"execution": {"config": {"max_concurrent": max_concurrent, "start_method": {
        "forkserver": {"preload_modules": ["pipelines.preload"]}}}}}


def full_build_job() -> dg.JobDefinition:
    """The sharded `full_build`, for ``dg.reconstructable`` (the step processes import it again)."""
    return defs.resolve_job_def("full_build")
