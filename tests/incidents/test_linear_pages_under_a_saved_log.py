"""A log saved with a note over ``tail``'s banner, then Linear issue pages copied from the browser under it (the
shape of bench/incidents29's Quarkus log): the file is a log, Linear's "Name · Oct 6, 2025, 8:58 AM" and its
activity lines are comments, and a reopened ticket whose comment says "Not the same thing." tells a second story
that goes with the log's last burst, the one it names, with its own fix."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.incidents.episodes import record_lines
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from poimen.inputs.readers.speakers import speaker


def said(card) -> str:
    return " ".join(x.text for x in card.lines)

STREAM = """\
roomhold -- prod log excerpts + Linear RES-318, saved for the October review
log: kubectl -n reservations logs <pod>, trimmed by hand, times UTC

==> roomhold-7c9d5f8b6-x2kqp (4.12.0) <==
2025-10-06 06:40:05,118 INFO  [io.qua.htt.access-log] (vert.x-eventloop-thread-0) "GET /q/health/ready HTTP/1.1" 200
2025-10-06 06:48:02,077 WARN  [io.ver.cor.imp.BlockedThreadChecker] (vertx-blocked-thread-checker) Thread vert.x-eventloop-thread-0 has been blocked for 4120 ms
2025-10-06 06:48:14,615 ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (vert.x-eventloop-thread-0) HTTP Request to /api/holds failed: java.net.SocketTimeoutException: Read timed out
==> roomhold-5f7b8d9c4-m8vtz (4.12.3) <==
2025-10-15 07:31:04,550 INFO  [io.qua.htt.access-log] (vert.x-eventloop-thread-0) "GET /q/health/live HTTP/1.1" 200
2025-10-15 08:04:37,913 ERROR [io.ver.cor.net.imp.ConnectionBase] (vert.x-eventloop-thread-1) Unhandled exception: io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 16777216 byte(s) of direct memory
2025-10-15 08:04:39,226 ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (vert.x-eventloop-thread-0) HTTP Request to /api/holds failed: io.netty.util.internal.OutOfDirectMemoryError

------------------------------------------------------------------------
RES-318  Holds API times out during morning check-in wave
Reservations  ›  RES-318

Front desk gets "Unable to hold room (504)" on most hold attempts.

Activity
Ines Caldeira created the issue · Oct 6, 2025, 8:52 AM

Tomas Arriaga · Oct 6, 2025, 9:26 AM
Got it. The Lintel SDK is blocking and the availability push runs on the event loop.

Tomas Arriaga · Oct 6, 2025, 10:41 AM
4.12.1 deployed at 10:35: the push runs on the worker pool with lintel.sdk.read-timeout-ms=3000.

Tomas Arriaga changed status from In Progress to Done · Oct 6, 2025, 10:42 AM

Ines Caldeira · Oct 15, 2025, 10:09 AM
Reopening - reception gets "Unable to hold room" again, looks exactly like last week.

Tomas Arriaga · Oct 15, 2025, 10:22 AM
Not the same thing. m8vtz threw io.netty OutOfDirectMemoryError on its event loop at 08:04 UTC.

Tomas Arriaga · Oct 16, 2025, 9:05 AM
4.12.4 is out: the import endpoint takes the sheet as multipart, spooled to quarkus.http.body.uploads-directory.
"""


def test_linear_comment_and_activity_headers_are_speakers():
    assert speaker("Tomas Arriaga · Oct 6, 2025, 8:58 AM") == ("Oct 6, 2025, 8:58 AM", "Tomas Arriaga")
    assert speaker("Ines Caldeira changed status from Done to Todo · Oct 15, 2025, 10:09 AM") == (
        "Oct 15, 2025, 10:09 AM", "Ines Caldeira")
    assert speaker("Sentry linked ROOMHOLD-2F1 ChannelException: push failed · 312 events · Oct 6, 2025, 8:52 AM") \
        == ("Oct 6, 2025, 8:52 AM", "Sentry")
    assert speaker("2025-10-06 06:48:02 WARN pool · 3 waiting · Oct 6, 2025, 8:52 AM") is None  # a log line


def test_a_note_over_tails_banner_leaves_a_log_a_log(tmp_path):
    f = tmp_path / "roomhold-RES-318.txt"
    f.write_text(STREAM, encoding="utf-8")
    assert detect(f) == "log"
    report = tmp_path / "ticket.txt"  # a report's title over a pasted log, no banner: the report stays prose
    report.write_text("Holds API times out\n\n" + "\n".join(STREAM.splitlines()[4:7]) + "\n", encoding="utf-8")
    assert detect(report) == "text"


def test_a_reopened_tickets_second_story_goes_with_the_burst_it_names(tmp_path):
    f = tmp_path / "roomhold-RES-318.txt"
    f.write_text(STREAM, encoding="utf-8")
    cards = [build_card(i) for i in incidents({f.name: list(records(f))})]
    first = next(c for c in cards if any("Read timed out" in x.text for x in c.symptoms))
    second = next(c for c in cards if any("OutOfDirectMemoryError: failed" in x.text for x in c.symptoms))
    assert first is not second
    assert "4.12.1 deployed" in said(first) and "4.12.4 is out" not in said(first)
    assert "4.12.4 is out" in said(second) and "4.12.1 deployed" not in said(second)


MAILS = """\
2025-08-20 09:13:02,904 ERROR [crm-contacts-sink|task-2] Error encountered in task crm-contacts-sink-2. Executing stage 'KEY_CONVERTER'

From: Ilse Vandermeer <ilse@pellworth.example>
Sent: 20 August 2025 14:25
To: Data Platform <dataplatform@pellworth.example>
Subject: RE: [connect] crm-contacts-sink failed again + crm-archive-s3 tasks dying

Sink is back: "key.converter" put back into crm-contacts-sink.tfvars (PR #415).

From: Priya Anand <priya@pellworth.example>
Sent: 20 August 2025 10:31
To: Data Platform <dataplatform@pellworth.example>
Subject: [connect] crm-contacts-sink failed again

Hi, contacts sink is red again.
"""


def test_a_replys_subject_is_the_threads_again_and_says_nothing(tmp_path):
    """An Outlook thread saved newest first: every reply repeats the thread's subject ("RE: … failed again +
    crm-archive-s3 tasks dying"), which named the second problem on the first problem's mails (bench/incidents29)."""
    f = tmp_path / "connect.log"
    f.write_text(MAILS, encoding="utf-8")
    lines = [line for r in records(f) for line in record_lines(r) if line.text.startswith("Subject:")]
    assert [line.is_frame for line in lines] == [True, False]
