"""Cards: built by extraction from a multi-format incident; held-out streams check that the cues generalise."""

from __future__ import annotations

import pytest

import incident_heldout as held
from incident_fixtures import (JIRA, JIRA_CAUSE, JIRA_FIX, LOG, PAGERDUTY, PAGERDUTY_FIX, SHELL, SHELL_FIX,
                               SHELL_RESTART, SLACK, SLACK_CAUSE, SLACK_FIX, SLACK_HERRINGS, SLACK_ROLLBACK, rec)

from poimen.domain import sha256_text
from poimen.incidents import build_card, cards, incidents, render


def _texts(lines) -> list[str]:
    return [line.text for line in lines]


def test_every_rendered_line_is_copied_verbatim_with_its_role_and_evidence():
    card = build_card(incidents({"slack.json": SLACK})[0])
    sources = {line.strip() for r in SLACK for line in r.text.split("\n")}
    rendered = render(card).split("\n")
    assert rendered and all(line in sources for line in rendered)
    assert set(card.roles) == {sha256_text(line) for line in rendered}
    fix = next(line for line in card.lines if line.text == SLACK_FIX)
    assert card.roles[fix.sha] == "action"
    assert (fix.evidence.stream, fix.evidence.line_start, fix.evidence.kind) == ("slack.json", 39, "reply")


def test_the_slack_card_holds_cause_and_fix_and_no_red_herring():
    card = build_card(incidents({"slack.json": SLACK})[0])
    assert _texts(card.causes) == [SLACK_CAUSE]
    assert SLACK_FIX in _texts(card.actions)
    assert SLACK_ROLLBACK not in _texts(card.actions)
    assert not set(SLACK_HERRINGS) & set(_texts(card.lines))
    assert card.title.startswith("checkout-api")
    assert card.summary.startswith("checkout-api failed") and "because" in card.summary
    assert "resolved with bumped proxy-body-size: 16m" in card.summary


def test_a_multi_format_incident_makes_one_card_across_streams():
    streams = {"svc.log": LOG, "jira.csv": JIRA}
    (card,) = [c for c in cards(streams, across_streams=True) if JIRA_FIX in _texts(c.lines)]
    assert card.streams == ("svc.log", "jira.csv")  # time order: the log came first
    assert _texts(card.causes) == [JIRA_CAUSE]
    assert any("OutOfMemoryError" in line.text and line.evidence.stream == "svc.log" for line in card.symptoms)
    assert card.verifications and card.start == "2024-04-09 03:12:44,118" and card.end == "2024-04-10T07:00:00Z"
    assert ("ticket", "ORD-977") in {(e.kind, e.value) for e in card.entities}


def test_markdown_and_shell_cards():
    pd = build_card(incidents({"pd.md": PAGERDUTY})[0])
    assert PAGERDUTY_FIX in _texts(pd.actions) and pd.causes and pd.verifications
    shell = build_card(incidents({"shell.txt": SHELL})[0])
    assert SHELL_FIX in _texts(shell.actions) and SHELL_RESTART not in _texts(shell.actions)


def test_symptoms_of_one_shape_are_kept_once():
    from incident_fixtures import rec
    burst = tuple(rec(f"2024-04-09 03:14:0{i} ERROR [worker-{i}] upstream timed out after {i}000ms", i, "log")
                  for i in range(1, 6))
    card = build_card(incidents({"x.log": burst})[0])
    assert len(card.symptoms) == 1


def test_held_out_postmortem_generalises():
    (card,) = cards({held.POSTMORTEM_STREAM: held.POSTMORTEM})
    assert _texts(card.causes) == [held.POSTMORTEM_CAUSE]
    assert set(held.POSTMORTEM_FIXES) <= set(_texts(card.actions))
    assert held.POSTMORTEM_HERRING not in _texts(card.lines)
    assert card.verifications


def test_held_out_issue_generalises_and_the_docs_ticket_is_no_incident():
    (card,) = cards({held.ISSUE_STREAM: held.ISSUES})
    assert _texts(card.causes) == [held.ISSUE_CAUSE]
    assert held.ISSUE_FIX in _texts(card.actions)
    assert not set(held.ISSUE_HERRINGS) & set(_texts(card.lines))


