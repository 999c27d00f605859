"""New, changed or removed input files start a full build: no code change, no partition to register."""


import dagster as dg

from pipelines.jobs import full_build
from poimen.domain import sha256_json
from resources import CorpusResource


def listing_key(listing: list[tuple[str, int, int]]) -> str:
    """The run key of a build: a hash of every input's path, size and mtime."""
    return sha256_json(sorted(listing))[:32]


@dg.sensor(job=full_build, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.STOPPED)
def sources_sensor(context: dg.SensorEvaluationContext, corpus: CorpusResource) -> dg.SensorResult | dg.SkipReason:
    """Requests `full_build` when the sources folder, the reference folder or queries.yaml changes.

    Ships stopped, so opening the UI starts nothing: turn it on in the UI (Automation → sources_sensor) or with
    `dagster sensor start sources_sensor`.
    """
    key = listing_key(corpus.listing())
    if context.cursor == key:
        return dg.SkipReason("inputs unchanged since the last requested build")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=key, tags={"poimen/trigger": "sources_sensor"})],
        cursor=key,
    )
