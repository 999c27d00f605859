"""Readers (issue 27, build item 1): each format's records, their file lines, detection by content, the
--format and --fields overrides, and the one-line error for a format poimen does not know."""

from __future__ import annotations

import json

import pytest

from poimen.inputs.chunking import iter_chunks, records
from poimen.errors import ConfigError, SourceError
from poimen.inputs.reading import Reading
from poimen.inputs.readers import FORMATS, UnknownFormat, format_of
from poimen.inputs.readers.detect import detect
from poimen.inputs.readers.shell import is_prompt
from poimen.inputs.source_lines import SourceFinder, SourceText
from reader_helpers import FIXTURES, fixture, lines_of


def test_slack_export_threads_replies_names_people_and_skips_joins(tmp_path):
    p = fixture(tmp_path, "slack-incidents.json")
    assert detect(p) == "chat"
    recs = list(records(p))
    assert [r.kind for r in recs] == ["message", "reply", "reply", "message"]  # the channel_join is gone
    parent, first, fix, bot = recs
    assert parent.thread == first.thread == fix.thread == "1714556040.001200"
    assert fix.text == "[2024-05-01T09:50:00Z] Marco Bianchi: raised max_connections to 200 in pgbouncer.ini, 502s gone"
    assert "@Marco Bianchi can you look" in parent.text  # a <@U…> mention written with the name the file gives
    assert bot.author == "PagerDuty" and "RESOLVED: checkout-api 5xx rate" in bot.text
    assert fix.time == "1714557000.004500"
    # each message spans the lines of its JSON object
    assert '"ts": "1714557000.004500"' in lines_of(p, fix.line_start, fix.line_end)
    assert lines_of(p, fix.line_start, fix.line_start).strip() == "{"
    assert lines_of(p, fix.line_end, fix.line_end).strip().startswith("}")


def test_a_slack_message_unit_resolves_to_its_json_objects_lines(tmp_path):
    p = fixture(tmp_path, "slack-incidents.json")
    ref = SourceFinder([tmp_path], readings={}).locate(p.name, "raised max_connections to 200 in pgbouncer.ini")
    assert (ref.first_line, ref.last_line) == (27, 34), ref.label()


def test_mattermost_posts_thread_by_root_id(tmp_path):
    posts = [{"id": "p1", "create_at": 1714556040000, "user_id": "u1", "username": "priya", "root_id": "",
              "message": "disk full on db-3", "type": ""},
             {"id": "p2", "create_at": 1714556100000, "user_id": "u9", "root_id": "", "message": "joined", "type": "system_join_channel"},
             {"id": "p3", "create_at": 1714556200000, "user_id": "u2", "username": "marco", "root_id": "p1",
              "message": "rotated the WAL, 40% free"}]
    p = tmp_path / "mm.json"
    p.write_text(json.dumps({"order": ["p3", "p2", "p1"], "posts": {x["id"]: x for x in posts}}, indent=1))
    recs = list(records(p))
    assert [(r.kind, r.thread, r.author) for r in recs] == [("message", "p1", "priya"), ("reply", "p1", "marco")]
    assert recs[1].text == "[2024-05-01T09:36:40Z] marco: rotated the WAL, 40% free"


def test_jira_csv_ticket_and_each_repeated_comment_column(tmp_path):
    p = fixture(tmp_path, "jira-export.csv")
    recs = list(records(p))
    assert [(r.kind, r.thread) for r in recs] == [("ticket", "OPS-1201"), ("comment", "OPS-1201"), ("comment", "OPS-1201"),
                                                  ("ticket", "OPS-1202")]
    ticket, diag, fix, _ = recs
    assert ticket.text.startswith("[2024-05-01 09:14] priya: OPS-1201: Uploads rejected with 413\nUsers get 413")
    assert (ticket.line_start, ticket.line_end) == (2, 3)  # the quoted description spans two file lines
    assert fix.author == "priya" and fix.text.endswith("rolled out chart v3.8.1, uploads OK")
    assert ("status", "Done") in ticket.attrs