def test_a_write_up_part_that_tells_its_failure_as_a_cause_still_says_what_was_seen():
    from incident_fixtures import rec

    part = ("Postmortem", "Part A: broker memory alarm")
    records = (
        rec("The namespace split moved refund-worker into a namespace without the ledger-dsn secret, so every pod "
            "crashed before it opened a channel.", 3, headings=part + ("Root cause",)),
        rec("Classic queues keep messages in RAM as long as they can, so 3.2M messages pushed the node over its "
            "watermark.", 5, headings=part + ("Root cause",)),
        rec("First Elif ran `rabbitmqctl set_policy --apply-to queues refunds-lazy`, which paged the queue to disk.", 7,
            headings=part + ("Resolution",)),
    )
    card = build_card(incidents({"pd.md": records})[0])
    assert _texts(card.symptoms) == [records[0].text]  # the failure line, taken from the causes, which keep one
    assert _texts(card.causes) == [records[1].text] and "set_policy" in _texts(card.actions)[0]


@pytest.mark.parametrize("line, said", [
    ("2024-09-18T10:08:31.019Z ERROR 1 --- [inventory-service] [nio-8080-exec-41] o.h.e.j.s.SqlExceptionHelper   : "
     "HikariPool-1 - Connection is not available", "HikariPool-1 - Connection is not available"),
    ("2024-06-02 12:58:02.466 ERROR [sync-worker-1] c.f.ledger.sync.NordfinClient - Request to bank-nordfin failed",
     "request to bank-nordfin failed"),
    ("2024/11/08 01:37:41 [crit] 2415#2415: *1904417 connect() to 10.20.4.17:8080 failed (99: Cannot assign "
     "requested address)", "connect() to 10.20.4.17:8080 failed (99: Cannot assign requested address)"),
    ("org.apache.kafka.common.errors.RecordTooLargeException: The message is 1458221 bytes",
     "org.apache.kafka.common.errors.RecordTooLargeException: The message is 1458221 bytes"),
    # WebLogic's message is its last <field>; klog's follows "file.go:149]"; a JSON line's and logfmt's, their msg
    ("####<May 22, 2025 8:14:52,880 AM UTC> <Error> <com.merrow.pa.web.PolicySearchAction> <wlpa-02> <pa_ms2> "
     "<[ACTIVE] ExecuteThread: '31' for queue: 'weblogic.kernel.Default (self-tuning)'> <a.whitlock> <> <b3f90e12> "
     "<1747901692880> <[severity-value: 8] [rid: 0:1] [partition-id: 0] [partition-name: DOMAIN] > <BEA-000000> "
     "<policy search failed (q=surname:Okonjo postcode:LS6)>", "policy search failed (q=surname:Okonjo postcode:LS6)"),
    ('E0117 11:49:02.441821       1 scraper.go:149] "Failed to scrape node" err="context deadline exceeded"',
     '"Failed to scrape node" err="context deadline exceeded"'),
    ('{"level":"error","ts":"2024-12-03T09:52:33.006Z","caller":"store/redis.go:88","msg":"redis ping failed",'
     '"error":"dial tcp 10.1.4.7:6379: i/o timeout"}', "redis ping failed"),
    ('time=2024-03-05T08:30:02Z level=error msg="upstream dial failed" host=vault-0 err="x509: certificate has expired"',
     "upstream dial failed"),
    # Tomcat's, Payara's ULF, Celery's, Elasticsearch's and PostgreSQL's headers
    ("20-May-2024 10:41:20.712 SEVERE [http-nio-8080-exec-7] org.apache.catalina.core.StandardWrapperValve.invoke "
     "Servlet.service() for servlet [dispatcher] threw exception",
     "Servlet.service() for servlet [dispatcher] threw exception"),
    ("[#|2024-10-16T14:12:30.336+0000|WARNING|Payara Micro 6.2024.9|com.acme.claims.OutboxFlusher|_ThreadID=77;"
     "_ThreadName=flusher;_LevelValue=900;|outbox backlog 412 events, oldest 00:06:01|#]",
     "outbox backlog 412 events, oldest 00:06:01"),
    ("[2024-06-03 02:14:07,551: ERROR/MainProcess] Received unregistered task of type 'reports.tasks.build_statement'.",
     "received unregistered task of type 'reports.tasks.build_statement'"),
    ("[2025-02-19T07:41:55,007][WARN ][o.e.x.m.MonitoringService] [es-master-1] monitoring execution failed",
     "monitoring execution failed"),
    ('2025-04-03 08:04:51.220 UTC [1187] PANIC:  could not write to file "pg_wal/xlogtemp.1187": No space left',
     'could not write to file "pg_wal/xlogtemp.1187": No space left'),
    # Karaf's columns, Jenkins' "Class#method:", JUL's "logger method -", and a logger's context fields first
    ("2025-05-13T09:37:02,447 | ERROR | tp1839168128-212 | AddressVerifyProcessor           | 187 - "
     "com.tallisrooke.orders.intake - 2.9.1 | addrcheck verify failed for SO-5581230 after 10002 ms",
     "addrcheck verify failed for SO-5581230 after 10002 ms"),
    ("2025-09-02 07:03:44.770+0000 [id=58851]\tWARNING\thudson.security.csrf.CrumbFilter#doFilter: No valid crumb was "
     "included in request", "no valid crumb was included in request"),
    ("2025-08-19 01:31:02.118 SEVERE  com.fenwright.settle.ExportJob runBatch - batch 7 (merchant group EU-3) failed",
     "batch 7 (merchant group EU-3) failed"),
    ("2025-08-18 02:11:02.006 WARNING com.fenwright.settle.sftp.Uploader connect - sftp.orsaye.example offered host "
     "key algorithm ssh-rsa", "sftp.orsaye.example offered host key algorithm ssh-rsa"),  # a host is no logger
    ("2025-04-08 14:58:09.877 [JettyServerThreadPool-33] ERROR c.b.loanbook.web.ErrorMapper - req=2d19e4f1 POST "
     "/api/v2/applications -> 503 LB-DB-UNAVAILABLE", "POST /api/v2/applications -> 503 LB-DB-UNAVAILABLE"),
    ("2025-04-15 07:02:15.448 [scheduler-1] ERROR c.b.loanbook.jobs.DraftReminderJob - req=- reminder batch failed",
     "reminder batch failed"),
    ("2025-06-03 14:12:30.118 ERROR [pool-1] c.g.media.upload.UploadService - upload failed listing=L-2232015 "
     "bytes=88790455", "upload failed listing=L-2232015 bytes=88790455"),
    ("Checkout is failing for every customer since the deploy", "checkout is failing for every customer since the deploy"),
    # a mail's or a help desk post's field: what it says, without the field's name
    ('Subject:       Online loan application - members stuck on "Income & Employment" step',
     'online loan application - members stuck on "Income & Employment" step')])
