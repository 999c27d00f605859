"""Seals that finish together commit their index lines together: one write for all of them, each run once, the chain
whole; a failed group commit fails every seal in it and indexes none of them."""

from __future__ import annotations

import threading
import time

import pytest

from poimen.domain import Level
from poimen.log.events import EventDraft
from poimen.log.store import EventLog
from poimen.log.verify import verify

N = 8


def _drafts(i: int) -> list[EventDraft]:
    return [EventDraft(kind="run_start", level=str(Level.L1), text=f"run {i}"),
            EventDraft(kind="run_end", level=str(Level.L1), text=f"run {i} done")]


def _seal_together(log: EventLog, hold_first_commit) -> dict[int, BaseException | None]:
    """Seal N runs from N threads while the first commit is held until the other N-1 lines are queued."""
    outcomes: dict[int, BaseException | None] = {}
    real = log.store.commit
    calls = []

    def commit(name, update):
        calls.append(name)
        if len(calls) == 1:
            deadline = time.monotonic() + 10
            while len(log._queued) < N - 1 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert len(log._queued) == N - 1, "the other seals never queued"
        return hold_first_commit(len(calls), real, name, update)

    log.store.commit = commit

    def seal(i: int):
        try:
            log.append_run(f"run-{i:02d}", _drafts(i))
            outcomes[i] = None
        except BaseException as exc:  # noqa: BLE001 (recorded for the test to check)
            outcomes[i] = exc

    with log.writer(shared=True):
        first = threading.Thread(target=seal, args=(0,))
        first.start()
        while not calls:
            time.sleep(0.001)
        rest = [threading.Thread(target=seal, args=(i,)) for i in range(1, N)]
        for t in rest:
            t.start()
        for t in [first, *rest]:
            t.join(30)
    log.store.commit = real
    outcomes["commits"] = len(calls)
    return outcomes


def test_seals_that_finish_together_commit_in_one_write_each_run_once(tmp_path):
    log = EventLog(tmp_path / "log")
    outcomes = _seal_together(log, lambda n, real, name, update: real(name, update))
    assert outcomes.pop("commits") == 2  # the first alone, the other seven queued behind it in one
    assert all(exc is None for exc in outcomes.values()), outcomes
    index = log.index()
    assert sorted(e["run_id"] for e in index) == [f"run-{i:02d}" for i in range(N)]
    assert [e["n"] for e in index] == list(range(N))
    assert all(b["prev"] == a["hash"] for a, b in zip(index, index[1:]))
    report = verify(log.root)
    assert report.ok and report.sealed_runs == N


def test_a_failed_group_commit_fails_every_seal_in_it_and_indexes_none(tmp_path):
    log = EventLog(tmp_path / "log")

    def second_fails(n, real, name, update):
        if n == 2:
            raise OSError("disk full")
        return real(name, update)

    outcomes = _seal_together(log, second_fails)
    assert outcomes.pop("commits") == 2
    assert outcomes[0] is None
    assert all(isinstance(outcomes[i], OSError) for i in range(1, N)), outcomes
    assert log.sealed_run_ids() == ["run-00"]
    # The failed seals left their segments unindexed and their journals kept: resumable, not a corrupt log.
    report = verify(log.root)
    assert report.ok and sum("killed while sealing" in n for n in report.notes) == N - 1
    with log.writer(shared=True):
        for i in range(1, N):
            log.append_run(f"run-{i:02d}", _drafts(i))  # the resume finishes each seal
    assert sorted(log.sealed_run_ids()) == [f"run-{i:02d}" for i in range(N)] and verify(log.root).ok


def test_is_sealed_sees_another_writers_commit_after_an_earlier_look(tmp_path):
    """``is_sealed`` parses only the index lines added since its last look: a run another writer (another EventLog
    on the same root) seals after a first look is found sealed at the next, and one never sealed stays unsealed."""
    mine, other = EventLog(tmp_path / "log"), EventLog(tmp_path / "log")
    with mine.writer(shared=True):
        mine.append_run("run-00", _drafts(0))
        assert mine.is_sealed("run-00") and not mine.is_sealed("run-01")
        with other.writer(shared=True):
            other.append_run("run-01", _drafts(1))
        assert mine.is_sealed("run-01") and mine.is_sealed("run-00") and not mine.is_sealed("run-02")
