"""An issue tracker's page copied as text under the log it is about: its comments keep their days, a request id it
cites joins the log line that printed it, and what a comment pastes (log lines, a plan, a statement) stays the
comment's."""

from __future__ import annotations

import re

from incident_fixtures import stored_lines

from poimen import incidents as inc
from poimen.incidents.card import build_card
from poimen.incidents.roles import score
from poimen.incidents.toollines import about_post
from poimen.inputs.chunking import records
from poimen.text.log_lines import is_log_line

PAGE = """### orders-api -- log excerpts for shop/orders#311 and #318
2025-05-02 10:14:03,118 [http-nio-8080-exec-3] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-4be1a9d7 cart=88123 step=pricing took=30011ms
2025-05-02 10:14:09,552 [http-nio-8080-exec-5] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-71f0e2aa cart=90417 step=pricing took=30006ms
2025-05-02 10:14:15,004 [http-nio-8080-exec-8] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-0c33b5e1 cart=11209 step=pricing took=30009ms
2025-05-27 01:59:58,201 [scheduling-1] INFO  com.acme.orders.ExportJob - export started
2025-05-27 02:00:31,920 [scheduling-1] ERROR com.acme.orders.ExportJob - export failed step=totals took=30006ms

==== https://gitlab.acme.internal/shop/orders/-/issues/318 (copied from the web UI on 2025-05-30) ====

Nightly export fails
Closed  Issue created 3 days ago by Jo Kim

Activity
Jo Kim @jkim · 3 days ago
Developer
From the db log, many of these:

    2025-05-27 02:00:01.114 UTC [4821] export@shop LOG:  process 4821 still waiting for ShareLock on relation 16702
    2025-05-27 02:00:01.114 UTC [4821] export@shop DETAIL:  Process holding the lock: 4790.

Relation 16702 is cart_totals_mv, and 4790 is the refresh job.

Jo Kim @jkim · 2 days ago
Developer
The job now runs REFRESH MATERIALIZED VIEW CONCURRENTLY cart_totals_mv; last night's export went through.

==== https://gitlab.acme.internal/shop/orders/-/issues/311 (copied from the web UI on 2025-06-30) ====

Checkouts hang for 30 s and then fail
Closed  Issue created 4 weeks ago by Ana Ruiz

About half of the checkouts time out since the release. Example requestId=c-4be1a9d7, log excerpt above.

Activity
Ana Ruiz @aruiz · 4 weeks ago
Author
Can someone look? Error rate is 40% on checkout.

Ben Ode @bode · 4 weeks ago
Developer
The plan of the price query on prod:

    Seq Scan on price_rule pr  (cost=0.00..99120.10 rows=4 width=96)
      Rows Removed by Filter: 2210334

Nothing uses an index there any more.

Ben Ode @bode · 4 weeks ago
Developer
Found it: migration V41 dropped ix_price_rule_cart and nothing recreated it. Building it by hand:

    CREATE INDEX CONCURRENTLY ix_price_rule_cart ON price_rule (cart_region, valid_from);
    ANALYZE price_rule;

Checkouts are back to 40 ms.

Ana Ruiz @aruiz closed 4 weeks ago
"""