def test_github_issues_json_tickets_with_comment_records_on_their_own_lines(tmp_path):
    p = fixture(tmp_path, "github-issues.json")
    assert detect(p) == "json"
    recs = list(records(p))
    assert [(r.kind, r.thread, r.author) for r in recs] == [("ticket", "812", "octocat"), ("comment", "812", "maint"),
                                                            ("comment", "812", "octocat"), ("ticket", "813", "newbie")]
    assert recs[0].text.startswith("[2024-04-02T10:00:00Z] octocat: Worker OOMKilled after upgrade to 2.4\nSince 2.4")
    assert "WORKER_PREFETCH=4" in lines_of(p, recs[1].line_start, recs[1].line_end)


def test_json_lines_of_arbitrary_records_find_their_fields_or_take_the_override(tmp_path):
    rows = [{"id": i, "level": "info", "host": "web-1", "created_at": f"2024-05-01T10:0{i}:00Z", "who": "deploy-bot",
             "body": f"rolled out build {100 + i} to canary"} for i in range(3)]
    p = tmp_path / "events.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    first = next(records(p))
    assert first.text == "[2024-05-01T10:00:00Z] rolled out build 100 to canary"  # "who" is no known author key
    named = next(records(p, fields="author=who,text=host"))
    assert named.text == "[2024-05-01T10:00:00Z] deploy-bot: web-1" and named.author == "deploy-bot"
    # no known text key: the longest string field that varies
    q = tmp_path / "odd.jsonl"
    q.write_text("\n".join(json.dumps({"k": "same", "what": f"the queue backed up behind job {i}"}) for i in range(3)))
    assert next(records(q)).text == "the queue backed up behind job 0"


def test_markdown_sections_tables_and_fences(tmp_path):
    p = fixture(tmp_path, "pagerduty-timeline.md")
    recs = list(records(p))
    rows = [r for r in recs if r.kind == "table_row"]
    assert [r.text for r in rows] == ["Time: 08:47; Event: Chart rolled out to prod-eu-1. First 413 responses.",
                                      "Time: 09:21; Event: Kong suspected; ruled out at 09:23."]
    assert [r.line_start for r in rows] == [7, 8]
    fix = next(r for r in recs if "proxy-body-size` to 64m" in r.text)
    assert fix.headings == ("INC-2231: uploads rejected with 413", "Resolution") and (fix.line_start, fix.line_end) == (12, 13)
    assert {r.kind for r in recs if "kubectl" in r.text} == {"code"}


def test_a_java_trace_joins_its_log_line_and_keeps_its_lines(tmp_path):
    p = fixture(tmp_path, "java-service.log")
    recs = list(records(p))
    error = recs[0]
    assert error.level == "ERROR" and (error.line_start, error.line_end) == (1, 6)
    assert error.text.split("\n")[-2:] == ["Caused by: org.apache.tomcat.util.http.InvalidParameterException: limit 10240", "... 42 more"]
    assert [r.line_start for r in recs[1:]] == [7, 9] and recs[1].level == "INFO"


def test_an_operators_notes_under_a_log_are_notes_at_the_logs_date(tmp_path):
    """'# 02:48  the pool keeps ...' and its indented '#   ...' lines are one note, at 02:48 on the log's date."""
    p = tmp_path / "billing-sync.log"
    p.write_text("2024-10-21 02:00:01,048 ERROR [billing_sync.scheduler] run=hourly-0200 batch aborted\n"
                 "\n"
                 "# on-call notes, billing-sync\n"
                 "# 02:48  the pool keeps its 5 connections idle for ~56 min between runs. since last Thursday\n"
                 "#        the NLB drops idle TCP flows after 350 s.\n"
                 "# 03:39  shipped 4.12.3: engine now created with pool_recycle=280\n", encoding="utf-8")
    recs = list(records(p))
    assert [r.kind for r in recs] == ["log", "note", "note", "note"]
    pool, fix = recs[2], recs[3]
    assert (pool.line_start, pool.line_end, pool.time) == (4, 5, "2024-10-21T02:48:00")
    assert fix.time == "2024-10-21T03:39:00" and recs[1].time == ""


def test_a_shell_session_with_notes_as_a_txt(tmp_path):
    p = fixture(tmp_path, "kubectl-session.txt")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [r.kind for r in recs] == ["note", "command", "output", "command", "output", "note", "command", "output"]
    helm = recs[6]
    assert helm.attrs == (("command", "helm upgrade payments ./chart -n payments --set redis.url=redis://redis:6379"),)
    assert recs[7].thread == helm.thread and recs[3].author == "sre@bastion"
    assert (recs[2].line_start, recs[2].line_end) == (3, 4)