def test_a_title_says_what_a_log_line_says_not_its_pid_thread_or_logger(line, said):
    from poimen.incidents.card import clause

    assert clause(line) == said


def test_an_operators_note_is_no_markdown_heading_and_its_fix_reaches_the_card(tmp_path):
    log = ("2024-10-21 02:00:01,048 ERROR [billing_sync.scheduler] run=hourly-0200 batch aborted\n"
           "psycopg2.OperationalError: SSL SYSCALL error: EOF detected\n"
           "# 02:48  the pool keeps its connections idle for an hour; the NLB drops idle flows after 350 s.\n"
           "# 03:39  shipped 4.12.3: engine now created with pool_recycle=280 and pool_pre_ping=True\n")
    f = tmp_path / "billing.log"
    f.write_text(log, encoding="utf-8")
    from poimen.inputs.chunking import records as read

    card = build_card(incidents({"billing.log": list(read(f))})[0])
    assert any("pool_recycle=280" in line.text for line in card.actions)


def test_the_title_names_the_strongest_symptom_not_the_first():
    from poimen.incidents.card import CardLine, Evidence, service_of, summary_of, title_of

    def line(text: str, score: float) -> CardLine:
        return CardLine(text, "symptom", Evidence("w.log", 1, 1, "log", 0), score)
    lines = [line("webhooks: signature mismatch for event evt_01 on tenant-sandbox", 1.0),
             line("settle_capture raised TimeoutError: QueuePool limit reached", 3.9)]
    title = title_of("payments-worker", lines)
    assert title.startswith("payments-worker: settle_capture raised TimeoutError")
    # ... and so does the summary; the service is the one the strongest lines name, not a warning's value
    assert summary_of("payments-worker", lines).startswith("payments-worker failed (settle_capture raised")
    lines.append(line("payments-worker pods restart, every capture times out", 1.5))
    assert service_of([], lines) == "payments-worker"


