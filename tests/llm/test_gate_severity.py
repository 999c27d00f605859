"""A full memory must not shut out a later, worse failure.

Found reading the loghub Hadoop sample for "Which errors occurred and what
component failed?": the memory filled with the first WARN lines, and the bar
(raised as the memory fills) then shut out a JobHistory ERROR and a FATAL
``java.net.NoRouteToHostException`` that came later; the scorer gave the FATAL
line no more than a WARN line. Two fixes, tested here on a synthetic log (not
Hadoop's text): failure lines are graded by ``severity`` for a question after
failures, and a unit below the bar that cannot fit may take the place of lines
it outscores on its own merit by ``DISPLACE_MARGIN`` (``offline._displace``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from poimen.write.gate_parser import parse_gate_reply
from poimen.llm import offline
from poimen.llm.prompts import render
from poimen.relevance import DISPLACE_MARGIN, Scorer, asks_for_failures, severity
from poimen.text.tokens import count_tokens

ERRORS = "Which errors occurred in the ledger service?"
ACTIVITY = "What did the ledger service do?"
BUDGET = 200
WARNINGS = [
    "WARN [sync-1] ledger.SyncWorker: batch {n} retried after a slow reply from the ledger store",
    "WARN [sync-2] ledger.Cache: eviction queue above {n} entries, dropping stale balances",
    "WARN [http-7] ledger.Api: client sent a deprecated header on request {n}",
    "WARN [sync-3] ledger.SyncWorker: clock skew of {n} ms against the ledger store",
    "WARN [pool-4] ledger.Pool: connection pool at {n} percent of its limit",
    "WARN [sync-1] ledger.Journal: journal segment {n} took long to flush",
    "WARN [gc] ledger.Runtime: garbage collection paused the service for {n} ms",
    "WARN [http-2] ledger.Api: request {n} exceeded the soft response deadline",
]
FATAL = "FATAL [main] ledger.Server: shutting down after java.lang.OutOfMemoryError: Java heap space in SyncWorker"
INFO = "INFO [sync-1] ledger.SyncWorker: committed batch {n} to the ledger store"


def _stamp(i: int) -> str:
    return f"2024-05-02 10:{i // 60:02d}:{i % 60:02d},{(i * 37) % 1000:03d}"


def ledger_log() -> list[str]:
    """Four chunks of INFO lines interleaved with warnings, then a chunk of INFO lines ending in a FATAL error."""
    chunks, i = [], 0
    for c in range(4):
        lines = []
        for k in range(6):
            i += 2
            lines += [f"{_stamp(i - 1)} {INFO.format(n=i - 1)}", f"{_stamp(i)} {WARNINGS[(c * 2 + k) % 8].format(n=100 + i)}"]
        chunks.append("\n".join(lines))
    tail = [f"{_stamp(i + k)} {INFO.format(n=i + k)}" for k in range(1, 9)]
    return chunks + ["\n".join(tail + [f"{_stamp(i + 9)} {FATAL}"])]


def read(question: str, chunks: list[str]) -> list[str]:
    """The memory's lines after the offline gate has read ``chunks`` in order, as the loop would."""
    memory = ""
    for chunk in chunks:
        r = render("gate", question=question, memory=memory, chunk=chunk, budget=BUDGET)
        reply = parse_gate_reply(offline.respond(r.system, r.user), r)
        if reply.update:
            assert count_tokens(reply.memory) <= BUDGET
            memory = reply.memory
    return [line for line in memory.split("\n") if line.strip()]


def test_a_fatal_error_after_a_full_memory_of_warnings_is_kept():
    chunks = ledger_log()
    before = read(ERRORS, chunks[:-1])
    assert before and all(" WARN " in line for line in before)  # the memory is warnings only ...
    assert sum(count_tokens(line) + 1 for line in before) >= 0.8 * BUDGET  # ... and (nearly) full
    after = read(ERRORS, chunks)
    assert any(FATAL in line for line in after), "\n".join(after)
    assert sum(count_tokens(line) + 1 for line in after) <= BUDGET


@pytest.mark.parametrize("line, grade", [
    ("2024-05-02 10:00:01 WARN disk usage above 90%", 1.0),
    ("2024-05-02 10:00:01 WARN [rpc] DFSClient: ack status: ERROR for block 7", 1.0),  # the line's own level counts
    ("2024-05-02 10:00:01 ERROR worker lost its lease", 1.5),
    ("Caused by: java.io.IOException: disk full", 1.5),
    ("HTTP/1.1 502 Bad Gateway", 1.5),
    ("2024-05-02 10:00:01 FATAL ledger stopped", 2.0),
    ("Warning: container was OOMKilled by the kubelet", 2.0),
    ("    at org.acme.Ledger.sync(Ledger.java:42)", 1.0),
    ("2024-05-02 10:00:01 INFO committed batch 7", 0.0),
])
def test_severity_grades_standard_levels_and_shapes(line, grade):
    assert severity(line) == grade


