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
