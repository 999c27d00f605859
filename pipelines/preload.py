"""What the multiprocess executor's fork server imports once, so that each step process is forked ready to work.

A step process forked from a fork server that preloaded only the code location imported 450-850 modules of its
own before its step could start: Dagster's SQLite storage to open the instance (SQLAlchemy, Alembic, watchdog,
universal-pathlib), pyarrow and pandas for the chunk and segment files, litellm for the model, and it parsed the
tokenizer's 100,000 ranks. On 2 loaded cores that was 2-5 s per step process, longer than a shard's own work, so
the multiprocess build was slower than the in-process one (docs/scale.md). Name this module in the run config:
``start_method: {forkserver: {preload_modules: [pipelines.preload]}}`` (``pipelines.scaled.execution_config``);
the scaled location's executor puts the code location on the fork server's ``PYTHONPATH``, so this module imports
from any working directory although the code location is not installed.

Nothing here reads the environment or opens a file outside the packages: the fork server keeps the environment
it started with, and the steps resolve their resources when they run.
"""

import gc  # noqa: I001
import poimen  # noqa: F401  (first of the packages: the offline environment, before litellm looks for its cost map online)

import dagster._core.storage.event_log.sqlite  # noqa: F401  (the instance a step process opens from its ref)
import dagster._core.storage.fs_io_manager  # noqa: F401  (step outputs, through universal-pathlib)
import dagster._core.storage.local_compute_log_manager  # noqa: F401
import dagster._core.storage.runs.sqlite  # noqa: F401
import dagster._core.storage.schedules.sqlite  # noqa: F401
import dagster._core.storage.sqlite_storage  # noqa: F401
import litellm  # noqa: F401  (the model client: seconds of imports)
import pandas  # noqa: F401
import pyarrow.parquet  # noqa: F401
import upath.core  # noqa: F401  (upath loads its core, and fsspec, on first use: 0.3 s per step process)

import pipelines.scaled  # noqa: F401  (the code location the steps run)
from pipelines.alembic_scripts import share_migration_scripts
from poimen.llm.client import warm_litellm
from poimen.text.tokens import encoding

encoding()  # the tokenizer, built from its rank file once here rather than once per step process
share_migration_scripts(warm=True)  # the head of Dagster's migrations, read here rather than 3-4 times per step
warm_litellm()  # litellm's first completion imports and builds 0.3 s of CPU more; once here, not once per step
# Everything above is shared with each step process until written; a collection in the child would write to every
# object it walks (copying its page), so what is here now is moved out of the collector's sight.
gc.freeze()
