"""Readers for the exports people have (issue 27, build item 1): each tool's own shape read the way the tool writes
it. Every fixture is hand-written in the tool's format."""

from __future__ import annotations

import json

import pytest

from poimen.inputs.chunking import iter_chunks, records
from poimen.inputs.readers import format_of
from poimen.inputs.readers.detect import detect
from poimen.inputs.source_lines import SourceFinder
from reader_helpers import fixture, lines_of


# ---- CSV ticket exports -------------------------------------------------------------------------------------

def test_github_csv_tools_rows_are_one_ticket_and_a_comment_per_row(tmp_path):
    p = fixture(tmp_path, "github-csv-tools.csv")
    assert detect(p) == "csv"
    recs = list(records(p))
    assert [(r.kind, r.thread, r.author) for r in recs] == [
        ("ticket", "31", "octocat"), ("comment", "31", "maint"), ("comment", "31", "octocat"), ("ticket", "32", "newbie")]
    ticket, fix, done, _ = recs
    assert ticket.text.startswith("[2024-04-02T10:00:00Z] octocat: 31: Worker pods OOMKilled after 2.4\nSince 2.4")
    assert ticket.text.count("OOMKilled (exit 137)") == 1  # the body repeated on every row is read once
    assert (ticket.line_start, ticket.line_end) == (2, 4) and ("state", "closed") in ticket.attrs
    assert fix.time == "2024-04-02T12:00:00Z" and fix.text.endswith("Set WORKER_PREFETCH=4 and the memory is flat.")
    # a comment keeps the lines of its own cell, not those of the issue body repeated before it
    assert (fix.line_start, fix.line_end) == (7, 8) and "WORKER_PREFETCH=4" in lines_of(p, fix.line_start, fix.line_end)
    assert (done.line_start, done.line_end) == (11, 11)


def test_jira_cloud_csv_finds_its_columns_by_name(tmp_path):
    p = fixture(tmp_path, "jira-cloud.csv")
    recs = list(records(p))
    assert [(r.kind, r.thread) for r in recs] == [("ticket", "DBA-77")] + [("comment", "DBA-77")] * 3 + [("ticket", "DBA-78")]
    ticket, _, _, fix, other = recs
    assert ticket.author == "Automation for Jira" and ticket.time == "08/May/24 6:05 AM"  # Reporter, Created
    assert ticket.text.endswith("DBA-77: Nightly pg_dump fails on the replica\npg_dump: error: canceling statement"
                                " due to conflict with recovery\nDump runs against db-replica-2.")
    assert ("labels", "backup") in ticket.attrs and ("labels", "postgres") in ticket.attrs  # Jira repeats "Labels"
    assert fix.time == "09/May/24 4:40 PM" and fix.author == "61d2f0a7c1e9b3006a8e2c11"
    assert fix.text.endswith("Set max_standby_streaming_delay = 6h on db-replica-2, dump finished.")
    assert other.thread == "DBA-78" and other.author == "Ken Ito"


# ---- GitHub issues as JSON ----------------------------------------------------------------------------------

def test_github_rest_issues_with_comments_keyed_by_issue_url(tmp_path):
    p = fixture(tmp_path, "github-rest-issues.json")
    assert detect(p) == "json"
    recs = list(records(p))
    assert [(r.kind, r.thread, r.author) for r in recs] == [
        ("ticket", "7", "rvl"), ("comment", "7", "maint"), ("comment", "7", "maint"), ("ticket", "8", "tessa"),
        ("comment", "https://api.github.com/repos/acme/relay/issues/5", "rvl")]  # its issue is not in the file
    ticket, _, fix, _, _ = recs
    assert ticket.text == ("[2024-03-05T08:41:17Z] rvl: x509: certificate signed by unknown authority since 2.4.0\n"
                           "The sink cannot reach the broker over TLS after the upgrade.")
    assert fix.time == "2024-03-06T14:22:01Z" and "ca-certificates.crt" in lines_of(p, fix.line_start, fix.line_end)
    assert lines_of(p, fix.line_start, fix.line_start).strip() == "{"
    # the REST list alone ("comments" a count): each issue a ticket in its own thread
    plain = tmp_path / "issues.json"
    plain.write_text(json.dumps(json.loads(p.read_text())["issues"], indent=2))
    assert [(r.kind, r.thread, r.author) for r in records(plain)] == [("ticket", "7", "rvl"), ("ticket", "8", "tessa")]


