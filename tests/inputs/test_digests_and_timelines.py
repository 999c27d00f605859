"""Shapes of write-ups and exports met in bench/incidents44 … 46: a digest's rule-boxed titles and capitalised items,
a status table with leader dots, an export's HTML comment, GitHub's REST timeline, fish in vi mode and Help Scout's
note headers. Each is read as its reader sees it."""

from __future__ import annotations

import json

from poimen.inputs.chunking import records
from poimen.inputs.readers.speakers import speaker
from poimen.text.headings import names_problem

RULE = "=" * 60
DIGEST = f"""\
POSTMORTEM DIGEST, Q2 2025

Hello all, two write-ups this quarter.


{RULE}
PM-2025-019 . SEV2 . 14 May 2025 . reports-worker pods stuck Pending after a node group change
Author: Sunniva Hart (Data Platform)
{RULE}

What happened

Six of the eight pods were Pending with a volume node affinity conflict.


{RULE}
PM-2025-024 . SEV2 . 17 Jun 2025 . label-worker could not scale out during the afternoon peak
Author: Kofi Mensah (Fulfilment)
{RULE}

What happened

The ReplicaSet could not create pods: exceeded quota fulfilment-compute.
"""


def _read(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return list(records(path))


def test_a_title_boxed_by_rules_heads_its_section_whatever_dots_stand_between_its_fields(tmp_path):
    recs = _read(tmp_path, "digest.txt", DIGEST)
    first = next(r for r in recs if "volume node affinity" in r.text)
    second = next(r for r in recs if "exceeded quota" in r.text)
    assert any(h.startswith("PM-2025-019") for h in first.headings)
    assert any(h.startswith("PM-2025-024") for h in second.headings)
    assert not any(h.startswith("PM-2025-019") for h in second.headings)


def test_a_line_in_prose_counts_its_dots_as_words_still(tmp_path):
    # outside a box a long line with separators is no heading: it is a sentence that happens to use them
    text = "Summary\n\nThe job . the queue . the workers . the nodes . the pods . the zone . the volumes . went on\n"
    recs = _read(tmp_path, "notes.txt", text)
    assert not any(h.startswith("The job") for r in recs for h in r.headings)


def test_an_item_in_capitals_with_its_number_opens_a_problem_and_a_sentence_about_an_item_does_not():
    assert names_problem("EDGE ITEM 1 - new tenant custom domains not going live (Tue 17 June to Thu 19 June)")
    assert names_problem("DB INCIDENT 2: replica lag")
    assert not names_problem("Item 1 was never done")
    assert not names_problem("EDGE ITEMS were green")


def test_a_long_capitalised_item_title_heads_its_section(tmp_path):
    text = ("Weekly digest\n\nHi all, two items this week.\n\n"
            "EDGE ITEM 1 - new tenant custom domains not going live (Tue 17 June to Thu 19 June)\n\n"
            "The config test failed on every run.\n\n"
            "EDGE ITEM 2 - edge-03 out of the pool after its reboot\n\n"
            "nginx did not come back after the reboot.\n")
    recs = _read(tmp_path, "digest.txt", text)
    config = next(r for r in recs if "config test" in r.text)
    reboot = next(r for r in recs if "did not come back" in r.text)
    assert any(h.startswith("EDGE ITEM 1") for h in config.headings)
    assert any(h.startswith("EDGE ITEM 2") for h in reboot.headings)


def test_a_status_table_with_leader_dots_is_rows_whatever_case_its_keys_have(tmp_path):
    text = ("SERVICE STATUS\n\n"
            "  checkout / storefront ........ GREEN   (99.97%)\n"
            "  custom domains (tenants) ..... AMBER   (new domains delayed)\n"
            "  CI / build ................... AMBER   (agent disk warnings)\n")
    rows = [r.text for r in _read(tmp_path, "status.txt", text) if r.kind == "table_row"]
    assert rows == ["checkout / storefront: GREEN   (99.97%)", "custom domains (tenants): AMBER   (new domains delayed)",
                    "CI / build: AMBER   (agent disk warnings)"]


def test_an_html_comment_in_markdown_is_no_record_and_the_page_under_it_reads_as_before(tmp_path):
    text = ("<!-- og2md 0.4: alert export rendered to Markdown.\n     Alerts: 5521, 5603. -->\n\n"
            "<!-- a comment over\n\ntwo paragraphs -->\n\n"
            "# Alert log\n\n## Alert #5521\n\nBackend be_checkout has no server available.\n")
    recs = _read(tmp_path, "alerts.md", text)
    assert not any("og2md" in r.text or "two paragraphs" in r.text for r in recs)
    said = next(r for r in recs if "no server available" in r.text)
    assert said.headings == ("Alert log", "Alert #5521") and said.line_start == 12


def test_a_rest_timeline_reads_each_commented_event_as_its_comment_and_a_label_as_nothing(tmp_path):
    issue = {"issue": {"number": 311, "title": "SSLError after moving to python:3.12", "body": "Every call fails.",
                       "user": {"login": "hkaraca"}, "created_at": "2025-07-01T07:48:26Z"},
             "timeline": [
                 {"event": "labeled", "label": {"name": "bug"}, "actor": {"login": "rquayle"},
                  "created_at": "2025-07-01T08:02:31Z"},
                 {"event": "commented", "body": "Checked the chain with openssl s_client, it is fine.",
                  "user": {"login": "hkaraca"}, "actor": {"login": "hkaraca"}, "created_at": "2025-07-01T09:15:55Z"},
                 {"event": "cross-referenced", "created_at": "2025-07-03T15:12:44Z",
                  "source": {"issue": {"title": "Add opt-in legacy_server_connect",
                                       "body": "Adds `legacy_server_connect` to Client."}}}]}
    path = tmp_path / "issues.json"
    path.write_text(json.dumps([issue], indent=2), encoding="utf-8")
    recs = list(records(path))
    comments = [r for r in recs if r.kind == "comment"]
    assert [c.author for c in comments] == ["hkaraca", ""]
    assert "openssl s_client" in comments[0].text and "legacy_server_connect" in comments[1].text
    assert {c.thread for c in comments} == {recs[0].thread}
    assert not any("bug" == r.text.strip() for r in recs)


def test_fish_in_vi_mode_is_a_prompt(tmp_path):
    text = ("Welcome to fish, the friendly interactive shell\n"
            "[I] lukas@tf-runner-02 ~/i/l/prod (main)> kubectl -n orders get pods\n"
            "NAME                          READY   STATUS    RESTARTS   AGE\n"
            "orders-api-5d9f7c8b6-2kq8v    1/1     Running   0          18h\n"
            "[I] lukas@tf-runner-02 ~/i/l/prod (main)> # the failing ones started after the node rotation\n"
            "[I] lukas@tf-runner-02 ~/i/l/prod (main)> helm rollback orders-api 57 -n orders\n"
            "Rollback was a success! Happy Helming!\n")
    recs = _read(tmp_path, "session.txt", text)
    assert [r.kind for r in recs if r.kind in ("command", "note")] == ["command", "note", "command"]
    assert next(r for r in recs if r.kind == "command").text.endswith("kubectl -n orders get pods")


def test_help_scout_heads_a_note_with_its_kind_then_the_author_and_time():
    assert speaker("Note · Lowri Pugh (Jul 8, 2025, 10:03 UTC)") == ("Jul 8, 2025, 10:03 UTC", "Lowri Pugh")
    assert speaker("Ruth Okonedo (Jul 8, 2025, 09:47 UTC)") == ("Jul 8, 2025, 09:47 UTC", "Ruth Okonedo")
    assert speaker("Note to self: restart it") is None


def test_openproject_heads_each_activity_with_its_number_author_and_time():
    assert speaker("#3  Owen Madoc  commented on 07/08/2025 08:31 AM") == ("07/08/2025 08:31 AM", "Owen Madoc")
    assert speaker("#1  Service Desk (sd.bot)  created on 07/08/2025 08:05 AM") == ("07/08/2025 08:05 AM",
                                                                                    "Service Desk")
    assert speaker("#3105 resolved on 07/08/2025 08:25 AM") is None


def test_a_note_that_says_it_is_over_logs_leaves_the_file_a_log(tmp_path):
    from poimen.inputs.readers.detect import detect
    log = ("2025-07-08 09:00:40,702 INFO  [org.fly.cor.int.com.DbMigrate] (main) Current version of schema: 56\n"
           "2025-07-08 09:41:05,771 ERROR [org.hib.eng.jdb.spi.SqlExceptionHelper] (executor-thread-11) ERROR: value "
           "too long for type character varying(35)\n"
           "2025-07-08 09:41:05,790 ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (executor-thread-11) HTTP Request "
           "to /api/v1/bank-imports failed\n\nRuth Okonedo (Jul 8, 2025, 09:47 UTC)\nHello, uploads fail since last week.\n")
    saved = tmp_path / "saved.txt"
    saved.write_text("vellum-invoicing, prod-eu, pod logs for conversation #77120\ngrabbed by Tomasz with: kubectl "
                     "-n invoicing logs vellum-invoicing-5f7c9d6b48-2mfrk\nall times UTC\n\n" + log, encoding="utf-8")
    assert detect(saved) == "log"
    # a report's title and summary over a table of stamped lines that carry no level stay prose
    table = tmp_path / "incident-log.txt"
    table.write_text("Incident log, platform team\nkept by hand since 2024\n\n2025-07-14 | SEV2 | IL-0219 | checkout "
                     "errors\n2025-07-15 | SEV3 | IL-0220 | slow search\n2025-07-16 | SEV2 | IL-0221 | login loop\n",
                     encoding="utf-8")
    assert detect(table) != "log"


TRAC = """\
2025-06-03T13:52:09.014Z ERROR 1 --- [dispatch-api] [io-8080-exec-14] o.a.c.c.C.[.[.[/].[dispatcherServlet] : Servlet.service() threw exception
2025-06-03T13:52:11.604Z ERROR 1 --- [dispatch-api] [nio-8080-exec-2] c.q.d.stop.StopCompletionService : stop completion failed

Ticket #4127 (closed defect: fixed)
Opened 2025-06-03T13:58:40Z
Drivers can't complete stops: HTTP 500 from dispatch-api

comment:7 Changed 2025-06-03T15:05:17Z by tmbeki

    That explains it: mail.smtp.timeout defaults to infinite.

Ticket #4133 (closed defect: fixed)
Opened 2025-06-05T06:48:02Z
Morning route reoptimisation runs twice

comment:1 Changed 2025-06-05T07:10:31Z by jfolau

    Is this the mail change from #4127?
"""


def test_trac_heads_a_ticket_and_each_comment_under_a_log(tmp_path):
    path = tmp_path / "dispatch.log"
    path.write_text(TRAC, encoding="utf-8")
    recs = list(records(path))
    said = [r for r in recs if r.kind == "comment" and r.text.startswith("comment:")]
    assert [(r.author, dict(r.attrs).get("ticket")) for r in said] == [("tmbeki", "#4127"), ("jfolau", "#4133")]
    assert said[0].time == "2025-06-03T15:05:17Z"
    assert dict(next(r for r in recs if "mail.smtp.timeout" in r.text).attrs).get("ticket") == "#4127"


def test_topdesk_cards_file_their_actions_by_number_and_a_directory_name_speaks(tmp_path):
    text = ("2025-06-10 07:40:03,118 ERROR [http-nio-8080-exec-1] permits.auth.OidcCallback - login failed\n"
            "2025-06-10 07:41:03,118 ERROR [http-nio-8080-exec-2] permits.auth.OidcCallback - login failed\n\n"
            "Incident  I 2506 0412\nBrief description: Planning officers get 400 after signing in\n\nAction:\n"
            "10-06-2025 10:31 Okafor, Daniel:\nFound it. The token carries every group.\n\n"
            "Incident  I 2506 0871\nBrief description: Applicants can't submit\n\nAction:\n"
            "17-06-2025 14:10 Okafor, Daniel:\nFix deployed with maxPartCount=\"50\".\n")
    path = tmp_path / "portal.log"
    path.write_text(text, encoding="utf-8")
    said = [r for r in records(path) if r.kind == "comment" and r.text[:1].isdigit()]
    assert [(r.author, dict(r.attrs).get("ticket"), r.time) for r in said] == [
        ("Okafor, Daniel", "I 2506 0412", "10-06-2025 10:31"), ("Okafor, Daniel", "I 2506 0871", "17-06-2025 14:10")]
    assert speaker("2025-06-10 08:12:01 ERROR Foo, Bar: failed") is None


def test_a_day_written_with_dashes_is_day_first_unless_it_cannot_be():
    from datetime import datetime, timezone

    from poimen.incidents.times import seconds
    assert seconds("10-06-2025 08:12") == datetime(2025, 6, 10, 8, 12, tzinfo=timezone.utc).timestamp()
    assert seconds("06-17-2025 09:25") == datetime(2025, 6, 17, 9, 25, tzinfo=timezone.utc).timestamp()
    assert seconds("10.03.2025 08:21") == datetime(2025, 3, 10, 8, 21, tzinfo=timezone.utc).timestamp()


def test_google_groups_heads_a_post_with_name_mark_time_and_list(tmp_path):
    text = ("06:58:16.409 [StreamThread-1] ERROR o.a.k.s.p.i.StreamThread - stream-thread failed\n"
            "06:58:17.002 [StreamThread-1] ERROR o.a.k.s.KafkaStreams - state transition to ERROR\n\n"
            "stock-agg in ERROR after this morning's deploy\n14 views\n\n"
            "Ines Calloway\nunread,\nAug 12, 2025, 8:04:51 AM\nto platform-oncall\n"
            "stock-agg went to ERROR right after the 07:55 deploy of 3.4.0.\n\n"
            "Hamid Oduya\nunread,\nAug 12, 2025, 9:48:09 AM\nto platform-oncall\n"
            "Fixed in stock-agg 3.4.1: replication.factor: 3 in application-prod.yml.\n")
    path = tmp_path / "stock-agg.log"
    path.write_text(text, encoding="utf-8")
    said = [(r.author, r.time) for r in records(path) if r.kind == "comment" and r.text.split("\n")[1:2] == ["unread,"]]
    assert said == [("Ines Calloway", "Aug 12, 2025, 8:04:51 AM"), ("Hamid Oduya", "Aug 12, 2025, 9:48:09 AM")]
    assert speaker("Hamid Oduya\nunread,\nAug 12, 2025, 9:48:09 AM\nto platform-oncall") == (
        "Aug 12, 2025, 9:48:09 AM", "Hamid Oduya")
    assert speaker("Hamid Oduya\nunread,\nto platform-oncall") is None
