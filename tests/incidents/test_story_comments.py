"""Roles of what a tracker's comments say in the shapes of bench/incidents47: a release that heads what it changed,
a stopgap labelled as one, and the paster's note on what was cut from a dump, which changes nothing."""

from __future__ import annotations

import pytest

from poimen.incidents import score
from poimen.incidents.roles import pick


@pytest.mark.parametrize("text", [
    "3.14.1: stock.client.keep-alive-timeout-seconds: 1 in config/prod.yaml, so the stock WebClient drops idle "
    "connections before haproxy does.",
    "promo-engine 3.2.0: single-use codes are now looked up in Redis instead of being held in the rule index.",
    "policyadmin 7.15.0 (MR !1203): weblogic-ejb-jar.xml puts EndorsementImportMDB on work manager EndorseImportWM "
    "with max-threads-constraint EndorseImportMax = 4, so at most 4 files import at a time per server.",
    "Stopgap: promo-engine resources.limits.memory 768Mi -> 2Gi in deploy/values-prod.yaml (and -Xmx1536m), rolled "
    "out 15:50. No restarts since.",
    "Stopgap agreed with DBA: PolicyDS MaxCapacity 40 -> 60 on both servers (online, no restart).",
])
def test_what_a_release_or_a_stopgap_changed_is_the_fix(text):
    assert pick(score(text, kind="comment")) == "action"


@pytest.mark.parametrize("text", [
    "(same frames as above, removed)",
    "[... 40 lines omitted ...]",
    "(trimmed: 36 identical BLOCKED listener threads removed)",
    "<snip>",
])
def test_the_pasters_note_on_what_was_cut_says_nothing(text):
    assert pick(score(text, kind="paragraph")) == "none"


def test_a_change_in_brackets_is_still_a_change():
    assert pick(score("(rolled back to 4.5.4 and removed the feature flag)", kind="comment")) == "action"
