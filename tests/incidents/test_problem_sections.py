"""One write-up, several problems: a "SECOND PROBLEM" section, "Part B", "Problem 2" and the remediation steps
that name them are each their own incident, and a review's summary and shared timeline make no card of their own
(they retell incidents that have theirs), so no card holds two problems' fixes."""

from __future__ import annotations

from poimen import incidents as inc
from poimen.incidents.card import build_card
from poimen.inputs.chunking import records

GATEWAY = """POSTMORTEM: api-gateway crash loop after a flag edit
=====================================================

SUMMARY

Every api-gateway pod crashed at startup while loading feature flags.


ROOT CAUSE

The flag admin UI saved the rollout as a string, and the loader panics on a decode error:

  panic: flagsync: decode rule "checkout-v2": json: cannot unmarshal string into Go struct field


SECOND PROBLEM: RESTART STAMPEDE

After the revert 640 pods restarted at once and their initial fetch timed out:

  flagsync: initial fetch: context deadline exceeded (Client.Timeout exceeded while awaiting headers)


REMEDIATION

For the crash:
  1. Reverted the flag with flagctl revert checkout-v2 --to-version 411.

For the stampede:
  1. Set FLAGSYNC_INITIAL_TIMEOUT=15s (was 2s) and ran kubectl rollout restart in batches.
"""

REVIEW = """Incident report: orders-db primary down, followed by replica loss
Incident ID: INC-2291           Date: 2024-05-27

Summary
-------
orders-db-1 ran out of disk and Postgres stopped; during recovery the replica failed too.

Problem 1: primary out of disk
------------------------------
2024-05-27 11:02:41.118 UTC [2817] PANIC:  could not write to file "pg_wal/xlogtemp.2817": No space left on device
An inactive replication slot pinned every WAL segment, because the connector was turned off but its slot stayed.

Problem 2: replica could not catch up
-------------------------------------
2024-05-27 11:49:06.554 UTC [51220] FATAL:  requested WAL segment 000000010000A1B2 has already been removed
WAL files were deleted by hand with rm, so the replica could not replay them.

Timeline (UTC)
--------------
11:02  orders-db-1 PANIC, order-api errors start.
11:44  Dropped the slot with pg_drop_replication_slot('debezium_orders').
12:25  Rebuilt orders-db-2 with pg_basebackup -X stream from the primary.

Remediation
-----------
For problem 1 (disk full on the primary):
  R1. Done: dropped the slot with pg_drop_replication_slot and set max_slot_wal_keep_size = 100GB.

For problem 2 (replica lost the WAL it needed):
  R2. Done: re-seeded orders-db-2 with pg_basebackup -X stream from the primary.
"""


