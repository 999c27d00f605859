"""Readers for the exports people have (issue 27, build item 1): each tool's own shape read the way the tool writes
it. Every fixture is hand-written in the tool's format."""

from __future__ import annotations

from collections import Counter

from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from reader_helpers import fixture, lines_of


def kinds(recs) -> Counter:
    return Counter(r.kind for r in recs)


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