def _records(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return [r for r in records(f) if r.text.strip()]


def test_a_request_id_the_issue_cites_joins_the_log_lines_weeks_before_its_comments(tmp_path):
    """The burst was printed on 2 May, the comments a month later ("4 weeks ago" on a page copied on 30 June): too
    far apart for a service and a message to link them, but the issue cites one request of the burst."""
    recs = _records(tmp_path, "orders.log", PAGE)
    cards = [build_card(i) for i in inc.incidents({"orders.log": recs})]
    card = next(c for c in cards if any("CREATE INDEX CONCURRENTLY" in line.text for line in c.actions))
    assert any("checkout failed requestId=" in line.text for line in card.symptoms)
    # what people said they saw, two of their lines, beside the errors the log printed
    said = [line.text for line in card.symptoms if not line.text.startswith("2025-")]
    assert said[:1] == ["Checkouts hang for 30 s and then fail"] and said[1].startswith("About half of the checkouts")
    export = next(c for c in cards if any("REFRESH MATERIALIZED VIEW" in line.text for line in c.actions))
    assert export is not card and any("export failed" in line.text for line in export.symptoms)


def test_a_trackers_relative_times_count_back_from_the_day_the_page_was_copied(tmp_path):
    recs = _records(tmp_path, "orders.log", PAGE)
    assert {r.time for r in recs if r.kind == "comment"} == {"2025-06-02", "2025-05-27", "2025-05-28"}
    redmine = ("Redmine -- https://redmine.acme.internal/issues/{n} (page text, copied 2025-04-01)\n\nBug #{n}\n"
               "Invoice run aborts\n\n#note-1  Updated by Ana Ruiz 20 days ago\nThe run dies at batch 17.\n\n"
               "#note-2  Updated by Ben Ode about 1 month ago\nStatus changed from New to Assigned\n\n")
    recs = _records(tmp_path, "billing.log", redmine.format(n=4471) + redmine.format(n=4502))
    # (the date stays with the page when its number comes again under the header, with no date; a month is too coarse
    # to count back)
    assert [r.time for r in recs if r.kind == "comment"] == ["2025-03-12", "about 1 month ago"] * 2
    undated = _records(tmp_path, "other.log", re.sub(r" \(copied from the web UI on [\d-]+\)", "", PAGE))
    assert {r.time for r in undated if r.kind == "comment"} == {"4 weeks ago", "3 days ago", "2 days ago"}


def test_what_a_comment_pastes_stays_the_comments(tmp_path):
    """The page's own text is the ticket's; a plan pasted under "The plan of the price query" is shown, not done; the
    statement pasted under "Building it by hand:" is the fix, as in a card the offline engine builds from the
    prompt (the indent travels with the line)."""
    recs = _records(tmp_path, "orders.log", PAGE)
    assert not [r for r in recs if r.kind == "log" and dict(r.attrs).get("ticket") and ("quoted", "comment") not in r.attrs]
    assert any(r.kind == "ticket" and "Example requestId" in r.text for r in recs)
    plan = next(r for r in recs if "Seq Scan" in r.text)
    assert plan.kind == "comment" and plan.author == "Ben Ode" and plan.text.startswith("    Seq Scan")
    cards = [build_card(i) for i in inc.incidents({"orders.log": recs})]
    assert {"ANALYZE price_rule;", "CREATE INDEX CONCURRENTLY ix_price_rule_cart ON price_rule (cart_region, "
            "valid_from);"} <= {line.text for c in cards for line in c.actions}  # a code block's lines as written
    assert not any("Rows Removed" in line.text or "Seq Scan" in line.text for c in cards for line in c.lines)


def test_the_card_a_run_stores_reads_a_comments_code_block_as_the_direct_card_does(tmp_path):
    """``mem run``'s offline engine sees the incident's lines in the prompt: their indent goes with them, so the
    plan pasted under "The plan of the price query" is no fix there either."""
    actions = stored_lines(tmp_path, "orders.log", PAGE, "action")
    assert "ANALYZE price_rule;" in actions and any("REFRESH MATERIALIZED VIEW" in t for t in actions)
    assert not any("Rows Removed" in t or "Seq Scan" in t for t in actions)


def test_log_lines_a_comment_pastes_are_quoted_and_the_comment_goes_on(tmp_path):
    recs = _records(tmp_path, "orders.log", PAGE)
    quoted = [r for r in recs if ("quoted", "comment") in r.attrs]
    assert len(quoted) == 2 and all(r.kind == "log" and dict(r.attrs)["ticket"] == "#318" for r in quoted)
    after = next(r for r in recs if r.text.startswith("Relation 16702"))
    assert after.kind == "comment" and after.author == "Jo Kim" and dict(after.attrs)["ticket"] == "#318"
    last = next(r for r in recs if "REFRESH MATERIALIZED VIEW" in r.text)
    assert dict(last.attrs)["ticket"] == "#318" and last.time == "2025-05-28"  # still on its ticket's page


def test_a_statement_that_changes_a_table_or_a_view_is_a_command():
    for text in ("CREATE UNIQUE INDEX ux_cart_totals ON cart_totals_mv (cart_id);",
                 "CREATE INDEX CONCURRENTLY ix_price_rule_cart ON price_rule (cart_region);",
                 "REFRESH MATERIALIZED VIEW CONCURRENTLY cart_totals_mv;"):
        assert score(text, "code").action >= 1.5, text
    assert score("the unique index lets the view refresh without a lock", "code").action < 1.0


def test_a_trackers_row_of_fields_claims_nothing_and_a_sentence_space_is_no_row():
    assert score("Created: 08/Apr/25 8:12 AM    Resolved: 08/Apr/25 8:40 AM", "ticket").verification == 0.0
    assert score("Status:         Closed                 Start date:     03/03/2025", "ticket") == score("", "ticket")
    assert score("Cause: the disk was full.  Fix: rotated the logs, resolved.", "comment").action >= 1.5


def test_fine_again_is_the_failure_going_away_not_a_suspect_cleared():
    text = "Every night the export fails after 30 s with a lock timeout. After 02:03 everything is fine again."
    assert not score(text, "ticket").ruled_out
    assert score(text, "ticket").symptom >= 1.0
    assert score("The database is fine, it's not that.", "comment").ruled_out


DROP_IN = """=== wf-bill-02:/opt/wildfly/standalone/log/console.log -- 2025-03-03 (attached to OPS-4471) ===
01:14:22,130 ERROR [org.jboss.as.ejb3.invocation] (EJB default - 37) WFLYEJB0034: EJB Invocation failed: java.lang.OutOfMemoryError: unable to create native thread
01:14:23,002 ERROR [no.acme.billing.run.InvoiceRun] (EJB default - 37) batch 017 failed after 112 invoices

Ingrid Solberg - 2025-03-03 03:20
Found it: the unit's TasksMax is 4096 and the run peaks above it. Drop-in on wf-bill-02 at 03:05:

  # /etc/systemd/system/wildfly.service.d/10-tasks.conf
  [Service]
  TasksMax=infinity

  $ systemctl daemon-reload && systemctl restart wildfly

Run resumed from batch 021 at 03:12 and finished.
"""


def test_a_setting_a_comment_writes_out_and_then_puts_to_work_is_the_fix(tmp_path):
    """The drop-in's setting, then the command that loads it: the setting is what was changed. The log under a
    dated banner prints a clock alone; its lines are on the banner's day."""
    recs = _records(tmp_path, "billing.log", DROP_IN)
    assert [r.time for r in recs if r.kind == "log" and r.time] == ["2025-03-03 01:14:22,130", "2025-03-03 01:14:23,002"]
    card = build_card(inc.incidents({"billing.log": recs})[0])
    assert "TasksMax=infinity" in [line.text for line in card.actions]
    assert "[Service]" not in [line.text for line in card.lines]


TWO_PAGES = """=== app-01:/srv/jboss/log/server.log -- 2025-06-02 (attached to Bug #7310) ===
02:10:41,227 ERROR [com.acme.ledger.close.CloseJob] (EJB default - 12) period close PC-2025-05 failed: java.lang.OutOfMemoryError: unable to create native thread
02:10:41,230 ERROR [com.acme.ledger.close.CloseJob] (EJB default - 12) period close PC-2025-05 aborted after 9 of 40 ledgers
=== app-01:/srv/jboss/log/server.log -- 2025-06-11 (attached to Bug #7355) ===
09:41:02,118 INFO  [com.acme.ledger.statements.StatementResource] (default task-7) statements requested for 412 accounts
09:41:05,554 ERROR [org.hibernate.engine.jdbc.spi.SqlExceptionHelper] (default task-7) ORA-01000: maximum open cursors exceeded
09:41:05,561 ERROR [io.undertow.request] (default task-7) UT005023: Exception handling request to /ledger/api/statements: org.hibernate.exception.GenericJDBCException: could not extract ResultSet
09:42:17,020 ERROR [org.hibernate.engine.jdbc.spi.SqlExceptionHelper] (default task-9) ORA-01000: maximum open cursors exceeded

#######################################################################
Redmine -- https://redmine.acme.internal/issues/7310 (page text, copied 2025-07-01)
#######################################################################

Bug #7310
Period close PC-2025-05 aborts on app-01 with "unable to create native thread"
Added by Ana Ruiz about 1 month ago. Updated about 1 month ago.

#note-1  Updated by Ana Ruiz about 1 month ago
The close dies after ledger 9 every time we restart it.

#note-2  Updated by Ben Ode about 1 month ago
The jboss unit has TasksMax=2048 from the new baseline; raised it with a drop-in, TasksMax=infinity, and restarted. The close finished at 04:30.

#######################################################################
Redmine -- https://redmine.acme.internal/issues/7355 (page text, copied 2025-07-01)
#######################################################################

Bug #7355
Statements fail with ORA-01000 for larger account selections since 2025.6.1

#note-1  Updated by Ana Ruiz 20 days ago
Statements for a few accounts work, for a few hundred they fail.

#note-2  Updated by Ben Ode 19 days ago
Each cached statement keeps a cursor open on the database side, and every list size is a new statement.

Two changes for 2025.6.2, in persistence.xml:

  <property name="hibernate.query.in_clause_parameter_padding" value="true"/>

and in the datasource, so a connection never holds more statements than cursors:

  <prepared-statement-cache-size>100</prepared-statement-cache-size>

#note-3  Updated by Ben Ode 12 days ago
2025.6.2 deployed on 19/06. Since then no ORA-01000 and statements load for every selection.
"""


def test_a_page_under_another_failures_log_burst_starts_its_own_story(tmp_path):
    """Two pages copied under the log of two failures: the first page's header (a "######" rule around its
    address) waits for its comments, which have no day to place them by ("about 1 month ago") and tell another
    failure than the burst they follow; the second page's comments go with the burst of their day."""
    recs = _records(tmp_path, "ledger.log", TWO_PAGES)
    cards = [build_card(i) for i in inc.incidents({"ledger.log": recs})]
    threads = next(c for c in cards if "TasksMax=infinity" in " ".join(line.text for line in c.actions))
    assert not any("ORA-01000" in line.text for line in threads.lines)
    cursors = next(c for c in cards if any("ORA-01000" in line.text for line in c.symptoms))
    assert not any("TasksMax" in line.text for line in cursors.lines)


def test_what_a_release_holds_written_out_before_it_ships_is_the_fix(tmp_path):
    """"Two changes for 2025.6.2 …:" over a setting, "and in the datasource …:" over another, then "2025.6.2
    deployed": the settings are the change as written. A version that begins a sentence begins no log line (a date
    with dots has two-digit parts), and a tracker's "#note-3  Updated by …" says who wrote what is under it."""
    assert not is_log_line("2025.6.2 deployed on 19/06.") and not is_log_line("10.1.34 is out since last night")
    assert is_log_line("12.06.2025 09:41:05 ERROR statements failed") and is_log_line("2025.06.12 09:41 WARN slow")
    recs = _records(tmp_path, "ledger.log", TWO_PAGES)
    deployed = next(r for r in recs if "2025.6.2 deployed" in r.text)
    assert deployed.kind == "comment" and dict(deployed.attrs)["ticket"] == "#7355"
    found = next(i for i in inc.incidents({"ledger.log": recs}) if any("ORA-01000" in line.text for line in i.lines))
    assert all(line.is_frame for line in found.lines if line.text.startswith("#note-"))
    card = build_card(found)
    actions = [line.text for line in card.actions]
    assert '<property name="hibernate.query.in_clause_parameter_padding" value="true"/>' in actions
    assert "<prepared-statement-cache-size>100</prepared-statement-cache-size>" in actions


CONNECTOR = """04-Mar-2025 06:03:12.118 INFO [http-nio-8080-exec-4] org.apache.coyote.http11.Http11Processor.service Error parsing HTTP request header
 java.lang.IllegalArgumentException: Invalid character found in the request target [/api/v2/rates?ids=4|7 ]. The valid characters are defined in RFC 7230 and RFC 3986

-----------------------------------------------------------------------------------------------------
Internal note -- Jesper Holm  (Mar 4, 2025, 09:05 CET)

The old system property is gone since the move to Tomcat 10.1, so raw pipes in the query are refused.

-----------------------------------------------------------------------------------------------------
Internal note -- Jesper Holm  (Mar 4, 2025, 11:49 CET)

We'll ask them to encode, but we decided not to require it today. Change for both nodes, server.xml, http-nio-8080 Connector:

    <Connector port="8080" protocol="HTTP/1.1" relaxedQueryChars="|[]" />

Rolling restart from 12:15.
"""


def test_a_change_a_note_announces_over_its_configuration_is_the_fix(tmp_path):
    """"… decided not to require it today. Change for both nodes, server.xml, …:" over the Connector line: the
    sentence before decides against something else; the last one says the block is the change."""
    connector = '<Connector port="8080" protocol="HTTP/1.1" relaxedQueryChars="|[]" />'
    for text in (CONNECTOR, CONNECTOR.replace("Change for both nodes, server.xml, http-nio-8080 Connector:",
                                              "MR !88, server.xml of the gateway:")):  # or the merge request
        recs = _records(tmp_path, "gateway.log", text)
        card = build_card(inc.incidents({"gateway.log": recs})[0])
        assert connector in [line.text for line in card.actions]


PRINTED = """2025-02-03 06:10:12,004 ERROR [Camel (relay) thread #7 - sftp://relay@sftp.tarnby.example:22/in] SftpConsumer - Cannot connect to sftp://relay@sftp.tarnby.example:22
2025-02-03 06:15:12,009 ERROR [Camel (relay) thread #7 - sftp://relay@sftp.tarnby.example:22/in] SftpConsumer - Cannot connect to sftp://relay@sftp.tarnby.example:22

==========================================================================================
Freshservice | Ops Service Desk | printed 2025-02-06
==========================================================================================

INC-4410  No bookings from Tarnby since this morning
Status: Resolved | Priority: High | Urgency: High | Impact: Medium | Source: Email
Category: Applications > Partner integrations | Created: Mon, 3 Feb 2025 07:02 AM

Ola Berg reported via email -- Mon, 3 Feb 2025 07:02 AM
  No Tarnby bookings in the planner since early this morning. Can someone check?

Workflow Automator -- Mon, 3 Feb 2025 07:02 AM
  Ticket assigned to group Integration Platform. First response due by Mon, 3 Feb 2025 08:02 AM.

Ines Vik added a private note -- Mon, 3 Feb 2025 09:40 AM
  Tarnby moved to a new gateway on Sunday that refuses the SHA-1 signatures our old jsch client makes.

Ines Vik added a private note -- Mon, 3 Feb 2025 02:10 PM
  Swapped com.jcraft:jsch for com.github.mwiede:jsch 0.2.17 in the pom and deployed 1.8.2; the queued files came in.
"""


def test_a_help_desks_printed_ticket_dates_its_posts_and_its_automator_and_form_claim_nothing(tmp_path):
    """Freshservice prints each post under "Name added a private note -- Mon, 3 Feb 2025 09:40 AM": the post keeps
    its author and time. The ticket's head between bars ("Status: Closed | Priority: High") and its automator's
    "Ticket assigned to group …" are the tool's, never the card's cause or verification."""
    path = tmp_path / "relay.log"
    path.write_text(PRINTED)
    got = list(records(path))
    notes = [r for r in got if "Tarnby moved" in r.text]
    assert notes and notes[0].author == "Ines Vik" and notes[0].time == "Mon, 3 Feb 2025 09:40 AM"
    assert score("Status: Resolved | Priority: High | Urgency: High", "ticket") == score("", "ticket")
    assert about_post("Ticket assigned to group Integration Platform. First response due by Mon, 3 Feb 2025 08:02 AM.")
    assert not about_post("ticket assigned to me; the gateway refuses SHA-1 signatures since the move on Sunday")
    assert score("Category: Applications > Partner integrations | Created: Mon, 3 Feb 2025 07:02 AM",
                 "ticket") == score("", "ticket")
    [card] = [build_card(i) for i in inc.incidents({"relay.log": got})]
    told = [line.text for line in card.causes + card.verifications]
    assert not any(t.startswith(("Ticket assigned", "Status:", "Category:")) for t in told), told
    assert any("mwiede:jsch" in line.text for line in card.actions)


RT_PRINT = """Request Tracker -- ticket display, printed by ops 2025-05-23

#4101: Quote screen hangs, then 503 from the web tier

 History
 -------
 Tue May 13 08:47:02 2025  servicedesk@example.org - Ticket created
     Rating a quote spins for minutes and then shows 503 Service Unavailable.

 Tue May 13 10:11:02 2025  dkovac - Comments added
     The rating port has no read timeout, so each hanging call pins an execute thread.

 Thu May 15 07:05:33 2025  dkovac - Comments added
     Deployed 7.14.2: it sets com.sun.xml.ws.request.timeout=15000 on the rating port.

#4139: Policy search fails every morning with pool exhausted

 History
 -------
 Thu May 22 09:31:57 2025  servicedesk@example.org - Ticket created
     Policy search fails with "No resources currently available in pool PolicyDS" every morning.

 Thu May 22 09:40:12 2025  RT_System - Status changed from 'new' to 'open'

 Wed May 28 16:02:41 2025  ghale - Comments added
     Released 7.15.0: the import bean runs on its own work manager with max-threads-constraint 4.
"""


def test_each_ticket_of_a_printed_tracker_is_its_own_section_and_its_history_lines_claim_nothing(tmp_path):
    """Request Tracker prints each ticket under its "#4101: title" line, each with a "History" underlined: the
    title opens the ticket's section and "History" is a part of it, so two tickets are two sections, not one
    "History" of both. Its history lines ("… dkovac - Comments added", "… Status changed from 'new' to 'open'")
    date the entries and are no action."""
    path = tmp_path / "rt.txt"
    path.write_text(RT_PRINT)
    got = list(records(path))
    where = {r.text.split("\n")[-1].strip()[:12]: ep.key for ep in inc.episodes(got, "rt.txt") for r in ep.records}
    assert "#4101" in where["Deployed 7.1"] and "#4139" in where["Released 7.1"], where
    for line in ("Thu May 22 09:40:12 2025  RT_System - Status changed from 'new' to 'open'",
                 "Tue May 13 10:11:02 2025  dkovac - Comments added"):
        assert about_post(line) and score(line, "paragraph") == score("", "paragraph")
    cards = [build_card(i) for i in inc.incidents({"rt.txt": got})]
    fixes = {c.title: " ".join(line.text for line in c.actions) for c in cards}
    held = [c for c in cards if "request.timeout=15000" in " ".join(line.text for line in c.actions)]
    assert held and all("max-threads-constraint" not in line.text for c in held for line in c.actions), fixes
