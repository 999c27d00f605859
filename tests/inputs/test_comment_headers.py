"""Ticket threads pasted under a log, in the shapes trackers print their comments' headers: Bugzilla's one line,
Jira Cloud's name over the time, a help desk's article fields; and a log whose file opens with a box of rules or a
title that names the log file is still a log, in the zone its box names (the shapes of bench/incidents22)."""

from __future__ import annotations

import pytest

from poimen.incidents.times import seconds
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from poimen.inputs.readers.speakers import speaker
from poimen.inputs.readers.zones import zone_of, zoned

BUGZILLA = """\
========================================================================================
 server.log  claims-app-02.example.lan  WildFly 31.0.1.Final (JDK 17.0.10)
 Tuesday 2025-03-18, times are Europe/Helsinki
========================================================================================
08:41:02,118 ERROR [org.jboss.msc.service.fail] (MSC service thread 1-3) MSC000001: Failed to start service jboss.deployment.unit."claims-rules.war": java.lang.OutOfMemoryError: Metaspace
08:41:02,120 INFO  [org.jboss.as.server] (management-handler-thread - 2) WFLYSRV0016: Replaced deployment
08:41:03,004 ERROR [org.jboss.as.controller] (management-handler-thread - 2) WFLYCTL0013: Operation ("full-replace-deployment") failed

Bug 20417 - claims-rules redeploy fails with OutOfMemoryError: Metaspace

Henrik Aalto 2025-03-18 06:52:09 UTC
The hot-publish failed: claims-rules.war did not come up again.

Comment 1 Dorota Kwiatek 2025-03-18 07:04:51 UTC
Restarted WildFly on claims-app-02 at 09:01, rules are back.
"""

JIRA_CLOUD = """\
2025-05-06 11:02:13.410 ERROR 1 --- [exec-7] c.k.render.PdfService : render failed for job rj-1
2025-05-06 11:02:13.412 ERROR 1 --- [exec-7] c.k.render.PdfService : Unable to acquire JDBC Connection
2025-05-06 11:02:14.001 WARN 1 --- [hikari-1] com.zaxxer.hikari.pool.HikariPool : Connection leak detection triggered

Katja Ferreira
6 May 2025 at 11:15
Looking. The 500s are all "Unable to acquire JDBC Connection", pool is 10/10 active.

Oskar Dalen
6 May 2025 at 15:48 (edited)
it's not the DB: render-pg-02 is at 6% CPU.
"""

OTRS = """\
catalina.2025-04-14.log - tw-web-05 (Tomcat 9.0.98)
grep -v "DEBUG" | trimmed for the ticket

14-Apr-2025 07:31:02.884 INFO [http-nio-8080-exec-3] org.apache.coyote.http11.Http11Processor.service Error parsing HTTP request header
14-Apr-2025 07:31:05.101 WARNING [http-nio-8080-exec-5] com.example.meter.web.ReadingController.submit plausibility check failed
14-Apr-2025 07:31:09.442 INFO [http-nio-8080-exec-2] org.apache.coyote.http11.Http11Processor.service Error parsing HTTP request header

--- Article #2 -------------------------------------------------------------------
From:     Jonas Brenner
Subject:  Note
Created:  2025-04-14 08:05:37
Channel:  note-internal  Sender: agent

Only the history call fails, always 400 with 435 bytes.
"""


