"""A Java log with two incidents that print the same JVM exception, under a tracker export whose comments on two
tickets interleave, each comment under its bracketed key (the shape of bench/incidents9's ledger log)."""

from __future__ import annotations

from poimen.incidents import build_card, incidents, score
from poimen.incidents.roles import pick
from poimen.inputs.chunking import records

from incident_fixtures import rec

LOG = """\
2024-03-02 02:01:00,139 ERROR [recon-worker-2] c.v.l.recon.ReconciliationJob - chunk failed period=2024-02
java.net.SocketTimeoutException: Read timed out
\tat java.base/sun.nio.ch.NioSocketImpl.timedFinishRead(NioSocketImpl.java:288)
2024-03-02 02:31:58,770 ERROR [recon-scheduler-1] c.v.l.recon.ReconciliationJob - reconciliation finished with errors
2024-03-02 10:00:04,532 ERROR [http-nio-8080-exec-41] c.v.l.posting.FxConversionService - FX lookup failed on fx-rates
java.net.SocketTimeoutException: Read timed out
\tat java.base/sun.nio.ch.NioSocketImpl.timedFinishRead(NioSocketImpl.java:288)
2024-03-02 11:00:03,215 ERROR [http-nio-8080-exec-22] c.v.l.posting.FxConversionService - FX lookup failed on fx-rates
java.net.SocketTimeoutException: Read timed out

Jira comments export - PAY-4417, PAY-4420

[PAY-4417]
Ines Calloway added a comment - 02/Mar/24 08:31 AM
Recon for February came back partial, six chunks gave up on read timeouts of the totals query.

[PAY-4420]
Dario Fenn added a comment - 02/Mar/24 10:09 AM
paged: 503s on postings at 10:00 from fx-rates lookups, same SocketTimeoutException as PAY-4417.

[PAY-4420]
Dario Fenn added a comment - 02/Mar/24 10:24 AM
Rolled ledger-service (kubectl rollout restart) at 10:21 for fresh pools to fx-rates.

[PAY-4420]
Dario Fenn added a comment - 02/Mar/24 11:03 AM
Restart only helped for an hour. Same burst at 11:00.

[PAY-4417]
Mireille Otsu added a comment - 02/Mar/24 11:20 AM
Root cause: the backfill bulk-loaded the partition and it was never analyzed, so the plan is garbage.

[PAY-4420]
Sunniva Holt added a comment - 02/Mar/24 12:31 PM
fx-rates rebuilds its table under a write lock every hour. Flipped fx-rates.cache.swap-on-rebuild to true at 12:29.

[PAY-4417]
Mireille Otsu added a comment - 02/Mar/24 01:07 PM
Ran ANALYZE ledger_entries_2024_02 on the primary at 13:05, chunks take 5s now.
"""


def _one_incidents_actions(tmp_path, name: str, text: str) -> list[str]:
    """The fix lines of the one incident ``text`` holds (asserting it is one)."""
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    found = incidents({name: list(records(f))})
    assert len(found) == 1
    return [line.text for line in build_card(found[0]).actions]


def _cards(tmp_path):
    f = tmp_path / "ledger.log"
    f.write_text(LOG, encoding="utf-8")
    recs = list(records(f))
    return recs, [build_card(i) for i in incidents({"ledger.log": recs})]