@pytest.mark.parametrize("name, content, expected", [
    ("chan.json", FIXTURES.joinpath("slack-incidents.json").read_text(), "chat"),
    ("service.txt", "2024-05-01 10:00:01 INFO start\n2024-05-01 10:00:02 WARN slow\n2024-05-01 10:00:03 ERROR down\n", "log"),
    ("session.log", "$ ls\nfile\n$ cat file\nhello\n", "shell"),
    ("export.json", '{"a": 1}\n{"a": 2}\n', "jsonl"),
    ("notes", "# Heading\n\nno suffix at all\n", None),
    ("notes.md", "| a | b |\n|---|---|\n| 1 | 2 |\n", "markdown"),
    ("apache.log", "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok\n", "log"),
    ("tickets.dat", "Key,Summary,Description\nA-1,x,y\n", "csv"),
    # a log pasted under a title: a rule-framed path, a "#" line, both (bench/incidents20)
    ("console.txt", "=== wf-bill-02:/opt/wildfly/standalone/log/console.log -- 2025-03-03 ===\n"
                    "01:00:00,004 INFO  [billing.Run] (EJB default - 1) run started\n"
                    "01:00:00,212 INFO  [billing.Run] (EJB default - 2) batch queued\n"
                    "01:14:22,130 ERROR [billing.Run] (EJB default - 37) batch failed\n", "log"),
    ("excerpt.txt", "### rate-engine -- log excerpts\n### pattern: %d [%t] %-5level %logger - %msg%n\n\n"
                    "---- 2025-02-11, pod rate-engine-7c9d5b6f48-xk2lp ----\n"
                    "2025-02-11 08:51:58,204 [main] INFO  c.k.RateEngine - Starting\n"
                    "2025-02-11 08:52:03,377 [main] INFO  c.z.HikariDataSource - HikariPool-1 - Starting...\n"
                    "2025-02-11 09:02:43,552 [exec-9] ERROR c.k.Quote - quote failed\n", "log"),
    ("report.txt", "### Incident report\nThe checkout failed for an hour.\nWe rolled back.\n", "text"),
])
def test_detection_by_content_not_only_by_suffix(tmp_path, name, content, expected):
    p = tmp_path / name
    p.write_text(content)
    if expected is None:
        with pytest.raises(UnknownFormat) as err:
            detect(p)
        assert str(err.value).count("\n") == 0 and all(f in str(err.value) for f in FORMATS)
    else:
        assert detect(p) == expected


def test_format_override_and_the_one_line_error_for_an_unknown_one(tmp_path):
    p = tmp_path / "session.log"
    p.write_text("$ ls\nfile\n")
    assert format_of(p, "log").name == "log" and [r.kind for r in records(p, fmt="log")] == ["log", "log"]
    with pytest.raises(UnknownFormat) as err:
        Reading(format="slak")
    assert str(err.value) == f"unknown format 'slak'; poimen reads {', '.join(FORMATS)}"
    with pytest.raises(ConfigError):
        Reading(fields="text")
    assert Reading(per_file=(("exports/*.json", "json"),), format="text").format_for("exports/a.json") == "json"
    assert Reading(per_file=(("exports/*.json", "json"),), format="text").format_for("b.txt") == "text"


def test_mem_run_reads_a_slack_export_and_takes_format(tmp_path):
    from typer.testing import CliRunner

    from poimen.cli.app import app

    p = fixture(tmp_path, "slack-incidents.json", "chan.json")
    env = {"POIMEN_HOME": str(tmp_path / "home"), "POIMEN_EMBEDDER": "hash"}
    res = CliRunner().invoke(app, ["run", "--query", "how was the 502 fixed?", "--no-index", str(p)], env=env)
    assert res.exit_code == 0, res.output
    bad = CliRunner().invoke(app, ["run", "--query", "q", "--format", "slak", str(p)], env=env)
    assert bad.exit_code == 1 and "unknown format 'slak'; poimen reads text, markdown" in bad.output
    as_text = CliRunner().invoke(app, ["run", "--query", "q", "--no-index", "--format", "text", str(p)], env=env)
    assert as_text.exit_code == 0, as_text.output
    noted = (tmp_path / "home" / "sources.formats").read_text()
    assert noted == "chan.json\ttext\t\n"


