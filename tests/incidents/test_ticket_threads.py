"""A ticket's comment stream under the log it is about, in the shapes help desks export, and one ticket that a
comment turns to a second problem (the shapes of bench/incidents16's Java logs)."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.inputs.chunking import records
from poimen.inputs.readers.speakers import speaker

# Two bursts two days apart, then one Jira ticket whose comments tell both, in mixed order; a note of a restart cuts
# the second burst in two, and a comment quotes what the second half printed.
TURNED = """\
2025-03-03 14:02:11.893 ERROR [http-nio-8080-exec-17] c.l.shipping.label.LabelController - label creation failed
com.larkmoor.shipping.label.CarrierUnavailableException: Tollgate label API unavailable
Caused by: org.apache.http.conn.ConnectionPoolTimeoutException: Timeout waiting for connection from pool
2025-03-03 14:02:31.772 ERROR [scheduling-1] c.l.shipping.label.LabelPdfPoller - PDF poll failed for TG-8841092140
2025-03-05 01:58:44.006 ERROR [tracking-events-0-C-1] o.s.k.l.KafkaMessageListenerContainer - Consumer exception
org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed since the consumer is not part of an active group
2025-03-05 02:21:44.140 WARN  [kafka-coordinator-heartbeat-thread | shipment-hub-tracking] o.a.k.c.c.ConsumerCoordinator - consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms
### --- pods restarted 02:58 (rollout restart deploy/shipment-hub) ---
2025-03-05 03:05:02.118 WARN  [kafka-coordinator-heartbeat-thread | shipment-hub-tracking] o.a.k.c.c.ConsumerCoordinator - consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms
2025-03-05 03:05:09.500 ERROR [tracking-events-0-C-1] o.s.k.l.KafkaMessageListenerContainer - Consumer exception
org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed since the consumer is not part of an active group

SHIP-4471  shipment-hub prod errors: Tollgate labels failing (Dunstable) / tracking updates stuck

Agnieszka Wrona added a comment - 03/Mar/25 2:21 PM
Dunstable rang: scanners get "carrier unavailable" printing Tollgate labels. Every failure is the same "Timeout waiting for connection from pool".

Rafael Quist added a comment - 03/Mar/25 5:03 PM
PoolStats for the Tollgate route: leased 20, available 0. None of the leased connections belongs to a busy thread.

Rafael Quist added a comment - 04/Mar/25 10:26 AM
Found it. TollgateLabelClient.fetchPdf() returns on a 404 before the try-with-resources, so the pooled connection leaks.

Dev Malhotra added a comment - 05/Mar/25 3:09 AM
Different problem: customer tracking pages are stale, consumer lag for group shipment-hub-tracking is 1.9M and rising.

Dev Malhotra added a comment - 05/Mar/25 3:20 AM
Did a rollout restart at 02:58. Changed nothing: consumers get kicked again with the same "consumer poll timeout has expired".

Wiktor Zielinski added a comment - 05/Mar/25 7:48 AM
Sanity check on the labels side: no pool timeouts since the second restart, but PoolStats shows leased 6 and creeping.

Rafael Quist added a comment - 05/Mar/25 9:44 AM
For TrackingEventListener: spring.kafka.consumer.max-poll-records=50 set in the ConfigMap and rolled at 09:40.

