"""Episodes: threads, sections (with part-headings folded), time gaps and topic shifts in a flow."""

from __future__ import annotations

import pytest

from incident_fixtures import PAGERDUTY, SHELL, SLACK, rec

from poimen import incidents as inc
from poimen.incidents.card import build_card
from poimen.incidents.episodes import episodes, section_path
from poimen.incidents.times import seconds
from poimen.inputs.chunking import records


def test_a_thread_is_one_episode_and_a_lone_message_is_flow():
    eps = episodes(SLACK, "slack")
    keys = [ep.key for ep in eps]
    assert keys == ["thread:1709388311.000200", "flow:0", "thread:1709402000.000100"]
    assert len(eps[0].records) == 8  # the fix, 1.5 hours after the alert, is in the alert's episode


def test_part_headings_fold_into_their_incident_section():
    assert section_path(("INC-4101: db", "Timeline")) == "INC-4101: db"
    assert section_path(("Postmortems", "2024-03 uploads", "Root cause")) == "Postmortems / 2024-03 uploads"
    assert [ep.key for ep in episodes(PAGERDUTY, "pd.md")] == ["section:INC-4101: payments-db connection exhaustion"]


def test_two_incident_sections_of_one_file_stay_apart():
    records = (rec("checkout-api 502s", 3, headings=("Postmortems", "INC-1 checkout", "Summary")),
               rec("Raised the limit", 5, headings=("Postmortems", "INC-1 checkout", "Resolution")),
               rec("search lag alert", 9, headings=("Postmortems", "INC-2 search", "Summary")))
    assert [len(ep.records) for ep in episodes(records)] == [2, 1]


def test_a_ticket_whose_title_begins_with_fix_is_no_part_of_the_page():
    """A ticket export as Markdown: each ticket a section under one page title. A ticket called "Fix ..." is an
    entry's title, not the page's "Fix" part: the page is no write-up, and every ticket stays its own incident."""
    titles = ["Fix Hadoop build on Debian 10 after the libc6 upgrade", "Fix flaky TestNetUtils"]
    titles += [f"NPE in component {n} on restart" for n in range(9)]
    records = tuple(rec(f"{t}: the build failed", 3 + 2 * n, headings=("Hadoop bugs", t))
                    for n, t in enumerate(titles))
    assert [len(ep.records) for ep in episodes(records)] == [1] * len(titles)
    assert section_path(("Hadoop bugs", titles[0])) == "Hadoop bugs / " + titles[0]


def test_a_part_heading_may_say_a_little_more():
    from poimen.incidents.cues import names_part

    for heading in ("Fix for the pool", "Root cause analysis", "Timeline (UTC)", "Follow-up OPS-4472: grep the "
                    "fleet for other debug drop-ins; salt should own journald.conf.d"):
        assert names_part(heading), heading
    assert not names_part("Fix Hadoop build on Debian 10 after the libc6 upgrade")


def test_a_flow_splits_on_a_time_gap():
    logs = (rec("2024-04-09 03:14:02 ERROR export failed", 1, "log"),
            rec("2024-04-09 03:14:09 ERROR export failed again", 2, "log"),
            rec("2024-04-09 05:40:00 ERROR export failed", 3, "log"))
    assert [len(ep.records) for ep in episodes(logs)] == [2, 1]


def test_a_flow_splits_on_a_topic_shift_but_not_without_names():
    flow = (rec("checkout-api 502s on ip-10-0-1-2", 1, "message"),
            rec("looking", 2, "message"),
            rec("checkout-api back after restart", 3, "message"),
            rec("search-indexer lag on es-data-3", 4, "message"),
            rec("search-indexer consumer stuck", 5, "message"))
    assert [len(ep.records) for ep in episodes(flow)] == [3, 2]