def test_gh_issue_list_json_with_nested_comments(tmp_path):
    p = fixture(tmp_path, "gh-issue-list.json")
    recs = list(records(p))
    assert [(r.kind, r.thread, r.author, r.time) for r in recs] == [
        ("ticket", "41", "rosa-s", "2024-03-05T09:00:00Z"), ("comment", "41", "hamid", "2024-03-05T10:12:00Z"),
        ("ticket", "42", "mira-t", "2024-03-06T08:00:00Z")]
    assert recs[1].text.endswith("set `sasl.mechanism: SCRAM-SHA-512`.")
    assert "SCRAM-SHA-512" in lines_of(p, recs[1].line_start, recs[1].line_end)


# ---- chat exports -------------------------------------------------------------------------------------------

def test_mattermost_bulk_export_posts_and_replies_threaded(tmp_path):
    p = fixture(tmp_path, "mattermost-bulk.jsonl")
    assert detect(p) == "chat"
    recs = list(records(p))
    assert [(r.kind, r.author, r.line_start) for r in recs] == [
        ("message", "alertmanager", 5), ("message", "ana", 6), ("reply", "omar", 6), ("reply", "ana", 6),
        ("message", "omar", 7)]  # version, team, channel and user lines say nothing
    alert, post, _, fix, direct = recs
    assert alert.text == ("[2024-05-02T08:00:00Z] alertmanager: [FIRING:1] DiskFull db-7\nfree < 5% on /var/lib/mysql\n"
                          "severity: page")
    assert post.text.endswith("db-7 binlogs filled the disk & replication stopped")  # Go's \u0026 read as "&"
    assert post.thread == fix.thread == "oncall:1714637100000" and not alert.thread
    assert fix.time == "1714639200000" and ("channel", "oncall") in fix.attrs
    assert direct.thread == "" and ("channel", "ana,omar") in direct.attrs
    assert [r.kind for r in records(p, fmt="jsonl")][:1] == ["record"]  # --format still reads it as it is told


def test_slack_bots_blocks_markup_and_rich_text_read_once(tmp_path):
    p = fixture(tmp_path, "slack-channel-day.json")
    alert, jon, deploy, mei = records(p)
    assert alert.text == ("[2024-05-07T08:31:00Z] Grafana: [Alerting] Queue depth high\ndepth > 10000 on orders-queue\n"
                          "Service: orders-worker")  # attachment title, text and fields; \/ and &gt; unescaped
    assert jon.kind == "reply" and jon.text == (
        "[2024-05-07T08:31:40Z] Jon Bakker: @here consumers stuck, see the queue board (https://grafana.example/d/q); "
        "@Mei Lin is on it in #ops")  # its rich_text block repeats the text and is not read again
    assert deploy.author == "deploy-bot" and deploy.text.split("\n")[1:] == [
        "*orders-worker* rolled back to `v4.1.2`", "*Cluster:* prod-eu-1", "by @Mei Lin"]
    assert mei.text == "[2024-05-07T08:38:20Z] Mei Lin: queue drained, the rollback fixed it:\n```depth 12 -> 0```"


# ---- application logs ---------------------------------------------------------------------------------------

def test_structured_json_log_lines_read_as_logs_among_plain_lines(tmp_path):
    p = fixture(tmp_path, "pino-mixed.log")
    assert detect(p) == "log"
    recs = list(records(p))
    assert [(r.kind, r.level, r.line_start) for r in recs] == [
        ("log", "", 1), ("log", "", 2), ("log", "INFO", 3), ("log", "ERROR", 4), ("log", "WARN", 5), ("log", "", 6)]
    started, failed, retry = recs[2:5]
    assert started.text == "2024-06-10T06:13:20Z INFO listening hostname=ledger-sync-7d9f-abcde port=8080"
    assert failed.time == "1718000061250" and failed.text.split("\n") == [
        "2024-06-10T06:14:21Z ERROR db connect failed hostname=ledger-sync-7d9f-abcde err.code=ECONNREFUSED",
        "Error: connect ECONNREFUSED 10.1.2.3:5432",
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)"]  # the stack's own lines
    assert retry.time == "2024-06-10T06:21:06.000Z" and "WARN retrying in 5s name=ledger-sync" in retry.text
    # a file of nothing but such lines is a log too, and as JSON Lines reads the same
    only = tmp_path / "app.log"
    only.write_text("\n".join(p.read_text().split("\n")[2:5]) + "\n")
    assert detect(only) == "log"
    jsonl = tmp_path / "app.jsonl"
    jsonl.write_text(only.read_text())
    assert [r.text for r in records(jsonl)] == [r.text for r in records(only)] == [r.text for r in recs[2:5]]