Dev Malhotra added a comment - 05/Mar/25 11:06 AM
TollgateLabelClient fix is out: shipment-hub 3.18.2 closes the response in fetchPdf() on every branch, PoolStats leased stays low.
"""
LABEL_FIX = "shipment-hub 3.18.2 closes the response in fetchPdf() on every branch"
TRACKING_FIX = "spring.kafka.consumer.max-poll-records=50 set in the ConfigMap"


def _cards(tmp_path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return [build_card(found) for found in incidents({name: list(records(f))})]


def _fixes(card) -> str:
    return " ".join(line.text for line in card.actions)


def test_a_comment_that_turns_the_ticket_to_another_problem_opens_a_story_and_each_fix_stays_with_its_own(tmp_path):
    cards = _cards(tmp_path, "shipment-hub.log", TURNED)
    label = [c for c in cards if LABEL_FIX in _fixes(c)]
    tracking = [c for c in cards if TRACKING_FIX in _fixes(c)]
    assert len(label) == 1 and len(tracking) == 1 and label != tracking
    assert "TG-8841092140" in " ".join(line.text for line in label[0].lines)
    # the burst the restart note cut in two is the tracking story's, the half the comment quotes and the half before
    told = " ".join(line.text for line in tracking[0].lines)
    assert "CommitFailedException" in told and "Tollgate" not in told


def test_without_the_turn_the_ticket_is_one_thread(tmp_path):
    cards = _cards(tmp_path, "shipment-hub.log", TURNED.replace("Different problem: c", "C"))
    assert any(LABEL_FIX in _fixes(c) and TRACKING_FIX in _fixes(c) for c in cards)


def test_help_desk_comment_headers():
    assert speaker("2025-02-12 19:05:40 GMT - Dmitri Olsen (Work notes)") == ("2025-02-12 19:05:40", "Dmitri Olsen")
    assert speaker("Tomás Ferreira  Feb 13, 2025, 09:41 GMT  (internal note)") == ("Feb 13, 2025, 09:41 GMT",
                                                                                  "Tomás Ferreira")
    assert speaker("Hanna Lindqvist  Feb 13, 2025, 09:14 GMT")[1] == "Hanna Lindqvist"
    assert speaker("drwxr-xr-x  2 root root 4096 Dec  5 17:30 .") is None
    assert speaker("2025-02-12 19:05:40 GMT ERROR - worker failed") is None
    # Zendesk's printed view: a kind before the name, a name with a particle; an e-mail's quote header is no one
    assert speaker("Internal note -- Jesper Holm  (Mar 4, 2025, 09:05 CET)") == ("Mar 4, 2025, 09:05 CET", "Jesper Holm")
    assert speaker("Arjen de Wit  (Mar 4, 2025, 08:12 CET)")[1] == "Arjen de Wit"
    assert speaker("On Tue, 4 Mar 2025 at 08:12, Arjen de Wit <arjen@example.com> wrote:") is None


def test_issue_tracker_pages_copied_as_text():
    """GitLab's issue page (a header, its system notes) and Redmine's journal, as a browser copies them
    (bench/incidents20)."""
    assert speaker("Priya Raman @praman · 2 weeks ago") == ("2 weeks ago", "Priya Raman")
    assert speaker("Ana Lima @alima · Mar 4, 2025 10:02am") == ("Mar 4, 2025 10:02am", "Ana Lima")
    assert speaker("Tomasz Wilk @twilk mentioned in merge request !1432 2 weeks ago") == ("2 weeks ago", "Tomasz Wilk")
    assert speaker("#note-4  Updated by Ingrid Solberg about 1 month ago") == ("about 1 month ago", "Ingrid Solberg")
    assert speaker("Updated by Ingrid Solberg on 2025-03-04 10:12")[1] == "Ingrid Solberg"
    assert speaker("I set it to 5 @ops · 2 weeks later") is None


TWO_DESKS = """\
2025-02-11T03:14:07,882 ERROR [docs-classifier-2] c.f.c.d.ClassificationWorker - classification failed for DOC-7718203
java.lang.OutOfMemoryError: Metaspace
INC0048213 | Priority 2 - High | State: Resolved
Short description: claims-docs: documents not classified, OutOfMemoryError: Metaspace
Activities (newest first)

2025-02-12 18:31:12 GMT - Dmitri Olsen (Work notes)
CHG0031877 implemented: claims-docs 4.2.1. RuleEvaluator now compiles each rule set once and caches the Script class.

2025-02-11 06:40:05 GMT - Dmitri Olsen (Work notes)
Raised -XX:MaxMetaspaceSize from 512m to 1g and restarted. That only delayed it: cl-app-04 hit the new limit at 06:31.

2025-02-11 04:02:17 GMT - Dmitri Olsen (Work notes)
Picked up from Zabbix. Log shows java.lang.OutOfMemoryError: Metaspace from the classifier workers.
2025-02-13T09:05:44,117 ERROR [http-nio-8443-exec-21] c.f.c.d.letters.LetterController - letter download failed
java.lang.UnsatisfiedLinkError: /opt/java/openjdk/lib/libfontmanager.so: libfreetype.so.6: cannot open shared object file
Zendesk ticket #51877  "Claim acknowledgement letters won't download"

Hanna Lindqvist  Feb 13, 2025, 09:14 GMT
Hello, none of my team can download the acknowledgement letter for new claims since this morning.

Sunita Achebe  Feb 13, 2025, 10:08 GMT  (internal note)
The letters endpoint dies inside JasperReports: libfreetype.so.6 cannot be loaded, the new base image has no fonts.

