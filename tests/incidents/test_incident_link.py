"""Linking: a later fix joins its incident by a shared id or service and signature; unrelated ones stay apart."""

from __future__ import annotations

from incident_fixtures import JIRA, JIRA_FIX, LOG, SLACK, SLACK_FIX, rec

from poimen.incidents import episodes, incidents, link


def _texts(incident) -> set[str]:
    return {r.text for ep in incident.episodes for r in ep.records}


def test_two_unrelated_incidents_in_one_channel_stay_apart_and_chatter_is_no_incident():
    found = incidents({"slack": SLACK})
    assert len(found) == 2
    assert SLACK_FIX in _texts(found[0]) and SLACK_FIX not in _texts(found[1])
    assert all("lunch order" not in text for inc in found for text in _texts(inc))


def test_a_later_ticket_comment_joins_by_ticket_id():
    stream = (rec("OPS-77 checkout-api returns 502 for EU users", 1, "message", time="2024-03-01T10:00:00Z"),
              rec("unrelated: team lunch on Friday", 2, "message", time="2024-03-01T10:05:00Z"),
              rec("Follow-up for OPS-77: reverted the keepalive change, details in the runbook", 3, "message",
                  time="2024-03-01T16:00:00Z"))
    found = incidents({"chat": stream})
    assert len(found) == 1 and stream[2].text in _texts(found[0])


def test_a_fix_joins_by_service_and_failure_family_but_not_by_service_alone():
    alert = rec("checkout-api returning 502 Bad Gateway", 1, "message", time="2024-03-01T10:00:00Z")
    fix = rec("checkout-api: the 502 Bad Gateway responses stopped after we raised the upstream timeout", 2, "message",
              time="2024-03-01T13:00:00Z")
    other = rec("checkout-api deploy of v42 finished", 3, "message", time="2024-03-01T16:00:00Z")
    eps = episodes((alert, fix, other), "chat")
    assert len(eps) == 3  # an hour-plus gap cuts each one off
    found = link(eps)
    assert len(found) == 1 and {r.text for ep in found[0].episodes for r in ep.records} == {alert.text, fix.text}


def test_a_recurrence_a_week_later_is_a_new_incident_unless_a_ticket_joins_them():
    first = rec("checkout-api 502s, upstream timed out", 1, "message", time="2024-03-01T10:00:00Z")
    again = rec("checkout-api 502s again, upstream timed out", 2, "message", time="2024-03-09T10:00:00Z")
    assert len(incidents({"chat": (first, again)})) == 2
    first = rec("INC-9 checkout-api 502s", 1, "message", time="2024-03-01T10:00:00Z")
    later = rec("INC-9 postmortem: fixed by raising proxy_read_timeout", 2, "message", time="2024-03-09T10:00:00Z")
    assert len(incidents({"chat": (first, later)})) == 1


def test_streams_link_only_when_asked():
    per_stream = incidents({"svc.log": LOG, "jira.csv": JIRA})
    assert not any(JIRA_FIX in _texts(inc) and LOG[1].text in _texts(inc) for inc in per_stream)
    across = incidents({"svc.log": LOG, "jira.csv": JIRA}, across_streams=True)
    joined = [inc for inc in across if JIRA_FIX in _texts(inc)]
    assert len(joined) == 1 and LOG[1].text in _texts(joined[0])
    assert joined[0].streams == ("svc.log", "jira.csv")  # time order: the log came first


def test_a_failure_nobody_acted_on_joins_the_next_stretch_that_acts_on_what_it_shares():
    session = (
        rec("[15:06:55] jlo@jump01 ~ $ # customers report api.quarry.example cert errors, webhook-relay failing", 1,
            "note",
            time="15:06:55"),
        rec("[15:07:20] jlo@jump01 ~ $ curl -sv https://api.quarry.example/healthz", 2, "command", time="15:07:20"),
        rec("* SSL certificate problem: certificate has expired", 3, "output"),
        rec("[15:08:30] jlo@jump01 ~ $ # cert-manager should have renewed this 30 days ago", 4, "note", time="15:08:30"),
        rec("[15:12:40] jlo@jump01 ~ $ kubectl patch clusterissuer letsencrypt-prod --type=json -p x", 5, "command",
            time="15:12:40"),
        rec("[15:16:05] jlo@jump01 ~ $ openssl s_client -connect api.quarry.example:443", 6, "command",
            time="15:16:05"),
    )
    eps = episodes(session, "jump.txt")
    assert len(eps) == 2  # the note that names cert-manager cuts the flow ...
    assert [len(inc.episodes) for inc in link(eps)] == [2]  # ... and the fix, on the same host, joins its failure
    # two stretches that share nothing specific stay apart
    apart = session[:3] + (rec("[15:08:30] jlo@jump01 ~ $ # search-indexer next", 4, "note", time="15:08:30"),
                           rec("[15:12:40] jlo@jump01 ~ $ kubectl -n search rollout restart deploy/search-indexer", 5,
                               "command", time="15:12:40"))
    assert [len(inc.episodes) for inc in link(episodes(apart, "jump.txt"))] == [1]


