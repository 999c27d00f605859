"""The full build, the rebuild from the log, and the nightly schedule that runs the rebuild."""


import tempfile
from pathlib import Path

import dagster as dg

from assets.checks import rebuild_matches
from poimen.index.rebuild import rebuild_into
from resources import WRITER_POOL, EmbedderResource, EventLogResource

# Both jobs write the event log and the DuckDB file; dagster.yaml limits runs carrying this tag to one at a time,
# so the nightly rebuild and a sensor-started build queue instead of failing on each other's locks.
WRITER_TAG = {"poimen/writer": "log"}

full_build = dg.define_asset_job(
    "full_build",
    selection=dg.AssetSelection.all(),
    tags=WRITER_TAG,
    description="Chunks → L1 → L2 → reference docs → DuckDB index, with every check. Sealed runs are skipped.",
)


@dg.op(pool=WRITER_POOL)
def rebuild_from_log(context: dg.OpExecutionContext, event_log: EventLogResource, embedder: EmbedderResource) -> None:
    """Rebuild every projection from the log into a scratch folder, and fail naming the rows whose hashes differ
    from the manifest. The live index and its assets' metadata are left as they are."""
    with tempfile.TemporaryDirectory(prefix="poimen-rebuild-") as scratch:
        report = rebuild_into(event_log.path, Path(scratch), embedder.get_embedder())
    verdict = rebuild_matches(report)
    context.log.info(str(report))
    if not report.ok:
        raise dg.Failure(description=f"{verdict.description}\n\n{report}",
                         metadata={"differing_rows": len(report.differing_rows)})


@dg.job(name="rebuild", tags=WRITER_TAG,
        description="Rebuild every projection from the event log and compare with the stored hashes.")
def rebuild_job() -> None:
    rebuild_from_log()


nightly_rebuild = dg.ScheduleDefinition(
    name="nightly_rebuild", job=rebuild_job, cron_schedule="0 3 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="03:00 UTC: the rebuild job, so drift between the log and the index is caught within a day.",
)
