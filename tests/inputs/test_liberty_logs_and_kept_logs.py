"""Open Liberty's messages.log under a Jira Server issue view, a log of incidents people keep in plain text (a dated
title over each entry, a log excerpt indented inside the prose), and a blog post's YAML front matter (the shapes of
bench/incidents25 and bench/incidents26)."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.incidents.times import seconds
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from poimen.relevance.units import split_units
from poimen.text.line_levels import first_failure_level
from poimen.text.log_lines import is_log_line, time_of

LIBERTY = """\
==> ledger-gw-6d7f9c8b5-2xkqm:/logs/messages.log <==
********************************************************************************
product = Open Liberty 25.0.0.2 (wlp-1.0.98.cl250220250210-1901)
java.version = 17.0.14
process = 1@ledger-gw-6d7f9c8b5-2xkqm
********************************************************************************
[3/11/25, 9:13:58:640 UTC] 0000004f com.fellbrook.ledger.api.PostingResource      I batch PB-4415 accepted: 2,006 postings
[3/11/25, 9:14:02:113 UTC] 0000004a com.ibm.ejs.j2c.FreePool      E J2CA0046E: Method createManagedConnectionWithMCWrapper caught an exception
[3/11/25, 9:14:02:121 UTC] 0000004a com.fellbrook.ledger.api.PostingResource      E posting batch PB-4417 failed, returning 500
java.sql.SQLException: DSRA8100E: Unable to get a PooledConnection from the DataSource. with SQL State : 53300
Caused by: org.postgresql.util.PSQLException: FATAL: sorry, too many clients already
\t... 31 more

------------------------------------------------------------------------------------------------
Jira issue views, printed from the browser.
------------------------------------------------------------------------------------------------

Ledger Gateway / LGW-1442
Posting API returns 500 (DSRA8100E) during salary run

Details
Type:\tBug\tStatus:\tREOPENED

Maren Tollefsen made changes - 11/Mar/25 10:21 AM
Field\tOriginal Value\tNew Value
Priority\tMajor [ 3 ]\tCritical [ 2 ]

Jonas Vik added a comment - 11/Mar/25 10:33 AM
Looking. The inner cause on every one of them is the database refusing the login, not the pool being empty.
"""


def _recs(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return detect(f), list(records(f))


def test_a_liberty_line_is_a_log_line_with_its_time_and_its_event_type_as_level():
    line = "[3/11/25, 9:14:02:113 UTC] 0000004a com.ibm.ejs.j2c.FreePool      E J2CA0046E: Method create…"
    assert is_log_line(line) and time_of(line) == "3/11/25, 9:14:02"
    assert seconds(time_of(line)) == seconds("2025-03-11T09:14:02Z")
    assert seconds("[13/3/25, 9:14:02:113 UTC]") == seconds("2025-03-13T09:14:02Z")  # a day over 12 comes first
    assert first_failure_level(line).word == "E"
    assert first_failure_level("[3/11/25, 9:00:41:115 UTC] 00000058 com.x.ReconUiFilter   A CWWKS1100A: …") is None
    assert first_failure_level("[3/11/25, 9:01:27:460 UTC] 00000051 com.x.RateCache   W stale FX rate") is not None
    assert not is_log_line("3/4 of the pods restarted at 09:14")


def test_a_log_under_a_tail_banner_and_a_box_of_server_fields_is_a_log_under_its_jira_issues(tmp_path):
    kind, recs = _recs(tmp_path, "ledger.txt", LIBERTY)
    assert kind == "log"
    filed = {r.line_start: dict(r.attrs).get("ticket") for r in recs}
    assert filed[18] == "LGW-1442" and recs[[r.line_start for r in recs].index(18)].kind == "ticket"  # the breadcrumb
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, r.time) for r in said] == [("Maren Tollefsen", "11/Mar/25 10:21 AM"),
                                                   ("Jonas Vik", "11/Mar/25 10:33 AM")]  # its history is its own post
    assert all(dict(r.attrs).get("ticket") == "LGW-1442" for r in said)


KEPT = """\
OXBOW LABS - PLATFORM TEAM - INCIDENT LOG, Q1 2025
(kept by whoever is on the rota that week)