def test_source_text_maps_a_table_row_to_its_line(tmp_path):
    p = fixture(tmp_path, "pagerduty-timeline.md")
    text = SourceText(p)
    at = text.find("Time: 09:21; Event: Kong suspected")
    assert at is not None and text.line_at(at[0]) == 8


def test_every_format_keeps_chunks_faithful_to_records(tmp_path):
    for name in ("slack-incidents.json", "jira-export.csv", "github-issues.json", "kubectl-session.txt"):
        p = fixture(tmp_path, name)
        sep = format_of(p).separator
        assert sep.join(c.text for c in iter_chunks(p)) == sep.join(r.text for r in records(p)), name


def test_broken_json_is_one_line_naming_the_file_and_line(tmp_path):
    p = tmp_path / "chan.json"
    p.write_text('[\n {"ts": "1", "type": "message", "text": "a"},\n {"ts": \n]\n')
    with pytest.raises(SourceError) as err:
        list(iter_chunks(p))
    assert str(err.value).startswith(f"{p}:4: invalid JSON")


def test_prompt_shapes_with_a_clock_a_context_and_rhels_brackets_and_what_date_prints(tmp_path):
    p = tmp_path / "jump.txt"
    p.write_text("[13:58:07] jlo@jump01 (prod-use1) ~ $ # node pool finished rotating\n"
                 "[13:58:19] jlo@jump01 (prod-use1) ~ $ kubectl get pods -A\n"
                 "No resources found\n"
                 "[root@db1 data]# date -u\n"
                 "Tue Oct  8 11:21:40 UTC 2024\n"
                 "user@host ~/src $ make\n", encoding="utf-8")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [r.kind for r in recs] == ["note", "command", "output", "command", "output", "command"]
    assert (recs[0].time, recs[1].time, recs[1].author) == ("13:58:07", "13:58:19", "jlo@jump01")
    assert recs[3].author == "root@db1" and recs[5].author == "user@host"
    assert recs[4].time == "Tue Oct  8 11:21:40 UTC 2024" and recs[2].time == ""  # only `date` prints a time


def test_a_prompt_with_nothing_typed_ends_the_output_above_it(tmp_path):
    """An operator presses Enter after ``date``: the empty prompt is no output of it, so the clock it printed is
    still read, and a session quiet for hours is two stretches (bench/incidents9)."""
    p = tmp_path / "lb.txt"
    p.write_text("dana@edge-lb-01:~$ date\nMon Jun 17 10:38:02 UTC 2024\ndana@edge-lb-01:~$ \n"
                 "dana@edge-lb-01:~$ date\nMon Jun 17 19:07:45 UTC 2024\n$\n", encoding="utf-8")
    recs = list(records(p))
    assert [r.kind for r in recs] == ["command", "output", "command", "output"]
    assert [r.time for r in recs if r.kind == "output"] == ["Mon Jun 17 10:38:02 UTC 2024", "Mon Jun 17 19:07:45 UTC 2024"]


def test_prompts_without_a_user_in_a_container_and_from_a_laptops_theme(tmp_path):
    """Host-only and SUSE root prompts, a bare shell's, busybox's in a pod, oh-my-zsh's, fish's, a clock with a day
    name, kube-ps1's context: each is a command with its output under it, never prose."""
    p = tmp_path / "session.txt"
    p.write_text("cache-03:~$ redis-cli info memory\n"
                 "used_memory_human:3.91G\n"
                 "cache-03:~ # journalctl --vacuum-size=500M\n"
                 "Vacuuming done, freed 2.1G of archived journals\n"
                 "➜  infra git:(main) ✗ kubectl -n pay exec -it api-7d9f -- sh\n"
                 "/app $ cat /etc/app.yaml\n"
                 "pool: 8\n"
                 "/ # wget -qO- localhost:8080/healthz\n"
                 "bash-5.1$ exit\n"
                 "alice@laptop ~> make deploy\n"
                 "[Tue 14:05] (⎈|prod:pay) ops@jump:~$ kubectl get pods\n", encoding="utf-8")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [r.kind for r in recs] == ["command", "output", "command", "output", "command", "command", "output",
                                      "command", "command", "command", "command"]
    assert [r.author for r in recs[:3]] == ["cache-03", "", "cache-03"]
    assert dict(recs[5].attrs)["command"] == "cat /etc/app.yaml" and recs[10].time == "Tue 14:05"
    for prose in ("https://example.com/a#b c", "/var/log/syslog: permission denied", "(node:123) Warning: x"):
        assert not is_prompt(prose), prose


