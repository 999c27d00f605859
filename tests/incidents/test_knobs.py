"""A setting's value changed, written without a verb ("PolicyDS MaxCapacity 40 -> 60"), is a change made; a
measure's value moving ("p99 latency 120ms -> 4s") is what broke, never a fix (``poimen.incidents.knobs``)."""

from __future__ import annotations

import pytest

from poimen.incidents import score
from poimen.incidents.knobs import changed_setting
from poimen.incidents.roles import pick


@pytest.mark.parametrize("text", [
    "PolicyDS MaxCapacity 40 -> 60 on both managed servers.",
    "-Xmx 2g -> 4g",
    "--max-old-space-size=2048 -> --max-old-space-size=4096",
    "spring.datasource.hikari.maximum-pool-size: 10 -> 40",
    "worker memory limit 768Mi → 2Gi",
    "replicas: 3 => 6",
    "client timeout 30s -> 120s",
])
def test_a_knob_set_from_one_value_to_another_is_the_fix(text):
    assert changed_setting(text)
    assert pick(score(text, kind="comment")) == "action"


@pytest.mark.parametrize("text", [
    "p99 latency 120ms -> 4s",
    "consumer lag 0 -> 2.1M on orders",
    "heap usage 61% -> 98%",
    "queue depth 0 -> 40k",
    "active connections 80 -> 500",
    "13:02 -> 13:40 degraded",
    "payments-api 7.4.0 -> 7.5.0",
    "pool size 20 -> 20",
    "# 13:25 not raising max_connections 200->400: needs a restart",
])
def test_a_measure_moving_or_a_span_of_time_is_no_change_made(text):
    assert not changed_setting(text)
    assert pick(score(text, kind="comment")) != "action"