2025-01-14  CI image pulls failing on all runners  (SEV-2, 3 h 05 min)
Owner: Katya Lindqvist. From 08:40 most CI jobs failed in the "prepare executor" step on the
ci-runner-* fleet, and merges to main stopped for the morning. The job logs
all ended the same way:
    ERROR: Job failed: failed to pull image "node:20-bookworm" with specified policies
    [always]: Error response from daemon: toomanyrequests: You have reached your pull rate
    limit.
The rewritten AMI template no longer wrote /etc/docker/daemon.json, so dockerd went straight to
Docker Hub, anonymously. Fixed by putting the daemon.json back in the Packer template
with "registry-mirrors": ["https://hubcache.oxbow.internal"] and rolling the fleet.


2025-03-06  Terraform applies blocked on the networking stack  (SEV-3, 2 h 20 min)
Owner: Katya Lindqvist. Every plan and apply for infra/networking failed from 10:05 with:
    Error: Error acquiring the state lock
Someone pushed to main while pipeline #48812 was in its apply job, and the runner killed terraform
mid-apply. We released the lock with terraform force-unlock 9b2e4c1a at 12:25. So it cannot happen
again, the apply job is now marked interruptible: false in .gitlab-ci.yml.
"""


def test_a_dated_title_heads_an_entry_of_its_own_and_a_quoted_excerpt_is_no_part_of_a_sentence(tmp_path):
    _, recs = _recs(tmp_path, "q1.txt", KEPT)
    assert {r.headings[-1] for r in recs if "daemon.json" in r.text} == {
        "2025-01-14  CI image pulls failing on all runners  (SEV-2, 3 h 05 min)"}
    assert len({r.headings for r in recs if "terraform" in r.text} | {r.headings for r in recs if "Docker" in r.text}) == 2
    units = [u.text for u in split_units(KEPT.split("\n\n\n")[1])]
    assert units[0].startswith("2025-01-14  CI image pulls")  # the title, apart from the body it heads
    assert "The job logs all ended the same way:" in units
    assert 'ERROR: Job failed: failed to pull image "node:20-bookworm" with specified policies' in units
    # a hanging indent under a list item is the item going on, not a quote
    hanging = "For problem 2:\n  R5. Done: orders-db-2 re-seeded with pg_basebackup -X stream from the\n" \
              "      primary (12:25-16:40).\n  R6. In progress: WAL archiving to S3 with pgBackRest."
    assert "R5. Done: orders-db-2 re-seeded with pg_basebackup -X stream from the primary (12:25-16:40)." in [
        " ".join(u.text.split()) for u in split_units(hanging)]


def test_each_kept_entry_is_an_incident_and_what_stops_a_recurrence_is_its_fix(tmp_path):
    f = tmp_path / "q1.txt"
    f.write_text(KEPT, encoding="utf-8")
    cards = [build_card(i) for i in incidents({f.name: list(records(f))})]
    assert len(cards) == 2
    fixes = [" ".join(line.text for line in c.lines if line.role == "action") for c in cards]
    assert "registry-mirrors" in fixes[0] and "interruptible: false" not in fixes[0]
    assert "interruptible: false" in fixes[1] and "registry-mirrors" not in fixes[1]


FRONT = """\
---
title: "The day sync stopped: a transaction ID wraparound in our notes database"
author: Marisol Etxeberria
tags: [postgres, outage]
---

On Thursday every edit failed.

## What we changed

We changed `max_prepared_transactions` from 64 back to 0 on both servers.
"""


def test_front_matter_titles_the_page_and_is_no_heading_of_its_own(tmp_path):
    _, recs = _recs(tmp_path, "blog.md", FRONT)
    title = "The day sync stopped: a transaction ID wraparound in our notes database"
    assert [r.headings for r in recs] == [(title,), (title,), (title, "What we changed"), (title, "What we changed")]
    _, recs = _recs(tmp_path, "rule.md", "---\n\nNot front matter: a rule.\n")
    assert [r.headings for r in recs] == [()]


def test_a_reopening_that_says_it_looks_different_turns_the_ticket():
    from poimen.incidents.cues import OTHER_PROBLEM

    assert OTHER_PROBLEM.search("Reopening, posting API is throwing 500s again this morning, again during a big inbound "
                                "file. But it looks different: no DSRA8100E this time.")
    assert not OTHER_PROBLEM.search("Reopening: same 500s again this morning, the fix did not hold.")
    assert not OTHER_PROBLEM.search("The heap graph looks different after the restart.")  # no reopening


PAYARA = """\
[2025-05-22T09:07:13.388+0000] [Payara 6.2025.4] [SEVERE] [] [com.quillmark.billing.account.PasswordResetService] [tid: _ThreadID=110] [timeMillis: 1747904833388] [levelValue: 1000] [[
  could not send password reset mail to j.adeyemi@brookmere-lettings.example
org.eclipse.angus.mail.smtp.SMTPSendFailedException: 553 5.7.1 <noreply@billing.example>: Sender address rejected: not owned by user svc-portal-mail
]]