def test_issues_copied_from_a_tracker_page_file_their_comments_by_the_address_or_number_heading_each(tmp_path):
    """A GitLab or Redmine issue copied as text heads itself with its address ("==== https://…/-/issues/1187 ===="),
    or its tracker and number ("Bug #4471"): an export of two files each one's comments under it (bench/incidents20)."""
    p = tmp_path / "app.log"
    p.write_text("2025-02-11 09:02:43,571 [exec-9] ERROR c.k.Quote - quote failed\n\n"
                 "==== https://gitlab.example/pricing/rates/-/issues/1187 (copied from the web UI) ====\n\n"
                 "Priya Raman @praman · 2 weeks ago\nQuotes fail after 30 s.\n\n"
                 "Redmine -- https://redmine.example/issues/4471 (page text)\n\nBug #4471\n\n"
                 "#note-1  Updated by Ingrid Solberg about 1 month ago\nThe unit sets TasksMax=4096.\n", encoding="utf-8")
    recs = [r for r in records(p) if r.text.strip()]
    filed = [(r.kind, dict(r.attrs).get("ticket", "")) for r in recs]
    assert filed == [("log", ""), ("ticket", "#1187"), ("comment", "#1187"), ("ticket", "#4471"), ("ticket", "#4471"),
                     ("comment", "#4471")]


def test_the_shells_no_op_colon_with_words_is_a_note(tmp_path):
    """": crashing on exactly the six nodes …" is the operator writing down what they see, as "# …" is (the no-op
    ``:`` keeps it out of history's errors; bench/incidents33); ": ${X:=y}" sets a default and ": > f" empties a file:
    commands."""
    p = tmp_path / "session.txt"
    p.write_text("ops@adm:~$ : 13:05 page LokiIngestionStalled, logs missing from half the cluster\n"
                 "ops@adm:~$ kubectl -n obs get pods\n"
                 "promtail-2hx8d CrashLoopBackOff\n"
                 "ops@adm:~$ : restart does nothing, nofile is 1048576 anyway\n"
                 "ops@adm:~$ : ${REGION:=eu-central-1}\n"
                 "ops@adm:~$ : > /tmp/out.log\n", encoding="utf-8")
    recs = list(records(p))
    assert [r.kind for r in recs] == ["note", "command", "output", "note", "command", "command"]
    assert recs[0].time == "13:05" and recs[3].time == ""


def test_an_asciinema_recording_reads_as_a_session_at_its_events_lines(tmp_path):
    """An asciicast v2 file (bench/incidents38): its output events, joined as the terminal showed them (keystrokes
    echoed one event each, colours, bracketed paste), are the session; each record at its event's file line."""
    prompt = "\u001b[?2004h\u001b[01;32mmarta@ops-jump-4\u001b[00m:\u001b[01;34m~/billing\u001b[00m$ "
    events = [[0.1, "o", "\r\n"], [0.3, "o", prompt], *[[0.4 + n / 10, "o", c] for n, c in enumerate("date")],
              [1.5, "o", "\r\n\u001b[?2004l\r"], [1.6, "o", "Tue Jul  8 09:41:07 UTC 2025\r\n"], [1.7, "o", prompt],
              [2.0, "i", "x"], [4.5, "o", "# restart bought nothing"], [5.2, "o", "\r\n"], [5.3, "o", prompt],
              [7.6, "o", "kubectl -n billing get pods"], [8.5, "o", "\r\n"],
              [9.1, "o", "NAME    READY   STATUS\r\nrender-7c9f   0/1     CrashLoopBackOff\r\n"]]
    p = tmp_path / "oncall.cast"
    p.write_text(json.dumps({"version": 2, "width": 211, "height": 54}) + "\n"
                 + "\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [(r.kind, r.line_start, r.line_end) for r in recs] == [
        ("command", 3, 3), ("output", 9, 9), ("note", 10, 10), ("command", 14, 14), ("output", 17, 17)]
    assert recs[0].text == "marta@ops-jump-4:~/billing$ date" and recs[1].time == "Tue Jul  8 09:41:07 UTC 2025"
    assert recs[4].text == "NAME    READY   STATUS\nrender-7c9f   0/1     CrashLoopBackOff"
    bad = tmp_path / "broken.cast"
    bad.write_text(json.dumps({"version": 2, "width": 80, "height": 24}) + '\n[0.1, "o", "ok"]\n[0.2, "o"\n')
    with pytest.raises(SourceError, match=r"broken\.cast:3: invalid asciicast event"):
        list(records(bad))