def test_a_streams_subject_is_its_own_not_the_runs_what_else_is_read_changes_no_incident():
    """An entity most of one channel's episodes name is that channel's subject and weighs a quarter, counted
    within the channel: reading an unrelated busy stream beside it changes none of its incidents."""
    channel = tuple(rec(f"payments-api on pg-main-1.prod.example.com: {what}", n, "message",
                        time=f"2024-03-01T{9 + 2 * n:02d}:00:00Z")
                    for n, what in enumerate(("500s, connection refused", "502 Bad Gateway from the proxy", "timeouts on /pay",
                                              "OOMKilled again", "TLS handshake failed"), 1))
    busy = tuple(rec(f"build {n} of docs-site failed: lint error", n, "message", time=f"2024-03-0{1 + n}T08:00:00Z")
                 for n in range(1, 9))
    alone = [sorted(_texts(inc)) for inc in incidents({"chan": channel})]
    beside = [sorted(_texts(inc)) for inc in incidents({"chan": channel, "ci": busy}) if inc.streams == ("chan",)]
    assert len(alone) >= 4 and beside == alone


def test_two_whole_stories_under_a_header_that_lists_both_tickets_stay_apart():
    """A session saved "for DBA-88 / DBA-91" holds two incidents, each with its own failure and fix: the header's
    ticket list joins neither to the other, and a ticket named alone still joins a later comment."""
    session = (rec("# scrollback saved for DBA-88 / DBA-91", 1, "note"),
               rec("ERROR 1062 (23000): Duplicate entry '9182231' for key 'order_notes.PRIMARY'", 2, "output",
                   time="2024-08-06T08:20:00Z"),
               rec("mysql> SET PERSIST super_read_only = ON;", 3, "command", time="2024-08-06T08:50:00Z"),
               rec("ERROR 1878 (HY000): Temporary file write failure.", 4, "output", time="2024-08-06T09:40:00Z"),
               rec("# DBA-91: pointed innodb_tmpdir at /var/lib/mysql-tmp and ran the ALTER again", 5, "note",
                   time="2024-08-06T10:05:00Z"))
    eps = episodes(session, "tmux.txt")
    assert len(eps) == 2 and len(link(eps)) == 2


def test_a_failure_nobody_acts_on_joins_one_story_and_never_bridges_two():
    """The worker's first failure shares the service and the database host with both stories in the comments: the
    fix of its own pool timeouts, and the ticket's second problem with its own fix. It joins the one it shares most
    with."""
    first = rec("payments-worker on pg-payments-1.int.example.net: sqlalchemy.exc.TimeoutError: QueuePool limit of "
                "size 8 overflow 4 reached", 1, "log", time="2024-07-21T09:14:00Z")
    fix1 = rec("payments-worker QueuePool timeouts against pg-payments-1.int.example.net: set "
               "SQLALCHEMY_POOL_SIZE=24 in the helm values, sqlalchemy.exc.TimeoutError gone", 2, "comment",
               time="2024-07-21T10:27:00Z")
    second = rec("second problem on payments-worker (pg-payments-1.int.example.net is fine): ValueError: numpy.dtype "
                 "size changed, rebuilt with numpy==1.26.4 pinned", 3, "comment", time="2024-07-21T12:24:00Z")
    eps = [episodes((r,), "w.log")[0] for r in (first, fix1, second)]
    found = link(eps)
    assert sorted(len(inc.episodes) for inc in found) == [1, 2]
    assert any({first.text, fix1.text} <= _texts(inc) for inc in found)


