"""Ticket threads that arrive as e-mail under a log (Redmine's notifications, a mailing list's archive), Linear's
comments with no year, a log under a "== … ==" banner and a banner that opens with its date, and the wiki formats
read as text (the shapes of bench/incidents23 and bench/incidents24)."""

from __future__ import annotations

import pytest

from poimen.incidents.lines import record_lines
from poimen.incidents.times import seconds
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect

MAILED = """\
--- 2025-04-15, scan-api-5f7b8c6d9-qh4tn ---
02:00:01.204 [io-executor-thread-5] ERROR c.p.scan.routing.SortDecisionService - sort decision failed for PH1
02:00:02.019 [io-executor-thread-2] ERROR i.m.http.server.RouteExecutor - Unexpected error occurred: Command timed out
02:00:05.336 [io-executor-thread-8] INFO  c.p.scan.api.ScanController - scan PH2 depot=DE-MUC-1 chute=C02

===========================================================================
From: Redmine <redmine@tracker.example>
To: scan-platform@example
Date: Wed, 16 Apr 2025 08:05:30 +0200
Subject: [Scan platform - Bug #7731] (Resolved) scan-api: bursts of Redis "Command timed out"

Issue #7731 has been updated by Piotr Sadowski.

* Status changed from In Progress to Resolved

Two changes, both live since yesterday afternoon:

----------------------------------------

Last night: no timeouts at 02:00, zero parcels to the manual chute.

----------------------------------------
Bug #7731: scan-api: bursts of Redis "Command timed out" every night at 02:00 UTC

Night shift at DE-HAM-2 reports parcels to the manual chute every night.

--
You have received this notification because you are involved in it.
"""


def _recs(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return detect(f), list(records(f))


def test_a_banner_that_opens_with_its_date_dates_the_clocks_under_it(tmp_path):
    kind, recs = _recs(tmp_path, "scan.txt", MAILED)
    assert kind == "log"
    assert [r.time for r in recs if r.kind == "log"][1:3] == ["2025-04-15 02:00:01.204", "2025-04-15 02:00:02.019"]


def test_an_e_mail_goes_on_over_its_rules_and_ends_at_its_signature(tmp_path):
    _, recs = _recs(tmp_path, "scan.txt", MAILED)
    said = [r for r in recs if r.kind == "comment"]
    assert seconds(said[0].time) == seconds("2025-04-16T06:05:30Z")  # the header's offset is read
    assert any(r.text.startswith("Last night: no timeouts") for r in said)  # past the notification's "-----"
    assert not any(r.text.startswith("You have received") for r in said)  # the footer under "--" is no one's words
    frames = [(line.text.split(":")[0], line.is_frame) for line in record_lines(said[0])]
    assert frames == [("From", True), ("To", True), ("Date", True), ("Subject", False)]


def test_a_post_under_a_github_comment_and_a_rule_is_no_more_of_that_comment(tmp_path):
    text = ("2025-04-10T07:26:01.114Z ERROR [exec-1] c.l.billing.Plan - plan failed\n\n"
            "**hannah-vogt** commented on Apr 7, 2025\nCustomer portal shows errors.\n\n"
            "-------------------------------------\n"
            "Copied from git.example/billing/issues/879\n")
    _, recs = _recs(tmp_path, "billing.log", text)
    assert [r.text for r in recs if r.kind == "comment"] == ["**hannah-vogt** commented on Apr 7, 2025\n"
                                                             "Customer portal shows errors."]


def test_linears_name_over_a_day_with_no_year_is_in_the_logs_year(tmp_path):
    text = ("== cart-api prod, merged from Loki, log times UTC ==\n"
            "2025-03-04 10:02:41.118 ERROR [exec-14] c.b.cart.session.CartSessionStore - cart session load failed\n"
            "2025-03-04 10:02:44.330 ERROR [exec-6] c.b.cart.session.CartSessionStore - cart session load failed\n"
            "2025-03-04 10:02:47.015 ERROR [exec-30] c.b.cart.web.Api - Redis command timed out\n\n"
            "Mara Okafor\nMar 4, 11:12 AM\nScaled cart-api from 6 to 10 replicas at 11:07.\n")
    kind, recs = _recs(tmp_path, "cart.txt", text)
    assert kind == "log"  # under a "== … ==" banner
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, r.time) for r in said] == [("Mara Okafor", "Mar 4, 2025, 11:12 AM")]
    assert seconds(said[0].time) == seconds("2025-03-04T11:12:00Z")


