"""Every event's attrs are exactly its payload class's fields: nothing a writer stores escapes the typed read side.

A log is built the real ways — the gated loop (L1) with its L0 stream runs, a
reference document (R), symptom projections, typed-store writes — and then each
event is read back through its payload class and written again: the attrs must
come out byte for byte, so a field the payload does not declare, or a default the
writer never stored, fails here.
"""

from __future__ import annotations

import asyncio

import pytest
from symptom_fixtures import client, make_loop_log
from typed_helpers import fill, memory

from poimen.domain import EventKind, canonical_json
from poimen.log.events import EventDraft, chain
from poimen.log import payloads as P
from poimen.log.runs import current, final_runs, loop_runs, read_runs
from poimen.log.store import EventLog
from poimen.write.symptoms import project_log


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    root = tmp_path_factory.mktemp("payloads")
    log = EventLog(make_loop_log(root))
    with log.writer():
        asyncio.run(project_log(log, client(), concurrency=2))
    typed = memory(root / "typed")
    fill(typed)
    return log, typed.log


def all_events(log):
    for one in log:
        yield from one.events()


def test_every_kind_round_trips_byte_for_byte(log):
    kinds = set()
    for e in all_events(log):
        kinds.add(e.kind)
        assert canonical_json(P.payload(e).to_attrs()) == e.attrs, (e.kind, e.attrs)
    assert {"run_start", "gate", "evidence", "memory", "run_end", "symptom", "store_write"} <= kinds


def test_a_stream_run_start_reads_as_its_kind_and_a_gated_one_as_loop(log):
    runs = loop_runs(read_runs(log[0]))
    kinds = {(r.level, r.kind) for r in runs}
    assert ("L0", "stream") in kinds and ("L1", "loop") in kinds and ("R", "reference") in kinds
    gated = [r for r in runs if r.kind == "loop"]
    assert all(r.start.memory_budget > 0 and r.start.prompt_template_sha for r in gated)
    assert all(r.acceptance_rate is None for r in runs if r.level in ("L0", "R"))


def test_reading_an_event_as_another_kind_is_refused(log):
    gate = next(e for e in all_events(log) if e.kind == EventKind.GATE)
    with pytest.raises(TypeError, match="is gate, not memory"):
        P.Memory.from_event(gate)


def test_a_later_run_of_the_same_stream_supersedes_the_earlier():
    def run(run_id, text):
        drafts = [EventDraft(kind=EventKind.RUN_START, level="L1",
                             attrs=P.RunStart(query_id="q", stream_id="s.log", config={"memory_budget": 9}).to_attrs()),
                  EventDraft(kind=EventKind.RUN_END, level="L1", sha="m", text=text,
                             attrs=P.RunEnd(2, 1, "m" if text else "").to_attrs())]
        return chain(drafts, run_id)

    from poimen.log.runs import Run
    runs = [Run(0, "a", tuple(run("a", "old"))), Run(1, "b", tuple(run("b", "new")))]
    assert current(runs)[("L1", "q", "s.log")].run_id == "b"
    assert [r.final_memory for r in final_runs(runs)] == ["new"]
    assert runs[1].acceptance_rate == 0.5