def test_a_failure_nobody_acts_on_joins_the_nearest_story_it_shares_enough_with():
    """The night's failure shares the service, the host and a setting with the morning's story (a schema fix) and
    only the service and the host with the story an hour after it (its own fix): it is the later one's."""
    morning = (rec("accounts-api on db-1.int.example.net failed: column mfa_enrolled_at does not exist "
                   "(SPRING_DATASOURCE_URL unchanged)", 1, "log", time="2024-07-08T09:29:00Z"),
               rec("accounts-api fix: ALTER TABLE users ADD COLUMN mfa_enrolled_at timestamptz; logins work again", 2,
                   "comment",
                   time="2024-07-08T09:53:00Z"))
    night = rec("accounts-api on db-1.int.example.net failed: An I/O error occurred while sending to the backend "
                "(SPRING_DATASOURCE_URL)", 3, "log", time="2024-07-09T02:47:00Z")
    later = (rec("accounts-api on db-1.int.example.net failed again: connection reset", 4, "log",
                 time="2024-07-09T04:05:00Z"),
             rec("accounts-api: set HIKARI_KEEPALIVETIME=60000 in the configmap, no resets since", 5, "comment",
                 time="2024-07-09T08:10:00Z"))
    eps = [episodes(morning, "a.log")[0], episodes((night,), "a.log")[0], episodes(later, "a.log")[0]]
    found = link(eps)
    assert len(found) == 2
    assert any({night.text, later[1].text} <= _texts(inc) and morning[1].text not in _texts(inc) for inc in found)


def test_an_alert_joins_the_thread_its_responder_opens_right_after_it():
    """The bot posts the alert; two minutes later the responder opens a thread of their own and fixes it there.
    They share one service, half a link; the thread is what follows the alert, so they are one story. An hour
    later it would be a story of its own."""
    def channel(reply_at: str, fix_at: str):
        return (rec("Alertmanager: [FIRING:1] LogIngestRejected: fluent-bit bulk requests rejected", 1, "message",
                    time="2024-08-02T07:12:04Z"),
                rec("ack, looking at fluent-bit and the ILM policy", 2, "message", time=f"2024-08-02T{reply_at}Z",
                    thread="t1"),
                rec("Fix: re-pointed index.lifecycle.name to logs-hot-warm-30d, writes accepted again", 3, "reply",
                    time=f"2024-08-02T{fix_at}Z", thread="t1"))
    soon, late = channel("07:14:09", "07:38:45"), channel("08:20:00", "08:45:00")
    assert [soon[2].text in _texts(inc) for inc in incidents({"chan": soon})] == [True]
    assert [late[2].text in _texts(inc) for inc in incidents({"chan": late})] == [False]


def test_a_ticket_typed_in_a_later_command_joins_no_two_stories():
    """The operator commits the first incident's follow-up ("follow-up to SEC-412") after the second incident is
    fixed: a ticket in a command or its output is no telling of the story, so the two stay apart; a note that names
    the ticket in words still joins."""
    def session(last_kind: str, last: str):
        return (rec("$ # SEC-412 ledger-api readiness failing: dial tcp 10.43.118.20:6432: i/o timeout", 1, "note",
                    time="09:40"),
                rec("$ kubectl apply -f k8s/ledger/netpol.yaml", 2, "command", time="09:58"),
                rec("$ # pricing-api CrashLoopBackOff after the 1.15.0 release, OOMKilled", 3, "note", time="10:40"),
                rec("$ helm -n pricing upgrade pricing-api --set resources.limits.memory=1536Mi", 4, "command",
                    time="10:52"),
                rec(last, 5, last_kind, time="11:05"))
    typed = session("command", '$ git commit -am "ledger: allow egress to pgbouncer (follow-up to SEC-412)"')
    assert len(incidents({"s": typed})) == 2
    said = session("note", "$ # SEC-412 follow-up: the pricing rollout also broke when SEC-412 shipped, restarted it")
    assert len(incidents({"s": said})) == 1


def _day(minute: int) -> str:
    return f"2025-03-19T{13 + minute // 60:02d}:{minute % 60:02d}:00Z"


def _login_failures(thread_at: int, fix_at: int, fix_service: str = "merchant-api"):
    """Merchant logins fail and the channel restarts merchant-api; someone answers the cause in a thread of its
    own; hours later the lasting fix is merged."""
    return (rec("merchant dashboard logins failing, merchant-api says SigningKeyNotFoundError: Unable to find a "
                "signing key", 1, "message", time=_day(0)),
            rec("kubectl -n merchant rollout restart deploy/merchant-api", 2, "message", time=_day(20)),
            rec("rollout done, 401 ratio back to 0.02", 3, "message", time=_day(24)),
            rec("found it: the authz lib loads the JWKS once a day and never refetches on an unknown kid, so every "
                "merchant-api pod is blind to the new key", 4, "message", time=_day(thread_at), thread="t1"),
            rec("why do only some people fail then?", 5, "reply", time=_day(thread_at + 1), thread="t1"),
            rec(f"PR authz#61 merged: refetch JWKS on unknown kid. {fix_service} bumped to authz 2.4.0", 6, "message",
                time=_day(fix_at)))