Sunita Achebe  Feb 13, 2025, 13:47 GMT  (internal note)
Fix deployed 13:40 as claims-docs 4.2.2: base image bumped to jre17-minimal:2025.02.1 with libfreetype6 installed.
"""


def test_a_servicenow_journal_and_a_zendesk_ticket_under_one_log_keep_their_own_fixes(tmp_path):
    f = tmp_path / "claims-docs.log"
    f.write_text(TWO_DESKS, encoding="utf-8")
    recs = list(records(f))
    filed = {dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"}
    assert filed == {"INC0048213", "#51877"}
    cards = [build_card(found) for found in incidents({f.name: recs})]
    metaspace = [c for c in cards if "RuleEvaluator now compiles" in _fixes(c)]
    letters = [c for c in cards if "base image bumped" in _fixes(c)]
    assert len(metaspace) == 1 and len(letters) == 1 and metaspace != letters
    assert "MaxMetaspaceSize" not in _fixes(metaspace[0])  # it only delayed it


# Two GitLab issues copied from the web UI under the log of both failures: comment times are relative ("2 weeks ago"),
# the second issue names the first, and each header is the issue's address (bench/incidents20).
GITLAB = """\
2025-02-11 09:02:43,571 [exec-9] ERROR c.k.rates.QuoteController - quote failed requestId=q-9e41d7c2 lane=DE-PL stage=tariff took=30004ms
2025-02-24 06:00:31,920 [exec-15] ERROR c.k.rates.QuoteController - quote failed requestId=q-b7e02c55 lane=DE-FR stage=surcharges took=30002ms

==== https://gitlab.example/pricing/rate-engine/-/issues/1187 (copied from the web UI) ====

Quotes for EU lanes hang 30 s and then fail after 4.12.0

Activity
Priya Raman @praman · 2 weeks ago
Author
Quotes for EU lanes fail after 30 s since the 4.12.0 deploy.

Tomasz Wilk @twilk · 2 weeks ago
Developer
Found it: V87 drops the zone index and the replacement only runs in staging.

Marek Novák @mnovak · 2 weeks ago
Maintainer
Built the index by hand: CREATE INDEX CONCURRENTLY ix_tariff_lane_active ON tariff_lane (origin_zone, dest_zone); misses back to 40 ms.

==== https://gitlab.example/pricing/rate-engine/-/issues/1203 (copied from the web UI) ====

Morning quote failures around 06:00, same error as #1187

Activity
Jonas Weber @jweber · 4 days ago
Author
Every morning at 06:00 the surcharge stage of quotes fails after 30 s.

Tomasz Wilk @twilk · 4 days ago
Developer
Not #1187 again: the refresh of lane_surcharge_mv at 06:00 takes an exclusive lock for three minutes.

Tomasz Wilk @twilk · 3 days ago
Developer
Switched the job to REFRESH MATERIALIZED VIEW CONCURRENTLY lane_surcharge_mv; this morning's run had zero failed quotes.
"""


def test_two_issues_copied_from_a_tracker_page_are_two_threads_though_their_comments_give_no_time(tmp_path):
    """Each issue's comments go to a thread of their own: placed by order alone (their times are relative), they
    were one episode, and the two fixes one card's. A request's id is no service (each "requestId=q-9e41d7c2" cut
    the log into a piece of its own), and a role badge under a header ("Maintainer") is no line of a card."""
    (tmp_path / "rates.log").write_text(GITLAB, encoding="utf-8")
    found = incidents({"rates.log": [r for r in records(tmp_path / "rates.log") if r.text.strip()]})
    said = ["\n".join(line.text for line in inc.lines) for inc in found]
    (index,) = [s for s in said if "CREATE INDEX CONCURRENTLY" in s]
    (refresh,) = [s for s in said if "REFRESH MATERIALIZED VIEW CONCURRENTLY" in s]
    assert index is not refresh and "Not #1187 again" in refresh and "Found it: V87" in index
    for inc in found:
        assert not any(line.text in ("Maintainer", "Developer", "Author") or " @" in line.text
                       for line in build_card(inc).lines)  # nor is a comment's header


def test_a_journals_headers_and_field_changes_are_no_lines_of_a_card():
    """Redmine's page text under a WildFly log: "#note-1  Updated by … about 1 month ago" and "Status changed from
    New to Assigned" stood as an incident's cause and fix (bench/incidents20, a dev suite)."""
    from pathlib import Path

    path = Path(__file__).parents[2] / "bench/incidents20/java/policy-billing-wildfly-2025-03_redmine-4471-4502.txt"
    cards = [build_card(found) for found in incidents({path.name: [r for r in records(path) if r.text.strip()]})]
    assert cards and not any("Updated by" in line.text or " changed from " in line.text
                             for card in cards for line in card.lines)
