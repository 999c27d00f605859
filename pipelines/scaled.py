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


def full_build_job() -> dg.JobDefinition:
    """The sharded `full_build`, for ``dg.reconstructable`` (the step processes import it again)."""
    return defs.resolve_job_def("full_build")