def _cards(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return [build_card(i) for i in inc.incidents({name: list(records(f))})]


def _holding(cards, fix):
    return [c for c in cards if any(fix in line.text for line in c.actions)]


def test_a_second_problem_and_the_steps_that_name_it_are_an_incident_of_their_own(tmp_path):
    cards = _cards(tmp_path, "gateway.txt", GATEWAY)
    assert len(cards) == 2
    crash, stampede = _holding(cards, "flagctl revert"), _holding(cards, "FLAGSYNC_INITIAL_TIMEOUT=15s")
    assert len(crash) == 1 and len(stampede) == 1 and crash != stampede
    assert any("context deadline exceeded" in line.text for line in stampede[0].symptoms)
    assert not any("FLAGSYNC" in line.text for line in crash[0].lines)
    assert stampede[0].title.startswith("api-gateway")  # the write-up's service, from the heading above it
    assert not any(line.text.strip() == "For the stampede:" for line in stampede[0].lines)  # a label, no claim


def test_numbered_problems_take_their_remediation_and_the_review_makes_no_card(tmp_path):
    cards = _cards(tmp_path, "review.txt", REVIEW)
    assert len(cards) == 2  # problem 1 and problem 2; the summary and shared timeline retell them
    one, two = _holding(cards, "max_slot_wal_keep_size"), _holding(cards, "re-seeded orders-db-2")
    assert len(one) == 1 and len(two) == 1 and one != two
    assert not _holding(one, "pg_basebackup") and not _holding(two, "pg_drop_replication_slot")


def test_a_single_write_up_is_still_one_incident(tmp_path):
    single = GATEWAY.split("SECOND PROBLEM")[0] + "REMEDIATION\n\n  1. Reverted with flagctl revert checkout-v2.\n"
    cards = _cards(tmp_path, "one.txt", single)
    assert len(cards) == 1 and _holding(cards, "flagctl revert")


SHARED = """POSTMORTEM: degraded writes and internal name resolution, 2024-07-30
====================================================================

Summary
-------

Two unrelated faults overlapped in the region. Block storage stopped accepting writes, and at the same time
every service lost internal name resolution.

Timeline
--------

  05:52  Cluster status becomes "HEALTH_ERR 1 full osd(s)" on ceph-ams2; writes to the rbd-db pool block.
  06:03  Resolvers log "validation failure <orders-db.int.quillfield.net. A IN>: signature expired".
  06:31  Full ratio raised on ceph-ams2. Writes resume.
  07:20  Zone re-signed on ns-hidden-1 with fresh signatures after fixing the key ownership.

Root causes
-----------

The first problem was an uneven fill of the ceph-ams2 OSDs: the balancer module was switched off during the
April expansion and never switched back on, so placement drifted and one OSD reached the full ratio.

Separately, the internal zone int.quillfield.net is signed nightly on ns-hidden-1 by a cron job. The bind9
package upgrade reset the ownership of the signing keys, so every signing run failed and the signatures expired.

Resolution
----------

  - Storage: the lasting fix was `ceph balancer mode upmap` and `ceph balancer on` on ceph-ams2, which moved
    placement groups off the fullest OSDs.
  - Name resolution: `chown -R bind:bind /etc/bind/keys` on ns-hidden-1, then a manual signing run for the
    int.quillfield.net zone.
"""


def test_two_problems_in_shared_parts_are_two_incidents_each_with_its_own_fix(tmp_path):
    """One Summary, Timeline, Root causes and Resolution for two faults: each cause paragraph with words of its
    own seeds a problem, and the timeline entries and resolution items go with the one whose words they use."""
    cards = _cards(tmp_path, "shared.txt", SHARED)
    storage, names = _holding(cards, "ceph balancer on"), _holding(cards, "chown -R bind:bind")
    assert len(storage) == 1 and len(names) == 1 and storage != names
    assert any("HEALTH_ERR" in line.text for line in storage[0].symptoms)
    assert names[0].symptoms and not any("HEALTH_ERR" in line.text for line in names[0].lines)
    assert not _holding(storage, "chown") and not _holding(names, "balancer on")


def test_a_trigger_and_a_contributing_factor_in_words_of_their_own_stay_one_incident(tmp_path):
    """Without the write-up saying it tells of several problems, two cause paragraphs are one problem's."""
    one = SHARED.replace("Two unrelated faults overlapped in the region.", "One outage hit the region.") \
        .replace("The first problem was", "The trigger was").replace("Separately, the", "It lasted because the")
    assert len(_cards(tmp_path, "one.txt", one)) == 1


def test_a_review_that_never_says_two_problems_but_tells_them_separately_is_two_incidents(tmp_path):
    """"Separately, …" in the Summary says there are two; a line that introduces a pasted error (":") takes it
    along to its problem, and one host that only one problem names says whose a remediation line is."""
    review = SHARED.replace("Two unrelated faults overlapped in the region. Block storage stopped accepting writes, "
                            "and at the same time\nevery service lost internal name resolution.",
                            "Block storage stopped accepting writes.\nSeparately, every service lost internal name "
                            "resolution.").replace(
        '  06:03  Resolvers log "validation failure <orders-db.int.quillfield.net. A IN>: signature expired".',
        "  06:03  Resolvers on ns-hidden-1 log, every few seconds:\n"
        "         2024-07-30T06:03:11Z named[812]: error (no valid RRSIG) resolving 'orders-db/A/IN': 10.0.0.53#53")
    assert "Two unrelated" not in review and "no valid RRSIG" in review
    cards = _cards(tmp_path, "review.txt", review)
    storage, names = _holding(cards, "ceph balancer on"), _holding(cards, "chown -R bind:bind")
    assert len(storage) == 1 and len(names) == 1 and storage != names
    assert any("no valid RRSIG" in line.text for line in names[0].symptoms)


COE = """Correction of Error (COE)  --  draft 3
COE id:      COE-2025-0412-LEDGER
Title:       Card payments declined for 47 minutes (ledger inserts failing)


What happened

Between 03:17 and 04:04 UTC every payment was declined. checkout-api logged the answer it got back on every hold:

    HTTP/1.1 503 Service Unavailable   {"error":"ledger_unavailable","retry_after_ms":2000}

and the same thing reproduced by hand on the primary:

    ERROR:  nextval: reached maximum value of sequence "ledger_entries_id_seq" (2147483647)


Metrics

  checkout-api decline rate        0.4%  ->  100%  (03:17-04:04)  ->  0.5%


How the service was restored

Run on ledger-pg-prod-1 at 04:02 by Tobias:

    ALTER SEQUENCE ledger_entries_id_seq AS bigint MAXVALUE 9223372036854775807;


Five whys

1. Why were payments declined?
  Because checkout-api could not place the ledger hold.
2. Why did a sequence feeding a bigint column have a 32-bit ceiling?
  Migration 0147 changed the column to bigint but left the owned sequence as integer.


Incident questions

  Did the rollback help?           No. 8.13.2 hit the same sequence on its first insert.


Related items

  - PagerDuty INC-88120; status page incident "Elevated payment declines", 12 April.
"""


def test_a_write_ups_parts_in_words_of_its_own_are_one_incident(tmp_path):
    """A correction-of-error document (bench/incidents30): "How the service was restored", "Five whys", "Incident
    questions", "Metrics" and "Related items" are parts of the one write-up, and a quoted line set off by its indent
    heads nothing; the fix the restoration part runs is the card's."""
    f = tmp_path / "COE-2025-0412-LEDGER.txt"
    f.write_text(COE, encoding="utf-8")
    recs = list(records(f))
    assert not any(h.startswith("HTTP/1.1 503") for r in recs for h in r.headings)
    (only,) = inc.incidents({f.name: recs})
    card = build_card(only)
    assert any(x.text.startswith("ALTER SEQUENCE ledger_entries_id_seq") for x in card.actions)
    assert not any(x.text in ("How the service was restored", "Five whys") for x in card.lines)


PROBLEM_RECORD = """PROBLEM PRB0041302
Number ............... PRB0041302
State ................ Resolved - Permanent Fix Applied
Related changes ...... CHG0032010 (permanent fix), emergency change ECHG0000977 (workaround)
Opened ............... 2025-06-23 08:05

Problem statement
  Claims Portal returns 503 on all three web nodes:
      HTTP Error 503. The service is unavailable.

Root cause
  The pool runs as a domain account whose password the PAM vault rotates; IIS kept the old password.

Workaround
  Unlock the account, then on each node:
      %windir%\\system32\\inetsrv\\appcmd.exe start apppool "ClaimsPortal"

Permanent Fix
  CHG0032010: the ClaimsPortal pool on CLMWEB01-03 now runs as the group Managed Service Account CALDER\\gmsa-claimsweb$.
"""


def test_a_problem_records_fields_are_rows_and_its_permanent_fix_the_fix(tmp_path):
    """An ITIL problem record printed as text (bench/incidents35): its fields with leader dots are "key: value" rows
    that claim nothing ("State: Resolved - Permanent Fix Applied" is no fix), and "Permanent Fix" is a fix part."""
    f = tmp_path / "PRB0041302.txt"
    f.write_text(PROBLEM_RECORD, encoding="utf-8")
    recs = list(records(f))
    assert [r.text for r in recs if r.kind == "table_row"][:2] == ["Number: PRB0041302",
                                                                   "State: Resolved - Permanent Fix Applied"]
    (only,) = inc.incidents({f.name: recs})
    card = build_card(only)
    assert any("now runs as the group Managed Service Account" in x.text for x in card.actions)
    assert not any(x.text.startswith(("State:", "Permanent Fix")) for x in card.lines)