def test_a_message_about_the_incident_before_goes_back_to_it_while_both_are_worked():
    """Two incidents worked at once in one channel: the fix of the first, told after the second began, goes with
    the first while it is still open (within the gap), not with the second."""
    t = "2024-09-12T14:{}:00Z"
    flow = (rec("orders-api 5xx: remaining connection slots are reserved", 1, "message", time=t.format("02")),
            rec("orders-api pods opening 40 connections each to pg-orders-1", 2, "message", time=t.format("05")),
            rec("RabbitMQMemoryAlarm firing on rabbit-eu-2", 3, "message", time=t.format("15")),
            rec("rabbit-eu-2 memory held by the notifications.retry queue", 4, "message", time=t.format("17")),
            rec("orders-api now goes through pgbouncer-orders, PR #4471 merged", 5, "message", time=t.format("20")))
    eps = episodes(flow)
    assert [[r.line_start for r in ep.records] for ep in eps] == [[1, 2, 5], [3, 4]]


def test_a_shell_session_without_times_is_cut_by_structure_only():
    assert len(episodes(SHELL, "shell")) == 1


def test_time_formats():
    assert seconds("1709388311.000200") == 1709388311.0002
    assert seconds("2024-03-02T14:05:11Z") == seconds("2024-03-02 15:05:11+01:00")
    assert seconds("2024-03-02 14:05:11,123") - seconds("2024-03-02 14:04:11") == 60
    assert seconds("[02/Mar/2024:14:05:11 +0000]") == seconds("2024-03-02T14:05:11Z")
    assert seconds("Mar  2 14:05:11") - seconds("Mar  2 14:00:11") == 300
    assert seconds("14:05") == 14 * 3600 + 5 * 60
    assert seconds("no time here") is None and seconds("2024-13-40 10:00") is None


def test_what_date_and_asctime_print():
    assert seconds("Tue Oct  8 11:21:40 UTC 2024") == seconds("2024-10-08T11:21:40Z")
    assert seconds("Wed Jan  3 09:00:01 2024") == seconds("2024-01-03T09:00:01Z")


def _session(*lines: tuple[str, str]):
    return tuple(rec(text, n, kind) for n, (kind, text) in enumerate(lines, 1))


@pytest.mark.parametrize("lines", [
    (("note", "$ # checkout-api 502s, paged"), ("command", "$ kubectl -n shop rollout restart deploy/checkout-api"),
     ("note", "$ # ===== 14:00 same host: disk alert on /var/lib/postgresql (87%) ====="),
     ("command", "$ df -h /var/lib/postgresql")),
    # after the label an operator types on every note
    (("note", "$ # notes: slot-reconciler CrashLoopBackOff, paged"),
     ("command", "$ helm -n fulfil upgrade slot-reconciler brindle/slot-reconciler --set image.tag=1.2"),
     ("note", "$ # notes: ---- 15:34, new page: tracking-poller p99 9.8s ----"),
     ("command", "$ kubectl -n fulfil logs deploy/tracking-poller")),
])
def test_an_operators_separator_note_starts_a_new_episode(lines):
    assert [len(ep.records) for ep in episodes(_session(*lines))] == [2, 2]


def test_a_note_that_asks_about_another_service_stays_in_the_investigation():
    session = _session(("note", "$ # reports-worker tasks failing, can't get a db connection"),
                       ("output", "ERROR reports-worker: remaining connection slots are reserved"),
                       ("note", "$ # ledger-api was restarted this morning, is it the new pods hogging connections?"),
                       ("note", "$ # moving on to search-indexer now"))
    # the question names a suspect; the plain statement naming other services is a new topic
    assert [len(ep.records) for ep in episodes(session)] == [3, 1]


