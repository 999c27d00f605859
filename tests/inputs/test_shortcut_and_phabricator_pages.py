"""Trackers' pages copied from the browser under a saved log (bench/incidents29's shapes): Shortcut's story
("sc-4417" over its title, "Freya Lindqvist   Sep 22, 2025 at 9:41 am", its activity and bot lines) and
Phabricator's task ("T2291  Tenant portal: …", "daniel.oyelaran added a comment.Nov 5 2025, 8:03 AM"); a note and a
banner ("#### portal-1  /opt/…/application.log", "--- pod, 2025-09-22 ---") over the log leave it a log."""

from __future__ import annotations

import pytest

from poimen.incidents import build_card, incidents
from poimen.incidents.toollines import TRACKER_META
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from poimen.inputs.readers.speakers import speaker


@pytest.mark.parametrize("line, said", [
    ("Freya Lindqvist   Sep 22, 2025 at 9:41 am", ("Sep 22, 2025 at 9:41 am", "Freya Lindqvist")),
    ("Bo Kjaergaard created this Story   Sep 22, 2025 at 9:24 am", ("Sep 22, 2025 at 9:24 am", "Bo Kjaergaard")),
    ("GitHub   Sep 22, 2025 at 11:52 am", ("Sep 22, 2025 at 11:52 am", "GitHub")),
    ("daniel.oyelaran added a comment.Nov 5 2025, 8:03 AM", ("Nov 5 2025, 8:03 AM", "daniel.oyelaran")),
    ("kofi.mensah created this task.Nov 12 2025, 10:02 AM", ("Nov 12 2025, 10:02 AM", "kofi.mensah")),
    ("Labels       prod, customer-visible", None),
    ("daniel.oyelaran triaged this task as High priority.", None),
])
def test_shortcut_and_phabricator_headers(line, said):
    assert speaker(line) == said


def test_a_subscriber_added_is_the_trackers_own_event():
    assert TRACKER_META.search("Herald added a subscriber: kofi.mensah.View Herald Transcript")
    assert not TRACKER_META.search("We added a second subscriber queue to drain the backlog")


PORTAL = """\
tenancy-portal -- application.log excerpts from portal-1, plus Maniphest T2291 and T2307
Saved by Daniel O. Log is UTC; Phabricator shows Europe/London, GMT in November.

#### portal-1  /opt/tenancy-portal/logs/application.log
2025-11-05 05:58:12,407 [INFO] from play.api.Play in main - Application started (Prod)
2025-11-05 06:01:14,208 [ERROR] from play.api.http.DefaultHttpErrorHandler in dispatcher-14 - RejectedExecutionException: Task slick.basic.BasicBackend rejected from slick executor (queue 1000 full)
2025-11-05 06:01:15,030 [ERROR] from uk.harrowgate.portal.statements.StatementRunJob in dispatcher-7 - statement for tenancy 4411 failed: RejectedExecutionException
2025-11-12 09:41:07,552 [ERROR] from play.api.http.DefaultHttpErrorHandler in dispatcher-9 - JsResultException(errors:List((/amount/value,List(JsonValidationError(List(error.expected.jsnumber))))))

========================================================================
T2291  Tenant portal: 500s on login and statements on the morning of the 5th
Closed, Resolved    Public

Event Timeline
hana.prescott created this task.Nov 5 2025, 7:48 AM

daniel.oyelaran added a comment.Nov 5 2025, 9:12 AM
Cause: the statement run does Future.traverse over all tenancies at once and fills Slick's queue.

daniel.oyelaran added a comment.Nov 6 2025, 3:41 PM
D1191 is deployed: the run streams tenancies through Source(ids).mapAsync(4) on its own slick.dbs.statements pool.

========================================================================
T2307  Card payments: tenants charged but the portal shows rent unpaid
Closed, Resolved    Public

Event Timeline
kofi.mensah created this task.Nov 12 2025, 10:02 AM

daniel.oyelaran added a comment.Nov 12 2025, 11:36 AM
Deployed build 2025.11.12-1: corvo.api-version = "2024-06-15" in conf/prod.conf, sent as the Corvo-Version header.
"""


def test_two_phabricator_tasks_under_a_saved_log_are_two_incidents(tmp_path):
    f = tmp_path / "tenancy-portal_T2291-T2307.txt"
    f.write_text(PORTAL, encoding="utf-8")
    assert detect(f) == "log"
    recs = list(records(f))
    assert {dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"} == {"T2291", "T2307"}
    cards = [build_card(i) for i in incidents({f.name: recs})]
    slick = next(c for c in cards if any("RejectedExecutionException" in x.text for x in c.symptoms))
    corvo = next(c for c in cards if any("error.expected.jsnumber" in x.text for x in c.symptoms))
    assert slick is not corvo
    assert any("mapAsync(4)" in x.text for x in slick.lines) and not any("corvo.api-version" in x.text for x in slick.lines)
    assert any("corvo.api-version" in x.text for x in corvo.lines) and not any("mapAsync" in x.text for x in corvo.lines)


def test_a_framed_banner_under_a_note_leaves_a_log_a_log(tmp_path):
    f = tmp_path / "parcel-eta.txt"
    f.write_text("parcel-eta -- prod logs + two Shortcut stories\nkubectl logs --timestamps; times UTC\n\n"
                 "--- parcel-eta-6b9f7c5d8-4tqzn, 2025-09-22 ---\n"
                 "2025-09-22T05:02:11.904312775Z 05:02:11.903 [main] INFO  io.micronaut.runtime.Micronaut - Startup completed\n"
                 "2025-09-22T06:55:06.045517902Z 06:55:06.044 [scheduled-1] ERROR c.q.eta.ManifestRefresher - refresh failed\n"
                 "2025-09-22T06:55:07.045517902Z 06:55:07.044 [scheduled-1] INFO  c.q.eta.ManifestRefresher - keeping snapshot\n",
                 encoding="utf-8")
    assert detect(f) == "log"