def test_what_history_lists_are_the_sessions_commands_and_a_notes_file_read_back_is_a_page(tmp_path):
    """`history` under HISTTIMEFORMAT lists each command and "#" note with its time, and `cat ~/notes/INC-7794.md`
    prints the operator's write-up (bench/incidents38): commands and notes at their times, and a page with its
    parts, not a command's output."""
    p = tmp_path / "dba.txt"
    p.write_text("[dba@db-ops-7 ~]$ history | tail -n 3\n"
                 " 2330  2025-08-19 18:41:20  # INC-7794 billing-sync erroring on mysql-orders via the new NLB\n"
                 " 2344  2025-08-19 19:16:02  mysql -h mysql-orders-1 -e \"SET PERSIST max_connect_errors = 1000000\"\n"
                 " 2349  2025-08-19 19:46:10  # no 1129 for 28 min. INC-7794 resolved\n"
                 "[dba@db-ops-7 ~]$ cat ~/notes/INC-7794.md\n"
                 "# INC-7794 — mysql-orders refusing billing-sync\n\n## Fix\n\n"
                 "- `SET PERSIST max_connect_errors = 1000000` on both primaries.\n"
                 "[dba@db-ops-7 ~]$ uptime\n 19:59:01 up 212 days\n", encoding="utf-8")
    assert detect(p) == "shell"
    recs = list(records(p))
    assert [(r.kind, r.line_start, r.time) for r in recs[:4]] == [
        ("command", 1, ""), ("note", 2, "2025-08-19 18:41:20"), ("command", 3, "2025-08-19 19:16:02"),
        ("note", 4, "2025-08-19 19:46:10")]
    assert dict(recs[2].attrs)["command"].startswith("mysql -h mysql-orders-1")
    page = [r for r in recs if r.kind == "paragraph"]
    assert [(r.line_start, r.headings) for r in page] == [
        (6, ("INC-7794 — mysql-orders refusing billing-sync",)),
        (8, ("INC-7794 — mysql-orders refusing billing-sync", "Fix")),
        (10, ("INC-7794 — mysql-orders refusing billing-sync", "Fix"))]
    assert [r.kind for r in recs[-2:]] == ["command", "output"]
    timed = tmp_path / "history.txt"  # a history saved alone is a session by its timed lines
    timed.write_text("".join(f" {2300 + n}  2025-08-19 07:{40 + n}:09  kubectl get pods\n" for n in range(6)))
    assert detect(timed) == "shell" and {r.kind for r in records(timed)} == {"command"}


def test_a_stamped_capture_banner_dates_its_note_and_psql_transaction_prompts_are_prompts(tmp_path):
    """tmux captures saved under a banner note with the day and clock they were taken ("##### tcap: … 2025-04-05
    22:31:40 UTC"; bench/incidents38): the note is at that time; psql's prompt inside a transaction ("orders=*#")
    or after an error in one ("orders=!#") is a prompt, so the ALTER typed at it is a command."""
    p = tmp_path / "captures.log"
    p.write_text("##### tcap: tmux capture-pane -pJ -S - -t inc:1.0  (pane %4, ssh)  2025-04-03 02:58:15 UTC  d@t2\n"
                 "orders=# BEGIN;\nBEGIN\n"
                 "orders=*# ALTER SEQUENCE order_events_id_seq MINVALUE -2147483648 RESTART WITH -2147483648;\n"
                 "ALTER SEQUENCE\norders=!# ROLLBACK;\nROLLBACK\n"
                 "deepa@media-03:~$ # said on the day before, no stamp\n", encoding="utf-8")
    recs = list(records(p))
    assert [(r.kind, r.time) for r in recs] == [
        ("note", "2025-04-03 02:58:15 UTC"), ("command", ""), ("output", ""), ("command", ""), ("output", ""),
        ("command", ""), ("output", ""), ("note", "")]
    assert dict(recs[3].attrs)["command"].startswith("ALTER SEQUENCE")