def test_a_go_panic_through_journald_is_one_trace(tmp_path):
    p = fixture(tmp_path, "journald-go-panic.log")
    recs = list(records(p))
    assert [(r.line_start, r.line_end) for r in recs] == [(1, 1), (2, 9), (10, 10), (11, 11), (12, 12)]
    panic = recs[1]
    assert panic.text.split("\n")[0].endswith("panic: runtime error: invalid memory address or nil pointer dereference")
    assert panic.text.split("\n")[-1].endswith("/src/cmd/edged/main.go:41 +0x1c5") and panic.time == "Jun 10 06:21:07"
    # another program's line ends the trace; an indented line with no trace above it stays a line of its own


def test_chained_python_traces_and_pasted_ticket_comments(tmp_path):
    p = fixture(tmp_path, "python-service-with-notes.log")
    recs = list(records(p))
    assert [(r.kind, r.line_start, r.line_end) for r in recs] == [
        ("log", 1, 12), ("log", 13, 13), ("log", 14, 17), ("log", 19, 19), ("log", 20, 20),
        ("comment", 22, 23), ("comment", 25, 26), ("comment", 28, 28), ("comment", 29, 30), ("log", 31, 31)]
    assert recs[0].text.split("\n")[-1] == "db.Unavailable: database unavailable"
    assert recs[2].text.split("\n")[-1].startswith("at com.zaxxer.hikari")  # across the blank line, "stack trace follows"
    notes, jira, chat, closing = recs[5:9]
    assert (notes.author, notes.time) == ("Ana Ruiz", "2024-06-10 06:41:10")
    assert notes.text.endswith("All 500s come from the pool. Database itself is idle.")
    assert (jira.author, jira.time) == ("Jana Novák", "10/Jun/24 7:02 AM") and "pool_timeout=5s" in jira.text
    assert (chat.author, chat.time) == ("Omar Haddad", "Jun 10, 2024 7:15 AM")
    assert closing.author == "Ana Ruiz" and closing.text.endswith("Closing, follow-up in ORD-88.")
    assert recs[-1].level == "INFO"  # "INFO Remoting:" is a log line, not a person named "INFO Remoting"


# ---- terminal sessions --------------------------------------------------------------------------------------

def test_a_recorded_session_with_a_psql_client_and_comment_prompts(tmp_path):
    p = fixture(tmp_path, "psql-session.log")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [(r.kind, r.line_start) for r in recs] == [
        ("log", 1), ("note", 2), ("command", 3), ("output", 4), ("command", 7), ("output", 8), ("note", 13),
        ("command", 14), ("output", 15), ("command", 16), ("note", 17), ("command", 18), ("log", 19)]
    start, paging, _, _, select, count, why, alter, _, _, fixed, _, done = recs
    assert start.time == "2024-06-11 14:02:10+00:00" and done.time == "2024-06-11 14:20:44+00:00"
    assert paging.author == "dba@db-1" and paging.text.endswith("# reporting is paging: too many clients. looking")
    assert select.attrs == (("command", "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction';"),)
    assert count.thread == select.thread and "188" in count.text
    assert why.text == "shop=# -- the 188 are all from the batch job, not the app"
    assert alter.attrs[0][1].startswith("ALTER ROLE batch SET idle_in_transaction_session_timeout")
    assert fixed.kind == "note" and fixed.author == "dba@db-1"  # the ^C the terminal echoed before the prompt


# ---- documents ----------------------------------------------------------------------------------------------

