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