Priya Anand
May 22, 2025 11:31
Hello Tobias, me again.
Different problem: we added two new colleagues as sub-users this morning and neither got the e-mail to set their password.
Status changed: Solved → Open

Nadia Kowalczyk
May 22, 2025 12:34
Cause: the mail team turned on sender/login matching on smtp-relay-01 on 20 May (reject_sender_login_mismatch).
Fixed 12:31 on both instances:
asadmin set resources.mail-resource.mail/portalMail.from=no-reply@quillmark.example
"""


def test_a_payara_record_is_titled_by_its_message_and_a_new_problem_told_is_no_fix(tmp_path):
    f = tmp_path / "billing.txt"
    f.write_text(PAYARA, encoding="utf-8")
    recs = list(records(f))
    assert detect(f) == "log" and [r.kind for r in recs][:1] == ["log"]
    (card,) = [build_card(i) for i in incidents({f.name: recs})]
    assert "could not send password reset mail" in card.title and "[[" not in card.title
    fixes = [line.text for line in card.lines if line.role == "action"]
    assert fixes == ["asadmin set resources.mail-resource.mail/portalMail.from=no-reply@quillmark.example"]


TEAMS = """\
INFO  [2025-09-17 12:00:00,011] com.tarnby.pricing.sync.FullResyncJob: full resync started: 6 feeds
ERROR [2025-09-17 12:04:31,902] com.tarnby.pricing.sync.FullResyncJob: full resync aborted after 71,204 of 212,880 SKUs
! java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached

[17/09 14:06] Freja Lund
shop is getting 500s from price-sync since ~14:04, and the 14:00 full resync died.

[17/09 15:42] Magnus Ek
and on our side, price-sync.yml: server.maxThreads 1024 -> 256
"""


def test_teams_messages_copied_are_comments_dated_in_the_logs_year(tmp_path):
    _, recs = _recs(tmp_path, "price.txt", TEAMS)
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, r.time) for r in said] == [("Freja Lund", "2025-09-17 14:06"), ("Magnus Ek", "2025-09-17 15:42")]
    assert "shop is getting 500s" in said[0].text


GDOC = """\
\ufeffWMS Incident Review - Week 15 (7-13 April 2025)
Kestrel Freight - Warehouse Systems


2. WMS-INC-212: Scanner writes failing at Tilbury and Daventry


2.1 Summary
From 06:14 to 07:26 two thirds of scanner writes reached a Redis replica.


2.7 Resolution
At 07:19 Lars put the role check back into be_redis_rw on both load balancers.


3. WMS-INC-214: Pick list generation timing out at Daventry