def test_a_suspect_asked_about_is_not_what_the_story_is_about():
    # a chat copied into a handover (bench/incidents47's shape): the question names the database as a suspect; the
    # answer that names the app the story was about all along goes on with it
    said = ("4.2.1 going out", "crashloop again, the pods won't start",
            "DB team said pgdb-main had a failover overnight? maybe it's that",
            "DBA here: no failover overnight, that was staging. ledger-web talks to the primary",
            "found it: migration 31 builds its index CONCURRENTLY inside a transaction")
    chat = (rec("Handover, copied from the chat", 1),) + tuple(
        rec(text, 3 + 2 * i, "message", time=f"2025-03-04 08:0{i}", author="Ines") for i, text in enumerate(said))
    assert [len(ep.records) for ep in episodes(chat)] == [6]
    told = chat[:3] + (rec("DB team said pgdb-main had a failover overnight", 7, "message",
                           time="2025-03-04 08:02", author="Ines"),) + chat[4:]
    assert [len(ep.records) for ep in episodes(told)] == [4, 2]  # (said, not asked: the story had named it)


def test_a_commands_output_stays_with_its_command_whatever_it_names():
    session = _session(("note", "$ # search-indexer pods crashing"), ("command", "$ kubectl -n search describe pod x"),
                       ("output", "Warning  Failed  default-scheduler  0/7 nodes are available: Error"))
    assert len(episodes(session)) == 1


def test_a_failure_reported_after_a_silence_is_a_new_page_not_a_late_comment():
    session = (rec("[13:58:07] jlo@jump01 ~ $ # nginx-edge pods in ImagePullBackOff", 1, "note", time="13:58:07"),
               rec("[14:04:02] jlo@jump01 ~ $ kubectl -n web patch serviceaccount default -p x", 2, "command",
                   time="14:04:02"),
               rec("[14:06:40] jlo@jump01 ~ $ # all pulled with the authenticated account", 3, "note", time="14:06:40"),
               rec("[15:06:55] jlo@jump01 ~ $ # customer reports: certificate errors, webhooks failing", 4, "note",
                   time="15:06:55"),
               rec("[15:07:20] jlo@jump01 ~ $ curl -sv https://api.example.com/healthz", 5, "command", time="15:07:20"))
    assert [[r.line_start for r in ep.records] for ep in episodes(session)] == [[1, 2, 3], [4, 5]]


def test_a_note_after_a_silence_that_the_commands_resume_from_opens_the_next_stretch():
    """The note names no failure ("# after lunch: look at the queue"), but the session's commands resume right
    after it: the operator wrote down what they turned to. A closing note after a silence that no command follows
    stays with the stretch it closes."""
    session = (rec("[Tue 14:05] ops@db2:~$ # replica lag alert", 1, "note", time="Tue 14:05"),
               rec("[Tue 14:06] ops@db2:~$ psql -c 'select now() - pg_last_xact_replay_timestamp()'", 2, "command",
                   time="Tue 14:06"),
               rec("ERROR:  canceling statement due to conflict with recovery", 3, "output"),
               rec("[Tue 14:20] ops@db2:~$ # raised max_standby_streaming_delay, lag is back under a second", 4,
                   "note", time="Tue 14:20"),
               rec("[Tue 15:52] ops@db2:~$ # next one: the export box", 5, "note", time="Tue 15:52"),
               rec("[Tue 15:53] ops@db2:~$ systemctl status export-sync", 6, "command", time="Tue 15:53"),
               rec("export-sync.service: Failed with result 'oom-kill'.", 7, "output"),
               rec("[Tue 17:10] ops@db2:~$ # export box fine since the restart, closing", 8, "note",
                   time="Tue 17:10"))
    assert [[r.line_start for r in ep.records] for ep in episodes(session)] == [[1, 2, 3, 4], [5, 6, 7, 8]]


_TWO_PAGES = """cache-03:~$ # paged: sessions-api writes fail
cache-03:~$ redis-cli SET probe 1
(error) MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.
cache-03:~$ # the salt state for overcommit only targets role:redis-cache, and Karl says sessions-api retries anyway
cache-03:~$ echo 'vm.overcommit_memory = 1' > /etc/sysctl.d/60-redis.conf
cache-03:~$ sysctl -p /etc/sysctl.d/60-redis.conf
vm.overcommit_memory = 1
cache-03:~$ # {between}
cache-03:~$ systemctl --failed --no-legend
● logrotate.service loaded failed failed Rotate log files
cache-03:~$ # journald kept every debug line of the nutcracker drop-in
cache-03:~$ journalctl --vacuum-size=800M
Vacuuming done, freed 10.1G of archived journals
"""