def _comments(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return detect(f), [(r.author, r.time, r.text.splitlines()[-1]) for r in records(f) if r.kind == "comment"]


def test_bugzillas_comment_headers_and_a_log_under_a_box_of_rules(tmp_path):
    kind, comments = _comments(tmp_path, "claims.txt", BUGZILLA)
    assert kind == "log"
    assert comments == [("Henrik Aalto", "2025-03-18 06:52:09 UTC", "The hot-publish failed: claims-rules.war did "
                         "not come up again."),
                        ("Dorota Kwiatek", "2025-03-18 07:04:51 UTC", "Restarted WildFly on claims-app-02 at 09:01, "
                         "rules are back.")]


def test_jira_clouds_name_over_the_time(tmp_path):
    kind, comments = _comments(tmp_path, "render.txt", JIRA_CLOUD)
    assert kind == "log"
    assert [(a, t) for a, t, _ in comments] == [("Katja Ferreira", "6 May 2025 at 11:15"),
                                                 ("Oskar Dalen", "6 May 2025 at 15:48")]
    assert comments[1][2] == "it's not the DB: render-pg-02 is at 6% CPU."


def test_a_help_desks_article_fields_and_a_log_under_its_file_name(tmp_path):
    kind, comments = _comments(tmp_path, "meter.txt", OTRS)
    assert kind == "log"
    assert comments == [("Jonas Brenner", "2025-04-14 08:05:37", "Channel:  note-internal  Sender: agent"),
                        ("Jonas Brenner", "2025-04-14 08:05:37", "Only the history call fails, always 400 with 435 "
                         "bytes.")]


def test_what_is_no_header():
    assert speaker("Reported: 2025-03-18 06:52 UTC by Henrik Aalto") is None
    assert speaker("Dorota Kwiatek") is None
    assert speaker("Subject: Note\nChannel: note-internal") is None  # fields with no sender and no time
    assert speaker("Katja Ferreira\nLooking at it now") is None


def test_a_log_in_the_zone_its_box_names_compares_with_comments_in_utc(tmp_path):
    """"times are Europe/Helsinki": the log's 08:41 is 06:41 UTC, before the report at 06:52 UTC; read as UTC it
    was two hours after every comment of the morning (bench/incidents22's Bugzilla page)."""
    f = tmp_path / "claims.txt"
    f.write_text(BUGZILLA, encoding="utf-8")
    recs = list(records(f))
    logs = [r.time for r in recs if r.kind == "log" and r.time]
    assert logs[0] == "2025-03-18 08:41:02,118+02:00"
    report = next(r for r in recs if r.kind == "comment")
    assert seconds(logs[0]) < seconds(report.time) < seconds(logs[0]) + 3600


@pytest.mark.parametrize("banner, when, shown", [
    ("Tuesday 2025-03-18, times are Europe/Helsinki", "2025-07-01 09:00:00", "2025-07-01 09:00:00+03:00"),  # summer
    ("=== app.log (UTC-05:00) ===", "2025-03-18T09:00:00.5", "2025-03-18T09:00:00.5-05:00"),
    ("=== app.log, times are UTC ===", "2025-03-18 09:00:00", "2025-03-18 09:00:00+00:00"),
    ("=== Foo/Barbaz ===", "2025-03-18 09:00:00", "2025-03-18 09:00:00"),  # no zone by that name
    ("times are Europe/Helsinki", "2025-03-18 09:00:00Z", "2025-03-18 09:00:00Z"),  # its own offset stands
    ("times are Europe/Helsinki", "09:00:00", "09:00:00"),  # no day, no offset
])
def test_the_zone_a_banner_names_and_the_offset_it_gives_a_time(banner, when, shown):
    assert zoned(when, zone_of(banner)) == shown


def test_stern_lines_are_a_log_and_mantis_notes_are_comments(tmp_path):
    """bench/incidents36: `stern` names each line by its pod and container before the event ("fx-edge-gateway-6c9d7b5f4-
    2xkqp gateway {"@timestamp":…}"), and MantisBT's print view heads each note with its number, login and access
    level ("(0021904) amaru.quispe (developer) 2025-09-16 09:40"): a log, then a ticket's comments."""
    from poimen.text.log_lines import is_log_line, level_of, time_of

    json_line = ('fx-edge-gateway-6c9d7b5f4-2xkqp gateway {"@timestamp":"2025-07-08T07:05:02.733Z","@version":"1",'
                 '"message":"500 Server Error for HTTP POST","level":"ERROR"}')
    plain = "order-events-writer-7d5f8c9b6-xq2lm writer 2025-04-03T02:11:47.390Z\tERROR\twriter/insert.go:88\tfailed"
    for line in (json_line, plain, "redis-0 redis 2025-04-03 02:11:47 WARN slow"):
        assert is_log_line(line) and level_of(line) in ("ERROR", "WARN") and time_of(line).startswith("2025-")
    assert speaker("(0021904) amaru.quispe (developer) 2025-09-16 09:40") == ("2025-09-16 09:40", "amaru.quispe")
    p = tmp_path / "gw.txt"
    p.write_text("\n".join([json_line.replace("07:05", f"07:0{n}") for n in range(5)]) + "\n\n"
                 "(0021904) amaru.quispe (developer) 2025-07-08 09:40\n"
                 "  The 500s come from the audit filter's codec limit.\n", encoding="utf-8")
    assert detect(p) == "log"
    recs = list(records(p))
    assert [r.kind for r in recs] == ["log"] * 5 + ["comment"] and recs[-1].author == "amaru.quispe"


def test_a_chat_topic_copied_from_the_browser_heads_posts_by_a_full_name_and_a_clock(tmp_path):
    """A Zulip topic copied under a broker log (bench/incidents36): "Lena Hartmann  04:21" over an indented post, on
    the day written between rules; one word before a clock ("Total  12:00") is no one speaking."""
    assert speaker("Lena Hartmann  04:21") == ("04:21", "Lena Hartmann")
    assert speaker("Alertmanager Bot  04:05") == ("04:05", "Alertmanager Bot") and speaker("Total  12:00") is None
    p = tmp_path / "broker.txt"
    p.write_text("".join(f"2025-10-21 02:4{n}:55,013 | WARN  | Transport Connection failed | broker\n" for n in range(9))
                 + "\n--- Tue, Oct 21 2025 ---\n\nLena Hartmann  04:21\n  Not the disk: /var/lib/activemq is at 41%.\n",
                 encoding="utf-8")
    recs = list(records(p))
    assert recs[-1].kind == "comment" and recs[-1].author == "Lena Hartmann" and "not the disk" in recs[-1].text.lower()
    assert seconds(recs[-1].time) == seconds("2025-10-21 04:21")


def test_a_merged_logs_lines_and_traces_keep_their_source_and_a_preface_leaves_it_a_log(tmp_path):
    """`kubectl logs --prefix`, `docker compose logs` and `pm2 logs` name each line by its source ("[pod/booking-
    api-7c9f6d8b5-t4mzx/api] ", "scanhub-1         | ", "2|storefront-api  | "), and a trace's lines too; a few lines
    of the person who saved it, then the command that printed it, stand over the log (bench/incidents40): a log whose
    traces stay with their error, not prose; a table whose first cell is a date has no source."""
    from poimen.text.log_lines import is_log_line, time_of

    for line in ("[pod/booking-api-7c9f6d8b5-t4mzx/api] 2025-02-11T06:30:40.881Z warn: Microsoft.Hosting[60]",
                 "scanhub-1         | 2025-06-03T04:12:09.121480Z ERROR scanhub::label: label worker stopped",
                 "2|storefront-api  | 2025-03-11T14:02:09.431+00:00: Error: read ECONNRESET"):
        assert is_log_line(line) and time_of(line).startswith("2025-")
    assert not is_log_line("Time | Who | Event")
    p = tmp_path / "booking.txt"
    p.write_text("booking-api, 11 Feb 2025 -- container log and the chat thread, times UTC.\n"
                 "Connection strings redacted by hand.\n\n"
                 "$ kubectl -n booking logs -l app=booking-api --prefix\n"
                 + "".join(f"[pod/booking-api-7c9f6d8b5-t4mzx/api] 2025-02-11T06:30:3{n}.204Z info: request served\n"
                           for n in range(8)) +
                 "[pod/booking-api-7c9f6d8b5-t4mzx/api] 2025-02-11T06:30:41.204Z info: Microsoft.Hosting.Lifetime[14]\n"
                 "[pod/booking-api-7c9f6d8b5-t4mzx/api]       Now listening on: http://[::]:8080\n"
                 "[pod/booking-api-7c9f6d8b5-lq8wn/api] 2025-02-11T06:31:02.118Z fail: Microsoft.EntityFrameworkCore[10]\n"
                 "[pod/booking-api-7c9f6d8b5-lq8wn/api]       Microsoft.Data.SqlClient.SqlException (0x80131904): A connection\n"
                 "[pod/booking-api-7c9f6d8b5-lq8wn/api]          at Microsoft.Data.SqlClient.SqlConnection.Open()\n"
                 "[pod/booking-api-7c9f6d8b5-t4mzx/api]       continued from another pod\n", encoding="utf-8")
    assert detect(p) == "log"
    logged = [(r.line_start, r.line_end) for r in records(p) if r.kind == "log" and r.text.startswith("[pod/")]
    assert logged[8:] == [(13, 14), (15, 17), (18, 18)]
    table = tmp_path / "incident-log.txt"
    table.write_text("INCIDENT LOG -- ingest platform\nOne line per incident.\n\n"
                     + "".join(f"2025-07-{10 + n} | SEV3 | IL-02{n} | backlog grew | closed\n" for n in range(5)))
    assert detect(table) != "log"


def test_basecamp_comments_irc_lines_and_ruby_logger_lines_under_a_log(tmp_path):
    """bench/incidents40: Ruby's Logger writes its level's letter first ("I, [2025-05-14T10:22:30.004112 #12]  INFO
    -- : …"), a log line, not a person "I" speaking; a Basecamp to-do copied under the log heads each indented comment
    "Fenna Ruiz · May 12 at 8:09am (edited)", on the log's year, not a line of the to-do above; an irssi log's
    "10:05 < ruth> …" is ruth speaking."""
    from poimen.text.log_lines import is_log_line

    assert is_log_line("I, [2025-05-14T10:22:30.004112 #12]  INFO -- : [a10e2b77] Started GET \"/up\"")
    assert speaker("Fenna Ruiz · May 12 at 8:17am (edited)") == ("May 12 at 8:17am", "Fenna Ruiz")
    assert speaker("10:05 < ruth> and the real fix: PR #388") == ("10:05", "ruth")
    assert speaker("08:52 <+promrelay> [FIRING:1] MeterReadingGap") == ("08:52", "promrelay")
    p = tmp_path / "rails.txt"
    p.write_text("".join(f"I, [2025-05-12T02:00:0{n}.1 #12]  INFO -- : job {n} done\n" for n in range(4))
                 + "E, [2025-05-12T02:00:09.5 #12] ERROR -- : ActiveRecord::ConnectionTimeoutError: could not obtain\n\n"
                 "[✓] Nightly price refresh failing\n    Added by Niels Achterberg on May 12\n\n"
                 "  Fenna Ruiz · May 12 at 8:09am\n  Every failing job dies with ConnectionTimeoutError.\n\n"
                 "  Fenna Ruiz · May 12 at 11:28am (edited)\n  PR #421: RAILS_MAX_THREADS 25 for sidekiq.\n",
                 encoding="utf-8")
    recs = list(records(p))
    assert [r.kind for r in recs[:5]] == ["log"] * 5
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, r.line_start, seconds(r.time)) for r in said] == [
        ("Fenna Ruiz", 10, seconds("2025-05-12T08:09:00")), ("Fenna Ruiz", 13, seconds("2025-05-12T11:28:00"))]


def test_an_ostickets_print_view_heads_each_entry_with_time_poster_and_kind():
    """osTicket's print view (bench/incidents42): "04/08/25 10:11 am   Mateo Okafor   [Internal Note]" is Mateo
    writing then, month first; a time, a word and a bracket that is no entry's kind is not."""
    assert speaker("04/08/25 10:11 am   Mateo Okafor   [Internal Note]") == ("04/08/25 10:11 am", "Mateo Okafor")
    assert speaker("04/08/25 11:47 am   deploy-bot   [Internal Note]") == ("04/08/25 11:47 am", "deploy-bot")
    assert seconds("04/08/25 10:11 am") == seconds("2025-04-08T10:11:00")
    assert speaker("2025-04-08 10:11:02   worker-3   [pool=hikari] 24 active") is None