3.1 Summary
From 06:05 to 09:45 pick list generation for Daventry waves failed.
"""


def test_a_numbered_heading_that_names_its_ticket_opens_an_incident_of_its_own(tmp_path):
    from poimen.text.headings import names_problem

    _, recs = _recs(tmp_path, "review.txt", GDOC)
    sections = {r.headings[1] for r in recs if len(r.headings) > 1}
    assert sections == {"WMS-INC-212: Scanner writes failing at Tilbury and Daventry",
                        "WMS-INC-214: Pick list generation timing out at Daventry"}
    assert names_problem("INC-2231 - Reservations timing out") and not names_problem("pg-1: disk full")


def test_a_byte_order_mark_is_no_part_of_the_title(tmp_path):
    _, recs = _recs(tmp_path, "review.txt", GDOC)
    assert recs[1].headings[0] == "WMS Incident Review - Week 15 (7-13 April 2025)"
    f = tmp_path / "export.json"
    f.write_text('\ufeff[{"ts": "1726000000.000100", "user": "U1", "text": "api 502s since 14:00"}]', encoding="utf-8")
    assert detect(f) == "chat" and [r.text for r in records(f)] == ["[2024-09-10T20:26:40Z] U1: api 502s since 14:00"]


def test_an_error_pasted_into_a_ticket_counts_as_printed_and_the_words_people_wrote_join_the_card(tmp_path):
    text = LIBERTY.replace("Details\n", "Description\nSalary run from payroll started 10:00. From ~10:14 the posting "
                           "API answers 500 for a part of the batches.\n\nJ2CA0046E: Method createManagedConnection… "
                           "DSRA8100E: Unable to get a PooledConnection from the DataSource.\n\nDetails\n")
    f = tmp_path / "ledger.txt"
    f.write_text(text, encoding="utf-8")
    (card,) = [build_card(i) for i in incidents({f.name: list(records(f))})]
    symptoms = [line.text for line in card.lines if line.role == "symptom"]
    assert "Posting API returns 500 (DSRA8100E) during salary run" in symptoms
    assert not any(s.startswith("J2CA0046E") for s in symptoms)


PD_TABLE = """\
## #48213 — logging cluster went read-only

### Log entries

| Created at (UTC) | Type | Agent | Channel | Summary |
|---|---|---|---|---|
| 2025-03-11 03:52:07 | trigger_log_entry | Alertmanager | Events API v2 | Triggered through the API. `[FIRING:1] ElasticsearchDiskFloodStage logs-es-prod` |
| 2025-03-11 03:58:40 | acknowledge_log_entry | Ines Varga | mobile app | Acknowledged by Ines Varga. |
| 2025-03-11 04:06:12 | annotate_log_entry | Ines Varga | website | Note added: fluent-bit on every node is getting 429s back from logs-es-prod, cluster_block_exception. |
| 2025-03-11 04:22:47 | annotate_log_entry | Ines Varga | website | Note added: retention is meant to be 14 days, but ILM explain returns "managed": false for every index since 3 Feb. |
| 2025-03-11 06:18:03 | resolve_log_entry | Ines Varga | website | Resolved by Ines Varga. |

### Resolution

Ines attached the logs-app-14d lifecycle policy to the remaining unmanaged indices.
"""


def test_a_pagerduty_log_entry_row_is_read_by_its_summary(tmp_path):
    """An exported log entry says its summary; "Note added:" and "Acknowledged by Ines Varga." are the tool's words,
    so the notes are no fix and the Resolution's prose is (bench/incidents28)."""
    from poimen.incidents.roles import said_in_row

    f = tmp_path / "review.md"
    f.write_text(PD_TABLE, encoding="utf-8")
    (card,) = [build_card(i) for i in incidents({f.name: list(records(f))})]
    fixes = [line.text for line in card.lines if line.role == "action"]
    assert fixes == ["Ines attached the logs-app-14d lifecycle policy to the remaining unmanaged indices."]
    assert not any("Acknowledged by" in line.text for line in card.lines)
    assert said_in_row("Created at (UTC): 2025-03-11 04:06:12; Type: annotate_log_entry; Agent: Ines Varga; Summary: "
                       "Note added: fluent-bit is getting 429s back") == "fluent-bit is getting 429s back"