def _cut_lines(tmp_path, text: str) -> list[int]:
    p = tmp_path / "session.txt"
    p.write_text(text, encoding="utf-8")
    return [ep.records[0].line_start for ep in episodes([r for r in records(p) if r.text.strip()], "s")]


def test_a_failure_of_another_kind_after_a_fix_is_the_next_incident_from_the_note_that_turned_to_it(tmp_path):
    """Nothing names a new service or ticket and no clock runs, but the first story was acted on (a config written,
    sysctl loaded) before a failure of another kind: the next incident starts at the note that turned to it. A
    note during an investigation that names another service ("sessions-api") cuts nothing."""
    assert _cut_lines(tmp_path, _TWO_PAGES.format(between="ok, new page: /var 99% on the same box")) == [1, 8]


def test_a_fix_said_to_change_nothing_leaves_the_story_open(tmp_path):
    text = _TWO_PAGES.format(between="that changed nothing, still refused")
    assert _cut_lines(tmp_path, text) == [1]


def test_a_note_that_an_attempt_did_not_help_goes_on_with_the_story_whatever_it_names(tmp_path):
    """'# restart didn't help. fictpay can't change their TLS before Q1' names a partner the session never named,
    but says the story goes on: no new incident starts there."""
    session = """Script started on 2024-11-07 21:02:10+00:00 [TERM="xterm-256color" TTY="/dev/pts/0"]
root@edge-lb-01:~# # OPS-2270: webhooks relay returning 502 since the reimage
root@edge-lb-01:~# tail -n 1 /var/log/nginx/error.log
2024/11/07 21:03:51 [crit] 1190#1190: *88213 SSL_do_handshake() failed (SSL routines::dh key too small)
root@edge-lb-01:~# systemctl restart nginx
root@edge-lb-01:~# tail -n 1 /var/log/nginx/error.log
2024/11/07 21:11:40 [crit] 2411#2411: *17 SSL_do_handshake() failed (SSL routines::dh key too small)
root@edge-lb-01:~# # restart didn't help. fictpay-hooks says they can't change their TLS setup before Q1
root@edge-lb-01:~# sed -i 's/^proxy_ssl_ciphers .*/proxy_ssl_ciphers DEFAULT:@SECLEVEL=1;/' /etc/nginx/relay.conf
root@edge-lb-01:~# nginx -t && systemctl reload nginx
"""
    f = tmp_path / "edge.txt"
    f.write_text(session, encoding="utf-8")
    found = inc.incidents({"edge.txt": list(records(f))})
    assert len(found) == 1
    card = build_card(found[0])
    assert not any("xterm" in e.value for e in found[0].entities)
    assert any("SECLEVEL=1" in line.text for line in card.actions)


def test_a_note_that_sets_another_service_aside_opens_nothing():
    """"also seeing nfs … backup-nas-1 not responding, known + unrelated" names a service the investigation never
    named, after something was done: as a plain statement it would turn to it; set aside, the story goes on."""
    def session(aside: str):
        return _session(("note", "$ # report-exporter failing: No space left on device"),
                        ("command", "$ systemctl restart report-exporter"),
                        ("note", f"$ # also seeing nfs: server backup-nas-1 not responding in dmesg{aside}"),
                        ("command", "$ systemctl enable --now report-tmp-clean.timer"))
    assert [len(ep.records) for ep in episodes(session(", known + unrelated"))] == [4]
    assert [len(ep.records) for ep in episodes(session(""))] == [2, 2]