def test_markdown_export_key_value_box_bold_labels_setext_and_timeline_times(tmp_path):
    p = fixture(tmp_path, "incident-export.md")
    recs = list(records(p))
    title = "INC-77: Payment webhooks delayed"
    assert [(r.kind, r.line_start) for r in recs] == [
        ("paragraph", 1), ("table_row", 6), ("table_row", 7), ("paragraph", 11), ("paragraph", 13), ("paragraph", 15),
        ("table_row", 20), ("table_row", 21), ("paragraph", 23), ("paragraph", 26)]  # the "---" break is no record
    assert [r.text for r in recs[1:3]] == ["Severity: SEV2", "Services: webhook-relay"]
    assert recs[4].headings == (title, "What happened")  # a bold line heads what follows it
    assert recs[5].headings == (title, "Resolution") and recs[5].text.endswith("from 4 to 16.")
    assert [(r.time, r.headings) for r in recs[6:8]] == [("10:02", (title, "Resolution")), ("10:41", (title, "Resolution"))]
    assert recs[9].headings == (title, "Follow-ups")  # a setext heading ends the bold label's part


def test_plain_text_sections_parts_and_a_line_that_introduces_a_block(tmp_path):
    p = fixture(tmp_path, "plain-postmortem.txt")
    heads = {r.text.split("\n")[0]: r.headings[1:] for r in records(p)}
    assert heads["The relay logged, on every worker:"] == ("WHAT USERS SAW",)  # it introduces the quote, heads nothing
    assert heads["relay: worker pool exhausted (4/4 busy), queue age 2400s"] == ("WHAT USERS SAW",)
    assert heads["Retries from the backlog doubled the load."] == ("SECOND PROBLEM: RETRY STORM",)
    assert heads["For the stall:"] == ("REMEDIATION", "For the stall")  # a part of the section, which it keeps
    assert heads["For the storm:"] == ("REMEDIATION", "For the storm")


# ---- lineage ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, unit, lines", [
    ("github-csv-tools.csv", "Set WORKER_PREFETCH=4 and the memory is flat.", (8, 8)),  # its cell's 2nd line
    ("mattermost-bulk.jsonl", "set binlog_expire_logs_seconds = 259200 and purged, 61% free", (6, 6)),
    ("pino-mixed.log", "at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)", (4, 4)),
    ("journald-go-panic.log", "/src/route/table.go:88 +0x2a", (7, 7)),
    ("python-service-with-notes.log", "Raised POOL_SIZE from 10 to 40 and set pool_timeout=5s.", (26, 26)),
    ("psql-session.log", "shop=# -- the 188 are all from the batch job, not the app", (13, 13)),
    ("incident-export.md", "Severity: SEV2", (6, 6)),
])
def test_a_unit_of_each_export_resolves_to_its_file_lines(tmp_path, name, unit, lines):
    p = fixture(tmp_path, name)
    ref = SourceFinder([tmp_path], readings={}).locate(p.name, unit)
    assert (ref.first_line, ref.last_line) == lines, ref.label()
    sep = format_of(p).separator
    assert sep.join(c.text for c in iter_chunks(p)) == sep.join(r.text for r in records(p))


def test_comments_joined_in_one_cell_by_rule_lines_are_each_a_comment(tmp_path):
    p = tmp_path / "issues.csv"
    p.write_text('number,title,state,author,created_at,body,comments\n'
                 '497,docs build broken,closed,rafael,2024-04-15T08:30:10Z,"The docs job fails:\n'
                 'ImportError: soft_unicode","@rafael: cleared the pip cache, no change.\n'
                 '---\n'
                 '@ana: a fresh resolve picked up the new markupsafe.\n'
                 '---\n'
                 '@ana: #499 bumps jinja2 to 3.1.4. docs green."\n', encoding="utf-8")
    recs = list(records(p))
    comments = [r for r in recs if r.kind == "comment"]
    assert [(r.line_start, r.line_end) for r in comments] == [(3, 3), (5, 5), (7, 7)]
    assert all(r.thread == "497" for r in comments) and "---" not in "".join(r.text for r in comments)
    assert "#499 bumps jinja2" in lines_of(p, comments[2].line_start, comments[2].line_end)


