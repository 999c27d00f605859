"""The full build, the nightly full rebuild, and the schedule that runs it."""


import dagster as dg

from assets.audit import rebuild_audit

# Runs that mean to write carry this tag (for filtering in the UI). One writer at a time does not rest on it: every
# step that writes is in the poimen_writer pool (dagster.yaml), which also covers untagged runs.
WRITER_TAG = {"poimen/writer": "log"}

full_build = dg.define_asset_job(
    "full_build",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(rebuild_audit),
    tags=WRITER_TAG,
    description="Chunks → L1 → L2 → symptom projections → typed stores → DuckDB index, with every check. "
                "Sealed runs are skipped.",
)

rebuild_job = dg.define_asset_job(
    "rebuild",
    selection=dg.AssetSelection.assets(rebuild_audit),
    tags=WRITER_TAG,
    description="Re-materialize everything from the raw sources in a scratch folder (loops replayed against their "
                "recorded replies) and compare chunks, events and projections with what is stored.",
)

nightly_rebuild = dg.ScheduleDefinition(
    name="nightly_rebuild", job=rebuild_job, cron_schedule="0 3 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="03:00 UTC: the full rebuild, so drift in the chunker, the loop, the parser or the projections is "
                "caught within a day.",
)