GH_CLI = """\
==> kubectl -n dispatch logs dispatch-api-7c9f8d6b5-k2xqd, 2025-05-12 UTC <==
{"@timestamp":"2025-05-12T05:51:02.114520381Z","log.level":"INFO","service.name":"dispatch-api","message":"Position batch consumed"}
{"@timestamp":"2025-05-12T05:58:41.203117554Z","log.level":"ERROR","service.name":"dispatch-api","message":"route-engine call failed"}
{"@timestamp":"2025-05-12T05:58:41.207551903Z","log.level":"WARN","service.name":"dispatch-api","message":"Connection prematurely closed BEFORE response"}

==> saved from the terminal, 2025-07-16 <==
$ gh issue view 412 --comments -R halden-mobility/fleet-dispatch
ETA calls to route-engine fail with "Connection prematurely closed BEFORE response" halden-mobility/fleet-dispatch#412
Closed • jonas-eklund opened about 2 months ago • 12 comments


  Since this morning dispatch-api logs a burst of ERRORs from EtaClient.

    {"@timestamp":"2025-05-12T05:58:41.203117554Z","log.level":"ERROR","message":"route-engine call failed"}


tobias-wren (Member) • May 13, 2025
  #415 is up: the route-engine provider evicts connections idle for more than 45 s.


ana-cordeiro (Contributor) • May 26, 2025 • Newest comment
  Reopening, sorry. Since the 06:00 replans dispatch-api throws a different error on the same client.


View this issue on GitHub: https://github.com/halden-mobility/fleet-dispatch/issues/412
$ gh issue view 427 --comments -R halden-mobility/fleet-dispatch
Rollout of 3.20.0 stuck: new dispatch-api pods crashloop on Flyway validate halden-mobility/fleet-dispatch#427
Closed • lukas-brenner opened about 1 month ago • 7 comments


lukas-brenner (Member) • May 20, 2025
  Found it. flyway_schema_history has a row from the canary.
"""


def test_ecs_json_lines_are_a_log_and_gh_issue_view_files_its_comments(tmp_path):
    from poimen.incidents.cues import OTHER_PROBLEM

    busy = "".join('{"@timestamp":"2025-05-12T06:%02d:00.000Z","log.level":"INFO","message":"tour %d planned"}\n'
                   % (k, k) for k in range(20))  # a morning's log: the two `gh` prompts are no shell session
    text = GH_CLI.replace("\n\n==> saved", "\n" + busy + "\n==> saved", 1)
    kind, recs = _recs(tmp_path, "dispatch.txt", text)
    assert kind == "log"
    logged = [r for r in recs if r.kind == "log" and r.time]
    assert logged[0].time == "2025-05-12T05:51:02.114520381Z" and logged[1].level == "ERROR"
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, r.time, dict(r.attrs).get("ticket")) for r in said] == [
        ("tobias-wren", "May 13, 2025", "#412"), ("ana-cordeiro", "May 26, 2025", "#412"),
        ("lukas-brenner", "May 20, 2025", "#427")]
    pasted = [r for r in recs if r.kind == "log" and r.line_start == 34]
    assert pasted and ("quoted", "comment") in pasted[0].attrs  # the issue's description pastes it: no log line
    assert OTHER_PROBLEM.search(said[1].text)


JIRA_EXPORT = """\
### setl-batch-02:/var/log/setl/settlement-job.log
log4j:WARN No such property [maxBackupIndex] in org.apache.log4j.DailyRollingFileAppender.
2025-04-22 02:00:00,117 INFO  [main] com.kinnaird.setl.SettlementJobRunner - settlement-batch 7.4.3 starting
2025-04-22 05:41:19,870 ERROR [main] org.springframework.batch.core.step.AbstractStep - reconcileStep failed
java.sql.SQLException: ORA-01555: snapshot too old: rollback segment number 14 too small

SETL-311  Nightly settlement job fails in fetchAcquirerFileStep: IO Error: Connection reset
Comment by Mercy Okafor [ 08/Apr/25 09:12 ]
Nothing on the DB side. The listener log shows the sessions connecting at 02:00:01 and
07:05:14 and then nothing until the client is gone.

SETL-322  reconcileStep fails after ~1h50m with ORA-01555 snapshot too old
Description:
run.date 2025-04-21: reconcileStep failed at 05:41 after 1h50m.
Comment by Daniel Fitzgerald [ 22/Apr/25 09:03 ]
Full trace from the first attempt for reference:
{code:java}
2025-04-22 05:41:19,870 ERROR [main] org.springframework.batch.core.step.AbstractStep - reconcileStep failed
{code}
The volume is the new thing: 9.8M rows instead of 4.5M.
Comment by Mercy Okafor [ 22/Apr/25 10:40 ]
UNDO_RETENTION is 900.
"""