def test_a_thread_opened_while_the_channel_works_a_failure_is_part_of_it():
    """The thread shares one service with the channel's stretch (half a link); it was opened from a message of that
    stretch while it went on, so it is the same story. Opened after the stretch, it stands alone."""
    inside = _login_failures(thread_at=15, fix_at=25)
    assert len(found := incidents({"chan": inside})) == 1 and inside[3].text in _texts(found[0])
    after = _login_failures(thread_at=40, fix_at=25)
    assert not any(after[3].text in _texts(inc) and after[0].text in _texts(inc) for inc in incidents({"chan": after}))


def test_a_fix_told_hours_later_joins_the_stretch_before_it_that_failed():
    """The lasting fix is merged after the channel went quiet: a stretch that acts and tells no failure, after one
    that failed and shares a service with it. Naming another service, it joins nothing."""
    later = _login_failures(thread_at=15, fix_at=170)
    assert [later[5].text in _texts(inc) for inc in incidents({"chan": later})] == [True]
    other = _login_failures(thread_at=15, fix_at=170, fix_service="ledger-api")
    assert [other[5].text in _texts(inc) for inc in incidents({"chan": other})] == [False]


def test_a_name_read_as_a_key_in_an_alert_is_the_service_the_thread_names():
    """The alert says "inventory-sync: 37 failed runs" (read as a key set), the thread "inventory-sync is unhappy"
    (a service): one name. With the host they both name, that is a link."""
    alert = rec("[FIRING:1] InventorySyncJobFailures\ninventory-sync: 37 failed runs in 30m\nlast error: Get "
                "\"https://stock-api.ottervale.internal/v1/snapshots\": net/http: TLS handshake timeout", 1, "message",
                time="2025-03-11T10:36:02Z", thread="a1", attrs=(("bot_id", "B1"),))
    work = (rec("anyone seeing weird timeouts from pool-c? inventory-sync is unhappy since the move", 2, "message",
                time="2025-03-11T10:34:20Z", thread="w1"),
            rec("over https to stock-api.ottervale.internal: curl: (28) Operation timed out after 30001 milliseconds",
                3, "reply", time="2025-03-11T10:51:58Z", thread="w1"),
            rec("applied: associated the pool-c subnets with rtb-0c4e19a7, 0 handshake timeouts in 10 min", 4,
                "reply", time="2025-03-11T13:58:37Z", thread="w1"))
    found = incidents({"chan": (work[0], alert, *work[1:])})
    assert len(found) == 1 and alert.text.splitlines()[0] in " ".join(_texts(found[0]))


def test_two_postmortems_each_headed_by_its_ticket_are_two_incidents_though_the_second_names_the_first():
    from poimen.inputs.records import Record

    def section(ticket: str, title: str, start: int, body: list[str]) -> list[Record]:
        head = f"[{ticket}] {title}"
        return [Record(text, start + n, start + n, headings=(head, part)) for n, (part, text) in enumerate(body)]

    first = section("#48213", "ledger-api 5xx: prepared statement errors", 1, [
        ("Alert", "ERROR: prepared statement \"S_4\" already exists on ledger-api (PAY-2210 tracks the pooler)"),
        ("Resolution", "We added prepareThreshold=0 to the JDBC URL of ledger-api; errors stopped.")])
    second = section("#48397", "ledger-reconciler fails: prepared statement errors again", 10, [
        ("Alert", "ERROR: prepared statement \"S_2\" does not exist in ledger-reconciler (PAY-2210)"),
        ("Root cause", "The fix for #48213 was applied only to ledger-api's secret, not the reconciler's."),
        ("Resolution", "Rebuilt pgbouncer-ledger on PgBouncer 1.22.1 with max_prepared_statements = 200.")])
    found = incidents({"report.md": first + second})
    assert sorted(len(i.episodes) for i in found) == [1, 1]
    # ... and under an export's title that names none ("# xMatters incident export", then "## INC-0193 · …" and
    # "## INC-0194 · …", the second ruling the first out by its number; bench/incidents43): its topmost heading with one
    titled = [Record(r.text, r.line_start, r.line_end, headings=("xMatters incident export — platform group",)
                     + r.headings) for r in first + second]
    assert sorted(len(i.episodes) for i in incidents({"export.md": titled})) == [1, 1]


