"""Fuzzing with hypothesis: the parser, the chunker and the log reader raise only their documented errors."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from poimen.inputs.chunking import iter_chunks
from poimen.domain import Chunk
from poimen.errors import ConfigError, LogCorrupt, ParseError, SourceError
from poimen.write.gate_parser import GateReply, parse_gate_reply
from poimen.log.events import EventDraft
from poimen.log.journal import read_journal
from poimen.log.store import EventLog
from poimen.log.verify import verify

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TAGS = ["<check>", "</check>", "<update>", "</update>", "<next>", "</next>", "<think>", "</think>",
        "yes", "no", "YES", " continue ", "end", "&lt;", "&amp;", "\n", " ", "\x00", "é", "🙃"]


@FAST
@given(st.one_of(st.text(max_size=300), st.lists(st.sampled_from(TAGS) | st.text(max_size=5), max_size=30).map("".join)))
def test_gate_parser_raises_only_parse_error(reply):
    try:
        result = parse_gate_reply(reply)
    except ParseError as exc:
        assert exc.reason
        return
    assert isinstance(result, GateReply)
    assert not result.update or result.memory, "an opened gate always carries a memory"


@FAST
@given(data=st.binary(max_size=2000), suffix=st.sampled_from([".md", ".txt", ".log", ".jsonl", ".bin", ""]),
       bound=st.integers(min_value=0, max_value=64))
def test_chunker_raises_only_source_error(tmp_path_factory, data, suffix, bound):
    path = tmp_path_factory.mktemp("fuzz") / f"source{suffix}"
    path.write_bytes(data)
    try:
        chunks = list(iter_chunks(path, max_tokens=bound))
    except SourceError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    except ConfigError as exc:
        assert bound < 16 and "max_tokens" in str(exc)
        return
    assert chunks and all(isinstance(c, Chunk) and 0 < c.tokens <= bound for c in chunks)


def _sealed_log(root: Path) -> tuple[EventLog, str]:
    log = EventLog(root)
    with log.writer():
        j = log.open_run("r" * 64)
        j.append([EventDraft(kind="run_start", level="L1", attrs={"query_id": "q"})])
        j.append([EventDraft(kind="gate", level="L1", turn=1, text="<check>no</check>", update=False)])
        j.seal([EventDraft(kind="run_end", level="L1", turn=1, attrs={"chunks_seen": 1})])
    return log, "r" * 64


def _journal_bytes() -> bytes:
    rows = [{"seq": 0, "run_id": "j" * 64, "level": "L1", "kind": "run_start", "turn": 0, "sha": "", "parents": [],
             "text": "", "update": None, "exit": None, "model_id": "m", "prompt_sha": "", "attrs": "{}",
             "prev_hash": "p", "hash": "h"}]
    return (json.dumps(rows) + "\n") * 3


@FAST
@given(edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), st.binary(min_size=0, max_size=8)),
                      min_size=1, max_size=6),
       cut=st.one_of(st.none(), st.integers(min_value=0, max_value=10_000)))
def test_journal_reader_raises_only_log_corrupt(tmp_path_factory, edits, cut):
    path = tmp_path_factory.mktemp("journal") / ("j" * 64 + ".jsonl")
    raw = bytearray(_journal_bytes().encode() if isinstance(_journal_bytes(), str) else _journal_bytes())
    for pos, patch in edits:
        pos %= len(raw) + 1
        raw[pos:pos + len(patch)] = patch
    if cut is not None:
        raw = raw[: cut % (len(raw) + 1)]
    path.write_bytes(bytes(raw))
    try:
        events, good, torn = read_journal(path)
    except LogCorrupt as exc:
        assert str(path) in str(exc)
        return
    assert good <= len(raw) and (torn is None or isinstance(torn, str))


@FAST
@given(target=st.sampled_from(["segment", "index", "journal"]),
       edits=st.lists(st.tuples(st.integers(min_value=0, max_value=1 << 20), st.binary(min_size=1, max_size=8)),
                      min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(min_value=0, max_value=1 << 20)))
@example(target="segment", edits=[(88608, b"\x00")], cut=None)  # a null prev_hash once made verify raise
@example(target="segment", edits=[(7706, b"\x00")], cut=None)  # and attrs that no longer parse as JSON
@example(target="segment", edits=[(7705, b"\x00")], cut=None)
def test_verify_reports_corruption_and_never_crashes(tmp_path_factory, target, edits, cut):
    root = tmp_path_factory.mktemp("log")
    log, run_id = _sealed_log(root)
    if target == "journal":
        path = log.journal_dir / ("j" * 64 + ".jsonl")
        path.write_text(_journal_bytes())
    else:
        path = log.segment_dir / f"{run_id}.parquet" if target == "segment" else log.index_path
    raw = bytearray(path.read_bytes())
    before = bytes(raw)
    for pos, patch in edits:
        pos %= len(raw)
        raw[pos:pos + len(patch)] = patch
    if cut is not None:
        raw = raw[: cut % (len(raw) + 1)]
    path.write_bytes(bytes(raw))
    report = verify(root)  # must not raise
    if bytes(raw) != before and target != "journal":
        assert not report.ok, f"{target} altered but verify passed"
    for p in report.problems:
        assert "\n" not in str(p)