def test_the_shells_complaint_about_a_command_is_that_attempt_failing_not_the_next_incident():
    """"-bash: /usr/bin/rm: Argument list too long" after the rm, in a `script` capture (bench/incidents21, a dev
    suite): the story goes on to its fix; it cut the session, and the fix went with the complaint, away from the
    export's "No space left on device"."""
    from pathlib import Path

    p = Path(__file__).parents[2] / "bench/incidents21/shell/pg-ledger-2-typescript-2024-11.txt"
    found = inc.incidents({p.name: [r for r in records(p) if r.text.strip()]})
    (story,) = [f for f in found if any("No space left on device" in line.text for line in f.lines)]
    assert any("MAILTO" in line.text for line in story.lines)
    assert any("Argument list too long" in line.text for line in story.lines)


def test_a_note_that_turns_a_change_down_or_says_ignore_opens_nothing():
    """bench/incidents38's recording: "# pdf-preview HPA warning is the metrics-server thing from last week, ignore"
    and "# not adding a docker hub login secret to every namespace" name things the session never named, during
    the story: they set them aside, and the story goes on to its fix."""
    def session(aside: str):
        return _session(("note", "$ # report-api pods stuck in Init:ImagePullBackOff: toomanyrequests"),
                        ("command", "$ kubectl -n reports describe pod report-api-6d9b"),
                        ("note", f"$ # {aside}"),
                        ("command", "$ helm -n reports upgrade report-api ./chart --set initContainer.pullPolicy=IfNotPresent"))
    for aside in ("pdf-preview HPA warning is the metrics-server thing from last week, ignore",
                  "not adding a dockerhub-login secret to every namespace either"):
        assert [len(ep.records) for ep in episodes(session(aside))] == [4], aside
    assert [len(ep.records) for ep in episodes(session("pdf-preview HPA warning is the metrics-server thing"))] == [2, 2]


def test_an_attempt_said_after_a_silence_to_have_changed_nothing_is_the_story_going_on(tmp_path):
    """A restart, then `date` 38 minutes later and "# restart bought nothing, same 406": the silence cut the session,
    but the note names the attempt of the stretch before it; a note that names no attempt of it does not join."""
    def text(note: str) -> str:
        return ("$ date\nTue Jul  8 09:41:07 UTC 2025\n$ # invoice-render CrashLoopBackOff: 406 PRECONDITION_FAILED\n"
                "$ kubectl -n billing rollout restart deploy/invoice-render\ndeployment.apps/invoice-render restarted\n"
                f"$ date\nTue Jul  8 10:19:33 UTC 2025\n$ # {note}\n"
                "$ kubectl -n billing set env deploy/invoice-render AMQP_PREFETCH=4\n")
    assert _cut_lines(tmp_path, text("restart bought nothing, same 406 ~32 min after the restart")) == [1]
    assert _cut_lines(tmp_path, text("the rollback bought nothing, same 406")) == [1, 7]  # (at the date output)


def test_a_stamped_note_days_later_with_commands_typed_under_it_opens_a_new_page(tmp_path):
    """tmux captures two days apart, each under a banner with its day and clock (bench/incidents38): the note after
    the silence, with commands typed right under it (untimed prompts), is the operator turning to new work, not a
    late comment on the first incident; with no command under it, it stays with the story before."""
    def text(after: str) -> str:
        return ("# capture 2025-04-03 02:58:09 UTC\n$ stern -n orders writer\n"
                "2025-04-03T02:11:47.390Z ERROR insert order_event failed: nextval: reached maximum value\n"
                "$ # restart changed nothing, as expected\n"
                "$ psql -c 'ALTER SEQUENCE order_events_id_seq MINVALUE -2147483648'\n"
                f"# capture 2025-04-05 22:31:40 UTC\n{after}")
    opened = text("$ ssh media-03\n$ journalctl -u thumbd | grep ERROR\nthumbd: ERROR No space left on device\n")
    assert _cut_lines(tmp_path, opened) == [1, 6]
    assert _cut_lines(tmp_path, text("")) == [1]