def test_stories_filed_under_tickets_none_shares_stay_apart_though_a_duplicate_joins_one():
    """A Jira export of three tickets: FUL-1191 is closed as a duplicate of FUL-1188, and its comment lands with
    FUL-1188's story; FUL-1189 is another problem of the same service. Its story shares the service and the
    release with the other, yet no ticket: two incidents (bench/incidents18)."""
    from poimen.incidents.episodes import Episode
    from poimen.incidents.link import _filed, _siblings

    def story(key: str, tickets: list[str], start: int):
        records = tuple(rec(f"fulfilment-api comment {n} on {t}", start + n, "comment", attrs=(("ticket", t),))
                        for n, t in enumerate(tickets))
        return Episode("s", key, records)

    orders, planogram = story("flow:2", ["FUL-1188", "FUL-1191", "FUL-1188"], 1), story("flow:3", ["FUL-1189"], 10)
    assert _filed(orders) == {"FUL-1188", "FUL-1191"}
    assert _siblings(orders, planogram, (_filed(orders), False), (_filed(planogram), False))
    retold = story("flow:4", ["FUL-1191"], 20)  # the duplicate's own later comment: the same story
    assert not _siblings(orders, retold, (_filed(orders), False), (_filed(retold), False))


def test_a_reopened_tickets_burst_joins_the_stretch_that_acts_though_its_error_is_the_streams_subject():
    """ServiceNow work notes, newest first, under the log of an incident and its recurrence: the reopen's burst
    ("could not get a connection from pdocDS", then "Reopened. Same error text as Thursday") acts on nothing, and
    the next stretch (the restart that changed nothing, the entropy diagnosis, the fix) acts. They share the error
    every failure of this stream prints, which weighs a quarter as the stream's subject; where a failure goes on
    into the next stretch it weighs whole (bench/incidents18, a dev suite)."""
    from pathlib import Path

    from poimen.inputs.chunking import records

    path = Path(__file__).parents[2] / "bench/incidents18/java/policy-docs-2025-04-03-INC0051872.log"
    found = incidents({path.name: [r for r in records(path) if r.text.strip()]})
    said = ["\n".join(line.text for line in inc.lines) for inc in found]
    (reopened,) = [s for s in said if "could not get a connection from pdocDS after 60,611 ms" in s]
    assert "java.security.egd=file:/dev/./urandom" in reopened and 'testOnBorrow="true"' not in reopened
    (first,) = [s for s in said if 'testOnBorrow="true"' in s]
    assert "java.security.egd" not in first


def test_a_failure_nobody_acts_on_joins_the_story_that_acts_before_a_nearer_stretch_that_does_not():
    """A log's stuck threads share the pod and the class they block on with the ticket's story (its fix), and the pod
    and the health check's key with the log's next stretch, five minutes on, which acts on nothing either. Joining that stretch, the two would be
    an incident of their own with no fix: the failure goes with the story that acts on it (bench/incidents47)."""
    story = (rec("2024-10-08 09:14:02 WARN [claims-intake-7d9c5b6f4-xk2lp] STUCK_THREAD: blocked on "
                 "PartnerTokenCache@3b1f0c2a", 1, "log", time="2024-10-08T09:14:02Z", level="WARN"),
             rec("claims-intake-7d9c5b6f4-xk2lp: PartnerTokenCache refreshes under its lock with no read timeout. "
                 "Fixed by setting -Dsun.net.client.defaultReadTimeout=5000 in JAVA_OPTS, rolled out 14:20", 2,
                 "comment", time="2024-10-08T14:31:00Z"))
    stuck = rec("2024-10-08 15:02:11 ERROR [claims-intake-7d9c5b6f4-xk2lp] STUCK_THREAD: blocked on "
                "PartnerTokenCache@3b1f0c2a for 182044ms", 3, "log", time="2024-10-08T15:02:11Z", level="ERROR")
    quiet = rec("2024-10-08 15:07:40 WARN [claims-intake-7d9c5b6f4-xk2lp] STUCK_THREAD: 37 more stuck threads, "
                "not listed", 4, "log", time="2024-10-08T15:07:40Z", level="WARN")
    eps = [episodes(story, "c.log")[0], episodes((stuck,), "c.log")[0], episodes((quiet,), "c.log")[0]]
    found = link(eps)
    assert len(found) == 1 and stuck.text in _texts(found[0])