def test_a_bracketed_key_files_the_comment_under_it(tmp_path):
    recs, _ = _cards(tmp_path)
    filed = [dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"]
    assert filed == ["PAY-4417", "PAY-4420", "PAY-4420", "PAY-4420", "PAY-4417", "PAY-4420", "PAY-4417"]


def test_two_incidents_that_print_one_jvm_exception_keep_their_own_fixes(tmp_path):
    _, cards = _cards(tmp_path)
    fixes = {c.title: " ".join(line.text for line in c.actions) for c in cards if c.actions}
    analyze = [t for t, a in fixes.items() if "ANALYZE" in a]
    flag = [t for t, a in fixes.items() if "swap-on-rebuild" in a]
    assert len(analyze) == len(flag) == 1 and analyze != flag
    assert "swap-on-rebuild" not in fixes[analyze[0]] and "ANALYZE" not in fixes[flag[0]]
    # the restart that only helped for an hour is no fix
    assert not any("rollout restart" in a for a in fixes.values())


def test_a_comments_header_is_a_line_of_its_own():
    assert pick(score("Flipped fx-rates.cache.swap-on-rebuild to true for prod at 12:29.")) == "action"
    assert score("Restart only helped for an hour. Same burst at 11:00.").ineffective


HELPDESK = """\
2024-07-09 02:11:38.907  WARN 1 --- [nio-8080-exec-5] com.zaxxer.hikari.pool.PoolBase : HikariPool-1 - Failed to validate connection (This connection has been closed.)
2024-07-09 04:05:51.870 ERROR 1 --- [nio-8080-exec-1] o.h.engine.jdbc.spi.SqlExceptionHelper : An I/O error occurred while sending to the backend.
2024-07-09 06:30:00.001 ERROR 1 --- [   scheduling-1] c.q.accounts.jobs.ExportJob : export upload failed: bucket quota exceeded

Ticket #31877  |  random 500s at night  |  Status: Closed

[Customer] Lise Moreau (Support) - Tue, 9 Jul 2024 at 07:58 AM
Night shift says the app threw random 500s between 2 and 5am.

[Private note] Yusuf Demir - Tue, 9 Jul 2024 at 08:12 AM
Same PSQLException class as yesterday though: "An I/O error occurred while sending to the backend", only at night.

[Private note] Hamid Serrano - Tue, 9 Jul 2024 at 09:40 AM
Found it: the NAT gateway drops flows idle for 350 seconds and the pool keeps connections idle for minutes.

[Private note] Yusuf Demir - Tue, 9 Jul 2024 at 10:15 AM
Set SPRING_DATASOURCE_HIKARI_KEEPALIVETIME=60000 in the accounts-api configmap and restarted.
"""


def test_a_helpdesk_conversation_under_the_log_is_comments_and_its_fix_joins_the_errors_it_quotes(tmp_path):
    f = tmp_path / "accounts.log"
    f.write_text(HELPDESK, encoding="utf-8")
    recs = list(records(f))
    assert [r.author for r in recs if r.kind == "comment"] == ["Lise Moreau", "Yusuf Demir", "Hamid Serrano",
                                                               "Yusuf Demir"]
    found = incidents({"accounts.log": recs})
    card = next(build_card(i) for i in found if any("I/O error" in line.text for line in i.lines))
    assert any("KEEPALIVETIME=60000" in line.text for line in card.actions)


SESSION = """\
% date
Tue Jul 23 11:02:40 BST 2024
% aws ecs describe-tasks --cluster reports-prod --tasks 4f0b2e6a --query 'tasks[0].stoppedReason' --output text
CannotPullContainerError: pull image manifest has been retried 5 time(s): dial tcp 10.30.2.41:443: i/o timeout
% aws ecs update-service --cluster reports-prod --service reports-worker --force-new-deployment
PRIMARY	IN_PROGRESS
% aws ecs describe-services --cluster reports-prod --services reports-worker --query 'services[0].events[0].message'
(service reports-worker) was unable to place a task. Reason: CannotPullContainerError: dial tcp 10.30.2.70:443: i/o timeout
% # the redeploy changed nothing. the endpoint security group only lets 443 in from the old range
% aws ssm start-session --target i-0e4c19a7b2d58f036
sh-5.2$ exit
% aws ec2 authorize-security-group-ingress --group-id sg-0c2f5e9a --protocol tcp --port 443 --cidr 10.30.48.0/20
sgr-04b7e2d91c6a3f058
% # 6/6 running 11:56
"""


def test_one_error_retold_after_a_redeploy_that_changed_nothing_is_one_incident(tmp_path):
    # The task's stop reason, then the service event that retells it: one kind of failure (the same error name),
    # not the next incident of the session; an interactive session is no change, a security group rule is.
    actions = " ".join(_one_incidents_actions(tmp_path, "session.txt", SESSION))
    assert "authorize-security-group-ingress" in actions and "start-session" not in actions


def test_a_quote_printed_twice_joins_the_latest_print_before_it_never_both():
    from types import SimpleNamespace

    from poimen.incidents.quotes import latest_before as _latest_before

    def ep(start, end):
        return SimpleNamespace(start=start, end=end)

    episodes = [ep(100.0, 200.0), ep(5000.0, 5100.0), ep(5200.0, 5300.0), ep(9000.0, 9100.0)]
    # episode 2 quotes an error that episodes 0, 1 and 3 printed: it means the one in front of it
    assert _latest_before(episodes, [0, 1, 3], 2) == 1
    assert _latest_before(episodes, [3], 2) is None  # printed only later: not what it quoted
    untimed = [SimpleNamespace(start=None, end=None)] * 4
    assert _latest_before(untimed, [0, 1, 3], 2) == 1


def test_a_quote_cut_short_with_an_ellipsis_names_what_printed_its_parts_in_order():
    """"`String value length (20971893) exceeds the maximum allowed (20000000, ...)`" quotes the log line that
    printed it in full (bench/incidents18); the parts out of order quote nothing."""
    from poimen.incidents.episodes import Episode
    from poimen.incidents.quotes import quoted_in

    printed = ("2025-04-08 05:32:05,455 ERROR [sync-1] c.l.f.PlanogramSyncJob - String value length (20971893) exceeds "
               "the maximum allowed (20000000, from `StreamReadConstraints.getMaxStringLength()`)")
    log = Episode("s", "flow:0", (rec(printed, 1, "log", time="2025-04-08 05:32:05,455"),))

    def comment(text):
        return Episode("s", "flow:1", (rec(text, 9, "comment", time="2025-04-08 08:03:00", author="ines"),))

    assert quoted_in([log, comment("From the run: `String value length (20971893) exceeds the maximum allowed "
                                   "(20000000, ...)` for store 0417.")])
    assert not quoted_in([log, comment("From the run: `the maximum allowed (20000000 ... String value length "
                                       "(20971893) exceeds`.")])


ROLLBACK = """\
(prod:payments) $ # paged 08:54: PaymentsApiAvailability below 99%, ingress 503s
(prod:payments) $ kubectl describe pod payments-api-5c7b4d8f6a-g9xwr | tail -n 1
  Warning  Unhealthy  71s (x58 over 39m)   kubelet  Readiness probe failed: Get "http://10.42.7.31:8080/actuator/health/readiness": context deadline exceeded
(prod:payments) $ # 4.11.3 went out at 08:15 - rolling back first
(prod:payments) $ kubectl rollout undo deploy/payments-api
deployment.apps/payments-api rolled back
(prod:payments) $ kubectl rollout status deploy/payments-api --timeout=10m
deployment "payments-api" successfully rolled out
(prod:payments) $ kubectl get events --field-selector reason=Unhealthy | tail -n 1
2m4s        Warning   Unhealthy   pod/payments-api-7d9f8b6c4-x2k9p   Readiness probe failed: Get "http://10.42.9.201:8080/actuator/health/readiness": context deadline exceeded
(prod:payments) $ # rollback to 4.11.2 changed nothing, same probe failures on the old image. not the release.
(prod:payments) $ kubectl logs payments-api-7d9f8b6c4-x2k9p --since=10m | grep WARN | tail -n 1
2024-03-19T09:12:05.118Z  WARN 1 --- [payments-api] o.s.b.a.data.redis.RedisReactiveHealthIndicator : Redis health check failed
(prod:payments) $ # the readiness group includes redis, and redis stalls on every BGSAVE fork
(prod:payments) $ kubectl set env deploy/payments-api MANAGEMENT_ENDPOINT_HEALTH_GROUP_READINESS_INCLUDE=readinessState,db
deployment.apps/payments-api env updated
"""


def test_a_rollback_that_changed_nothing_is_no_fix_and_the_story_goes_on(tmp_path):
    # The events printed after the rollback looked like the next incident (an action, then a failure printed
    # another way); the note under them says the rollback changed nothing: one incident, and the rollback
    # (the command and what it printed) is off the card.
    actions = _one_incidents_actions(tmp_path, "bastion.txt", ROLLBACK)
    assert any("READINESS_INCLUDE=readinessState,db" in a for a in actions)
    assert not any("rollout undo" in a or "rolled back" in a for a in actions)


ZENDESK = """\
==> /opt/tomcat/logs/catalina.out on billing-app-02 <==
20-May-2024 06:00:00.918 SEVERE [pool-4-thread-2] c.h.billing.tax.LevyHubClient.quote tax quote failed
javax.net.ssl.SSLHandshakeException: PKIX path building failed
\tat sun.security.ssl.Alert.createSSLException(Alert.java:131)
20-May-2024 12:31:02.771 SEVERE [http-nio-8443-exec-14] org.apache.catalina.core.StandardWrapperValve.invoke failed
\tjava.lang.OutOfMemoryError: Metaspace

==================== Zendesk export: tickets #48213, #48240 ====================

Ticket #48213  "Invoices stuck in TAX PENDING"

--- Rafael Quint, May 20, 2024, 08:05 (internal note) ---
Every call to the tax provider fails the TLS handshake: PKIX path building failed.

--- Rafael Quint, May 20, 2024, 13:55 (internal note) ---
Imported the provider's new root with keytool -importcert into billing-truststore.jks and restarted Tomcat.

Ticket #48240  "Billing portal throws 500 for everyone"

--- Anneliese Brook, May 20, 2024, 12:44 (internal note) ---
catalina.out: OutOfMemoryError: Metaspace on every request.

--- Anneliese Brook, May 20, 2024, 15:30 (internal note) ---
Removed the manager webapp from prod so nobody hot-reloads the app any more.
"""


def test_a_catalina_log_in_a_txt_under_a_zendesk_export_of_two_tickets(tmp_path):
    # A .txt that opens with tail's banner and a Tomcat log is a log; each ticket's comments stay on their ticket
    # and go with the failure that had begun by their time (Tomcat's "20-May-2024 12:31:02.771" is a date).
    f = tmp_path / "catalina.txt"
    f.write_text(ZENDESK, encoding="utf-8")
    recs = list(records(f))
    assert recs[0].kind == "log" or recs[1].kind == "log"
    filed = {dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"}
    assert filed == {"#48213", "#48240"}
    cards = [build_card(i) for i in incidents({"catalina.txt": recs})]
    fixes = {" ".join(line.text for line in c.actions): " ".join(line.text for line in c.symptoms) for c in cards}
    keytool = next(s for a, s in fixes.items() if "keytool" in a)
    manager = next(s for a, s in fixes.items() if "manager webapp" in a)
    assert "PKIX" in keytool and "Metaspace" not in keytool
    assert "Metaspace" in manager and "PKIX" not in manager


FAILED_UPGRADE = """\
$ # checkout-web 2.40.0 deploy job failed in CI, taking it by hand
$ helm -n checkout upgrade --install checkout-web charts/checkout-web --wait
Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress
$ kubectl -n gitlab-runner get events --field-selector reason=OOMKilling
27m   Warning   OOMKilling   node/ip-10-12-44-8   Memory cgroup out of memory: Killed process 31877 (helm)
$ # the CI job got OOM-killed mid-upgrade, so revision 42 is stuck in pending-upgrade
$ helm -n checkout rollback checkout-web 41
Rollback was a success! Happy Helming!
"""


def test_a_command_that_printed_an_error_is_no_fix_and_cuts_no_story(tmp_path):
    # The upgrade printed "Error: UPGRADE FAILED": it changed nothing, so the OOM event after it is the same story
    # going on (not the next incident after an action), and the card's fix is the rollback alone.
    actions = _one_incidents_actions(tmp_path, "session.txt", FAILED_UPGRADE)
    assert any("rollback checkout-web 41" in a for a in actions)
    assert not any("upgrade --install" in a for a in actions)


PASTED_ISSUE = """\
2025-03-04 09:31:52,118 WARN  [fetch-3] relay.upstream - upstream failed for commons-lang3-3.17.0.pom
Caused by: java.io.IOException: Unable to tunnel through proxy. Proxy returns "HTTP/1.1 407 Proxy Authentication Required"
2025-03-04 09:40:11,002 INFO  [main] relay.index - index rebuilt

===== pasted from the tracker =====

**okonkwo-q** commented on Mar 4, 2025
Hi! Since the move to Docker we have a problem, log excerpt above.

Any artifact that is not cached yet fails with 502. The relay log says `Unable to tunnel through proxy. Proxy returns "HTTP/1.1 407 Proxy Authentication Required"`.

**mkessler** commented on Mar 4, 2025
Since 8u111 the JDK refuses Basic auth when tunnelling through a proxy.

Set -Djdk.http.auth.tunneling.disabledSchemes= in JAVA_TOOL_OPTIONS and uncached artifacts resolve again.
2025-03-05 08:00:00,000 INFO  [main] relay.Main - started
java.lang.IllegalStateException: not a paragraph

# 08:05 restarted with the new options
OPS-7: a ticket header
"""


def test_a_comment_s_later_paragraphs_are_its_author_s_words_and_its_quote_links_the_log(tmp_path):
    """A comment pasted under a log runs past its first blank line: each later paragraph is more of the same
    person's comment (not a log line), until a log line, a trace line, a note or a ticket header begins (from
    bench/incidents16's pasted GitHub issue)."""
    path = tmp_path / "relay.log"
    path.write_text(PASTED_ISSUE, encoding="utf-8")
    recs = [r for r in records(path) if r.text.strip()]
    said = {r.text.split("\n")[0][:24]: (r.kind, r.author) for r in recs}
    assert said["Any artifact that is not"] == ("comment", "okonkwo-q")
    assert said["Set -Djdk.http.auth.tunn"] == ("comment", "mkessler")
    assert said["2025-03-05 08:00:00,000 "][0] == "log"
    assert said["# 08:05 restarted with t"][0] == "note"
    assert said["OPS-7: a ticket header"][0] == "ticket"
    # the person's quote of what the log printed links the log's failure to the thread that fixed it
    (story,) = [inc for inc in incidents({"relay.log": recs}) if any("Unable to tunnel" in line.text
                                                                    and line.record.kind == "log" for line in inc.lines)]
    card = build_card(story)
    assert any("disabledSchemes" in line.text and line.role == "action" for line in card.lines)


JOURNAL = """\
2025-04-05 08:01:12,004 ERROR [pool-init] c.p.pdoc.Db - Unable to create initial connections of pool pdocDS
java.sql.SQLRecoverableException: IO Error: Connection reset
2025-04-05 10:39:52,118 INFO  [main] c.p.pdoc.Main - Server startup in [9,874] milliseconds
2025-04-05 10:41:12,230 INFO  [exec-1] c.p.pdoc.Web - GET /pdoc/api/policies/PW-HH-00620915/documents -> 200

==========================================================
ServiceNow  INC0051872  (activity export, newest first)
==========================================================
Short description:   Policy documents not loading in agent desktop ("Document service unavailable")

2025-04-05 10:44:05 - Priya Nandakumar (Work notes)
CHG0031902 implemented at 10:38 on pdoc-app-01: appended -Djava.security.egd=file:/dev/./urandom to CATALINA_OPTS.

2025-04-05 08:31:07 - Priya Nandakumar (Work notes)
Reopened. Same error again in the pdoc log: Unable to create initial connections of pool. Pulling logs.
"""


def test_a_journal_s_newest_note_goes_with_the_failure_it_fixed_not_the_header_pasted_above_it(tmp_path):
    """A help desk journal listed newest first, under a header whose short description reads as a failure but has
    no time: the fix noted at 10:44 goes with the stretch of the log that failed, not with the quiet restart at 10:39
    it was written during, which only the header's words had made look failed (bench/incidents18)."""
    path = tmp_path / "pdoc.log"
    path.write_text(JOURNAL, encoding="utf-8")
    found = incidents({"pdoc.log": [r for r in records(path) if r.text.strip()]})
    (failed,) = [f for f in found if any(x.record.kind == "log" and "Unable to create" in x.text for x in f.lines)]
    assert any("CHG0031902 implemented" in x.text for x in failed.lines)