@pytest.mark.parametrize("suffix", [".rst", ".adoc"])
def test_a_wiki_page_is_read_as_text(tmp_path, suffix):
    kind, recs = _recs(tmp_path, "reviews" + suffix, "Incident reviews\n================\n\nThe ledger calls failed.\n")
    assert kind == "text" and recs[-1].headings == ("Incident reviews",)


GITHUB_PAGE = """\
### payouts-api, kubectl logs
2025-02-11 09:09:31,208 ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (executor-thread-31) HTTP Request to /v2/payouts failed
2025-02-11 09:09:32,001 ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (executor-thread-32) HTTP Request to /v2/payouts failed
2025-02-11 09:10:40,557 WARN  [io.sma.health] (vert.x-eventloop-thread-1) SRHCK01001: Reporting health down status
### 2025-02-14, after 2.31.1, pod payouts-api-5c8f7b6d4-w9rzn
2025-02-14 08:12:44,908 ERROR [com.led.pay.sta.StatementImportResource] (executor-thread-7) statement import failed

priya-nand commented on Feb 14
Member Author

Reopening, different problem, same service. Since 2.31.1 went out, big statements fail with

com.fasterxml.jackson.core.exc.StreamConstraintsException: String value length (20451836) exceeds the maximum allowed
"""


def test_githubs_day_without_a_year_a_dated_note_and_an_exception_a_comment_pastes(tmp_path):
    """"commented on Feb 14" is 2025-02-14 (the log's year); "### 2025-02-14, after 2.31.1 …" is on that day, over
    the log it heads; the exception under the comment, flush left and unstamped, is the comment's quote."""
    kind, recs = _recs(tmp_path, "payouts.txt", GITHUB_PAGE)
    assert kind == "log"
    assert [r.time for r in recs if r.kind == "note"] == ["", "2025-02-14"]
    assert {r.time for r in recs if r.kind == "comment"} == {"2025-02-14"}
    quoted = next(r for r in recs if r.text.startswith("com.fasterxml"))
    assert ("quoted", "comment") in quoted.attrs


SERVICENOW = """\
tg-batch-02:/var/log/kestrel/tollgate-batch.0.log  (java.util.logging SimpleFormatter)
Mar 11, 2025 1:00:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 2:03:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 3:06:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 4:09:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 5:12:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 6:15:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 7:18:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 8:21:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 9:24:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 10:27:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 11:30:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 12:33:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 1:36:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 2:39:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 3:42:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 4:45:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 5:48:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 6:51:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 7:54:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min
Mar 11, 2025 8:57:04 AM com.kestrel.tollgate.interop.ClearingHouseUploader upload
SEVERE: upload of KTW_20250311_01.csv failed, will retry in 60 min

==========================================================================
Kestrel ServiceNow  -  Incident INC0048377   (times US/Eastern)

Short description      Interop file for Mar 11 not received by clearing house

2025-03-11 11:30:12 - Leon Farrow (Work notes)
Uploads work again after the new client certificate, KTW_20250311_01.csv accepted.

2025-03-11 09:02:40 - Leon Farrow (Work notes)
Log shows SSLHandshakeException: certificate_expired on every retry since 02:30.

==========================================================================
Kestrel ServiceNow  -  Incident INC0048213   (times US/Eastern)

2025-03-12 09:46:51 - Dwayne Brightwater (Work notes)
Found it: the usage window for Mar 9 ends at 1:00 AM the next day.
"""


def test_a_servicenow_print_files_its_notes_and_they_are_placed_oldest_first(tmp_path):
    """"Kestrel ServiceNow  -  Incident INC0048377" heads its print: what follows is that ticket's, and its work notes,
    printed newest first, are placed as written, oldest first (``spoken.oldest_first``)."""
    from poimen.incidents.spoken import oldest_first

    _, recs = _recs(tmp_path, "tollgate.txt", SERVICENOW)
    notes = [r for r in recs if r.kind == "comment"]
    assert [dict(r.attrs).get("ticket") for r in notes] == ["INC0048377", "INC0048377", "INC0048213"]
    assert [r.time for r in oldest_first(recs) if r.kind == "comment"] == [n.time for n in (notes[1], notes[0], notes[2])]
    swapped = [notes[1] if r is notes[0] else notes[0] if r is notes[1] else r for r in recs]
    assert [r.time for r in oldest_first(swapped) if r.kind == "comment"] == [n.time for n in (notes[1], notes[0],
                                                                                               notes[2])]  # as printed