def test_issues_whose_comments_an_export_script_nested_under_a_key_of_its_own(tmp_path):
    """GitHub's REST issue objects, with each issue's comments fetched and nested under "comments_data" (its own
    "comments" is a count), and labels that carry a description: the comments are the thread, the labels are not
    (bench/incidents21)."""
    label = {"id": 1, "name": "bug", "color": "d73a4a", "description": "Something isn't working as documented"}
    issue = {"number": 418, "title": "2.8.0: uploads to Ceph fail", "user": {"login": "tk"}, "comments": 2,
             "created_at": "2025-01-21T08:31:57Z", "labels": [label], "body": "XAmzContentSHA256Mismatch on every pack",
             "comments_data": [
                 {"user": {"login": "ines"}, "created_at": "2025-01-24T16:20:11Z",
                  "body": "Fixed in 2.8.1; on 2.8.0 set checksum_mode: when_required."},
                 {"user": {"login": "tk"}, "created_at": "2025-01-25T08:12:36Z",
                  "body": "2.8.1 on all three hosts, nightly ran clean."}]}
    p = tmp_path / "issues.json"
    p.write_text(json.dumps([issue], indent=2), encoding="utf-8")
    recs = list(records(p))
    assert [(r.kind, r.author) for r in recs] == [("ticket", "tk"), ("comment", "ines"), ("comment", "tk")]
    assert recs[1].text.endswith("set checksum_mode: when_required.") and recs[1].thread == "418"


def test_a_discord_bots_post_says_what_its_embeds_say(tmp_path):
    """DiscordChatExporter: an alert or deploy bot posts with an empty "content" and says it in "embeds" (title,
    description, fields); its message was the raw JSON object (bench/incidents21)."""
    bot = {"id": "1", "timestamp": "2025-03-04T09:06:33.771+00:00", "content": "",
           "author": {"name": "Alertmanager", "isBot": True},
           "embeds": [{"title": "[FIRING:1] LoginErrorRateHigh (edge-nginx prod)",
                       "description": "**Alert:** login 5xx ratio above 2% for 5m",
                       "fields": [{"name": "severity", "value": "page"}]}]}
    person = {"id": "2", "timestamp": "2025-03-04T09:08:12.250+00:00", "content": "looking", "embeds": [],
              "author": {"name": "rook", "isBot": False}}
    p = tmp_path / "ops.json"
    p.write_text(json.dumps({"channel": {"name": "ops"}, "messages": [bot, person]}, indent=2), encoding="utf-8")
    recs = list(records(p))
    assert [(r.kind, r.author) for r in recs] == [("message", "Alertmanager"), ("message", "rook")]
    assert recs[0].text.endswith("Alertmanager: [FIRING:1] LoginErrorRateHigh (edge-nginx prod)\n"
                                 "**Alert:** login 5xx ratio above 2% for 5m\nseverity: page")


def test_a_digests_numbered_titles_over_rules_head_their_incidents(tmp_path):
    """"1. pg-orders-replica-1: "too many clients" … (SEV-3)" over a rule as long as it heads that incident's part,
    as "Near miss: …" over its rule does (bench/incidents24); "- a bullet" over a short "---" stays an item."""
    p = tmp_path / "digest.md"
    p.write_text("Ops weekly digest\n=================\n\n"
                 "1. pg-orders-replica-1: too many clients (SEV-3)\n------------------------------------------------\n\n"
                 "- Cause: the rollup CronJob had the default concurrencyPolicy.\n\n"
                 "2. orders-api: OOMKilled after the flag rollout (SEV-2)\n"
                 "------------------------------------------------------\n\n"
                 "- Cause: the export flag went to 100%.\n\n"
                 "- an item\n---\n\nafter the break\n", encoding="utf-8")
    heads = {r.text: r.headings for r in records(p)}
    assert heads["- Cause: the rollup CronJob had the default concurrencyPolicy."] == (
        "Ops weekly digest", "1. pg-orders-replica-1: too many clients (SEV-3)")
    assert heads["- Cause: the export flag went to 100%."][-1] == "2. orders-api: OOMKilled after the flag rollout (SEV-2)"
    assert heads["after the break"] == ("Ops weekly digest", "2. orders-api: OOMKilled after the flag rollout (SEV-2)")