def test_a_trackers_field_row_is_never_the_finding():
    """A Jira page's "Components: docrender, render   Labels: tls, archive" shares more of the fix's words than
    the finding does; the finding is what someone wrote (bench/incidents22)."""
    records = [rec("2025-05-09 14:40:07,902 ERROR [archive-pool-2] upload to bucket render-archive failed: PKIX "
                   "path building failed", 1, "log", level="ERROR"),
               rec("Components: docrender, render   Labels: tls, archive", 3, "ticket"),
               rec("The image bakes its own truststore from the old CA bundle at build time.", 5, "comment"),
               rec("helm upgrade docrender -n render --set truststore.baked=false", 7, "comment")]
    card = build_card(incidents({"render.txt": records})[0])
    assert _texts(card.causes) == [records[2].text]


def test_a_work_notes_header_says_nothing_and_the_finding_under_it_is_the_cause(tmp_path):
    finding = "Bank API p99 went from 800ms to 31s after their maintenance window."
    log = ("2024-03-02 11:04:17,221 ERROR [pool-3-thread-7] c.a.pay.SettleJob - settlement batch failed\n"
           "java.net.SocketTimeoutException: Read timed out\n"
           "\tat com.acme.pay.BankClient.post(BankClient.java:88)\n"
           "\n"
           "2024-03-02 11:52:10 - Jane Doe (Work notes)\n"
           f"{finding}\n"
           "2024-03-02 13:20:44 - Raj Patel (Work notes)\n"
           "Raised bank.client.read-timeout-ms from 5000 to 45000 and redeployed; batches settle again.\n")
    f = tmp_path / "settle.log"
    f.write_text(log, encoding="utf-8")
    from poimen.inputs.chunking import records as read

    card = build_card(incidents({"settle.log": list(read(f))})[0])
    assert _texts(card.causes) == [finding]
    assert not any("(Work notes)" in text for text in _texts(card.lines))


def test_a_title_drops_a_log_lines_clock_with_its_milliseconds():
    """WildFly's "01:14:22,130 ERROR [category] (thread) …": the title says what failed, not ",130 ERROR" nor the
    thread."""
    from poimen.incidents.card import clause

    assert clause("01:14:22,130 ERROR [org.jboss.as.ejb3.invocation] (EJB default - 37) batch 021 failed") == \
        "batch 021 failed"


@pytest.mark.parametrize("noise", ["* % Done changed from 0 to 100 on route-redis", "Issue #7731 has been updated by Piotr.",
                                   "Subject: [Bug #7731] route-redis timeouts at 02:00",
                                   "We discussed UNLINK on route-redis and decided not to raise the timeout.",
                                   "Two changes for route-redis, both live since yesterday afternoon:"])
def test_a_line_that_says_nothing_of_its_own_is_never_the_finding(noise):
    """A tracker's history line, its e-mail's header, a change decided against, a line that introduces what follows:
    they share the fix's words ("route-redis", "UNLINK") and state no finding (bench/incidents23)."""
    records = [rec("2025-04-15 02:00:01,204 ERROR [exec-5] c.p.scan.Sort - route plan lookup failed: Command timed "
                   "out", 1, "log", level="ERROR"),
               rec(noise, 3, "comment"),
               rec("The rollover job drops a six-million-field hash in one go at night.", 5, "comment"),
               rec("routeplan-rollover now runs UNLINK on route-redis, deployed at 14:10.", 7, "comment")]
    card = build_card(incidents({"scan.txt": records})[0])
    assert _texts(card.causes) == [records[2].text]