def test_a_fatal_line_outranks_a_warning_that_matches_as_well():
    warn, fatal = "2024-05-02 WARN ledger sync stopped", "2024-05-02 FATAL ledger sync stopped"
    sc = offline.scorer()
    scores = sc.score(sc.query(ERRORS), [warn, fatal])
    flat = Scorer(sc.embedder, failure_bonus=0).score(sc.query(ERRORS), [warn, fatal])
    assert scores[1] > scores[0] and scores[1] - scores[0] > flat[1] - flat[0]


def test_a_question_not_after_failures_scores_and_selects_as_without_the_failure_bonus(monkeypatch):
    chunks = ledger_log()
    lines = [line for chunk in chunks for line in chunk.split("\n")]
    sc = offline.scorer()
    assert list(sc.score(sc.query(ACTIVITY), lines)) == list(Scorer(sc.embedder, failure_bonus=0).score(sc.query(ACTIVITY), lines))
    kept = read(ACTIVITY, chunks)
    errors = read(ERRORS, chunks)
    monkeypatch.setattr(sc, "failure_bonus", 0.0)
    monkeypatch.setattr("poimen.relevance.DISPLACE_MARGIN", float("inf"))
    assert read(ACTIVITY, chunks) == kept  # no severity, no failure bonus, no displacement: the same selection
    assert read(ERRORS, chunks) != errors  # while the failure question's does depend on it


@dataclass(frozen=True)
class TableQuery:
    expanded: bool
    failure: bool


class TableScorer:
    """A typed fake of the scorer: fused scores (a query expanded by a memory) and own merit (the question alone)
    from two tables, so a test can set the two apart as a memory's look-alikes do."""

    def __init__(self, fused: dict[str, float], merit: dict[str, float]):
        self.fused, self.merit = fused, merit

    def query(self, question: str, memory=()):
        return TableQuery(bool(memory), asks_for_failures(question))

    def score(self, q, texts, neighbours=False, headings=None):
        return [(self.fused if q.expanded else self.merit)[t] for t in texts]


ALIKE, ALIKE_TOO, DISTINCT, NEW = ("WARN " + " ".join([word] * 30) for word in ("ledger", "cache", "store", "pool"))


def test_a_full_memory_lets_go_of_the_weakest_line_on_its_own_merit():
    # Two look-alikes lift each other through the memory's expansion terms; on its own the distinct line is better.
    fused = {ALIKE: 1.2, ALIKE_TOO: 1.1, DISTINCT: 0.9, NEW: 1.0}
    merit = {ALIKE: 0.72, ALIKE_TOO: 0.71, DISTINCT: 0.85, NEW: 0.9}
    old = [ALIKE, ALIKE_TOO, DISTINCT]
    budget = 3 * (count_tokens(NEW) + 1)  # room for three of the four
    _, chosen = offline._select(TableScorer(fused, merit), ERRORS, old, old, [NEW], [""], 0.95, budget)
    assert sorted(u[3] for u in chosen) == sorted([ALIKE, DISTINCT, NEW])  # not the distinct line (lowest fused score)
    # A question not after failures keeps the fused order: on prose the expansion bridges a second hop ...
    _, chosen = offline._select(TableScorer(fused, merit), ACTIVITY, old, old, [NEW], [""], 0.95, budget)
    assert sorted(u[3] for u in chosen) == sorted([ALIKE, ALIKE_TOO, NEW])
    # ... and so does one in failure words over lines that are no failures ("which tornado killed the most people?").
    prose = {t: t.removeprefix("WARN ") for t in fused}
    table = TableScorer({prose[t]: v for t, v in fused.items()}, {prose[t]: v for t, v in merit.items()})
    lines = [prose[t] for t in old]
    _, chosen = offline._select(table, ERRORS, lines, lines, [prose[NEW]], [""], 0.95, budget)
    assert sorted(u[3] for u in chosen) == sorted(prose[t] for t in (ALIKE, ALIKE_TOO, NEW))


def test_a_unit_below_the_bar_displaces_only_lines_it_clearly_outscores():
    weak, fair, strong = ALIKE, DISTINCT, NEW
    merit = {weak: 0.70, fair: 0.80, strong: 0.70 + DISPLACE_MARGIN + 0.01}
    kept = [(1.1, 0, 0, weak), (1.2, 0, 1, fair)]  # gate scores: the memory's own terms lift them
    out = offline._displace(TableScorer({}, merit), ERRORS, kept, [(0.8, 1, 5, strong)], free=0)
    assert [u[3] for u in out] == [fair, strong]  # the weak line gave way, the fair one (within the margin) did not
    merit[strong] = 0.70 + DISPLACE_MARGIN - 0.01
    assert offline._displace(TableScorer({}, merit), ERRORS, kept, [(0.8, 1, 5, strong)], free=0) == kept
    roomy = count_tokens(strong) + 1  # a unit that fits in the room left is the bar's to judge, not displacement's
    assert offline._displace(TableScorer({}, merit | {strong: 2.0}), ERRORS, kept, [(0.8, 1, 5, strong)], free=roomy) == kept