def test_a_jira_export_keeps_its_comments_past_a_wrapped_clock_a_dated_description_and_a_code_block(tmp_path):
    kind, recs = _recs(tmp_path, "settlement.txt", JIRA_EXPORT)
    assert kind == "log"  # (its first line after the banner is log4j's own "log4j:WARN …")
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, dict(r.attrs).get("ticket")) for r in said] == [
        ("Mercy Okafor", "SETL-311"), ("Daniel Fitzgerald", "SETL-322"), ("Daniel Fitzgerald", "SETL-322"),
        ("Mercy Okafor", "SETL-322")]
    pasted = [r for r in recs if r.kind == "log" and r.line_start == 18]
    assert pasted and ("quoted", "comment") in pasted[0].attrs


OPSDESK = """\
=== kubectl -n pricing logs tariff-engine-5d7f9c8b6-rq2mn (stdout+stderr), times UTC ===
Picked up JAVA_TOOL_OPTIONS: -Xlog:gc,gc+init:stdout:time,level,tags
[2025-06-10T04:12:06.902+0000][info][gc,init] Heap Max Capacity: 1G
2025-06-10 07:04:36.118:ERROR:cbtq.QuoteServlet:qtp1418385211-52: quote failed lane=DEHAM-PLGDN
2025-06-10 07:04:41.310:ERROR:cbtq.QuoteServlet:qtp1418385211-49: quote failed lane=BEANR-DEMUC

INC-2291 · tariff-engine: quote API timeouts and OOM after nightly image rebuild
status: resolved · severity: SEV2 · owner: Jakob Lind

#2 by Jakob Lind at 2025-06-10 15:46 CEST:
  Rolled out 5.4.1 again with JDK_JAVA_OPTIONS=-XX:MaxRAMPercentage=70.

#1 by Mareike Brandt at 2025-06-10 09:12 CEST:
  Quote API answers 504 since 09:04.

==========================================================================================
copied from support.almora-software.example (Zammad), ticket zoom
==========================================================================================

PermitDesk: "IO Error: Connection reset" since Monday morning
Ticket#61827
State: closed · Priority: 3 high

Gareth Pryce · via email · 10.03.2025 08:21
Good morning, since about 08:00 our planning officers get "An error occurred".

==========================================================================================

PermitDesk: decision notices not sent
Ticket#61904
State: closed · Priority: 2 normal

Ines Rutter · internal note · 17.03.2025 10:02
SMTP AUTH is disabled for the tenant since the weekend.
"""


def test_an_incident_tools_export_and_a_zammad_ticket_under_a_jvm_log(tmp_path):
    kind, recs = _recs(tmp_path, "tariff.txt", OPSDESK)
    assert kind == "log"  # (what the JVM says first is no title over it)
    said = [r for r in recs if r.kind == "comment"]
    assert [(r.author, dict(r.attrs).get("ticket")) for r in said] == [
        ("Jakob Lind", "INC-2291"), ("Mareike Brandt", "INC-2291"), ("Gareth Pryce", "#61827"),
        ("Ines Rutter", "#61904")]
    from poimen.incidents.times import seconds
    assert seconds(said[2].time) == seconds("2025-03-10T08:21:00Z")


def test_a_note_typed_at_a_prompt_with_a_clock_is_at_that_time_of_the_recordings_day(tmp_path):
    text = ("Script started on 2025-03-11 02:14:07+00:00 [TERM=\"xterm-256color\"]\n"
            "kenji on ops-jump-01 in ~/deploy\n❯ # 02:58 green. PR in the morning\n"
            "kenji on ops-jump-01 in ~/deploy\n❯ # 08:36 back on. receipt uploads fail for big scans\n"
            "kenji on ops-jump-01 in ~/deploy\n❯ kubectl -n receipts get pods\n")
    kind, recs = _recs(tmp_path, "typescript.txt", text)
    assert kind == "shell"
    assert [r.time for r in recs if r.kind == "note"] == ["2025-03-11 02:58", "2025-03-11 08:36"]


def test_jboss_cli_writes_change_state_and_its_reads_do_not():
    from poimen.incidents.roles import pick, score

    changed = "/subsystem=datasources/data-source=PermitDS:write-attribute(name=validate-on-match,value=true)"
    assert pick(score(changed, "comment")) == "action"
    assert pick(score("/subsystem=mail/mail-session=permitMail/server=smtp:undefine-attribute(name=username)",
                      "comment")) == "action"
    assert pick(score("/subsystem=datasources:read-children-names(child-type=data-source)", "comment")) == "none"
