"""Tamper: a flipped byte, a deleted segment, reordered rows, a truncated journal — ``mem verify`` exits 1 and names it."""

from __future__ import annotations


import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from helpers import QUERY, chunks, reply

from poimen.cli.app import app
from poimen.domain import Chunk, Stream
from poimen.llm.client import ScriptedClient
from poimen.log.segments import SCHEMA
from poimen.log.store import EventLog
from poimen.write.loop import LoopConfig, run_id_for, run_loop

import asyncio


MEMORY_TEXT = "The outage was caused by a bad ingress chart: client_max_body_size fell back to 1m."


def _run(log: EventLog, stream_id: str, n: int, seal: bool = True):
    script = [reply("no"), reply("yes", MEMORY_TEXT), reply("no")] + [reply("no")] * (n - 3)
    if not seal:
        script = script[:n - 1] + [RuntimeError("killed")]
    client = ScriptedClient(script)
    own = [Chunk(text=f"{stream_id}: {c.text}", source=stream_id, position=c.position, tokens=c.tokens)
           for c in chunks(n, source=stream_id)]
    stream = Stream.of(stream_id, own)
    with log.writer():
        journal = log.open_run(run_id_for("L1", QUERY, stream, LoopConfig(), client.model_id))
        try:
            asyncio.run(run_loop("L1", QUERY, stream, client, journal))
        except RuntimeError:
            pass
    return journal.run_id


@pytest.fixture
def log(tmp_path) -> tuple[EventLog, list[str]]:
    log = EventLog(tmp_path / "log")
    ids = [_run(log, "a.log", 4), _run(log, "b.log", 4)]
    return log, ids


def mem_verify(log: EventLog) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", "--log", str(log.root)])
    return result.exit_code, " ".join(result.output.split())


def test_untouched_log_verifies(log):
    code, out = mem_verify(log[0])
    assert code == 0 and "2 sealed runs" in out


def test_flipped_byte_in_memory_text_names_the_event(log):
    elog, ids = log
    run_id = ids[1]
    memory = next(e for e in elog.run_events(run_id) if e.kind == "memory")
    path = elog.segment_dir / f"{run_id}.parquet"
    raw = bytearray(path.read_bytes())
    needle = MEMORY_TEXT.encode()
    at = raw.find(needle)
    assert at > 0
    raw[at + 10] ^= 0x01  # 'a' of "caused" → '`' region: one bit
    path.write_bytes(bytes(raw))
    code, out = mem_verify(elog)
    assert code == 1
    assert f"run {run_id[:16]} seq {memory.seq}" in out or f"run {run_id[:16]} seq" in out, out
    assert "altered" in out or "sha does not match" in out


def test_flipped_byte_in_every_text_occurrence_is_caught(log):
    """Whichever copy of the text is hit (evidence, memory, run_end, gate reply), verify fails naming its run."""
    elog, ids = log
    path = elog.segment_dir / f"{ids[0]}.parquet"
    original = path.read_bytes()
    needle = MEMORY_TEXT.encode()
    starts, at = [], original.find(needle)
    while at >= 0:
        starts.append(at)
        at = original.find(needle, at + 1)
    assert len(starts) >= 2
    for at in starts:
        raw = bytearray(original)
        raw[at + 4] ^= 0x20
        path.write_bytes(bytes(raw))
        code, out = mem_verify(elog)
        assert code == 1 and f"run {ids[0][:16]}" in out, out
    path.write_bytes(original)
    assert mem_verify(elog)[0] == 0


def test_deleted_segment_is_named(log):
    elog, ids = log
    (elog.segment_dir / f"{ids[0]}.parquet").unlink()
    code, out = mem_verify(elog)
    assert code == 1 and "sealed segment is missing" in out and ids[0][:16] in out


def test_reordered_rows_are_named(log):
    elog, ids = log
    path = elog.segment_dir / f"{ids[1]}.parquet"
    rows = pq.read_table(path, schema=SCHEMA).to_pylist()
    rows[2], rows[3] = rows[3], rows[2]
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path, compression="NONE", use_dictionary=False,
                   write_statistics=False)
    code, out = mem_verify(elog)
    assert code == 1 and f"run {ids[1][:16]} seq" in out
    assert "out of order" in out or "chain" in out


def test_truncated_journal_mid_file_is_named(tmp_path):
    elog = EventLog(tmp_path / "log")
    run_id = _run(elog, "c.log", 5, seal=False)
    path = elog.journal_dir / f"{run_id}.jsonl"
    lines = path.read_bytes().split(b"\n")
    assert len(lines) >= 4
    lines[1] = lines[1][: len(lines[1]) // 2]  # a line cut in the middle of the file: not an interrupted write
    path.write_bytes(b"\n".join(lines))
    code, out = mem_verify(elog)
    assert code == 1 and run_id[:16] in out and "line 2" in out


def test_journal_cut_at_its_end_is_resumable_not_corrupt(tmp_path):
    elog = EventLog(tmp_path / "log")
    run_id = _run(elog, "c.log", 5, seal=False)
    path = elog.journal_dir / f"{run_id}.jsonl"
    raw = path.read_bytes()
    path.write_bytes(raw[:-7])
    code, out = mem_verify(elog)
    assert code == 0 and "torn last line" in out and "resumable" in out


def test_journal_with_a_whole_turn_removed_is_named(tmp_path):
    elog = EventLog(tmp_path / "log")
    run_id = _run(elog, "c.log", 5, seal=False)
    path = elog.journal_dir / f"{run_id}.jsonl"
    lines = path.read_bytes().split(b"\n")
    del lines[2]
    path.write_bytes(b"\n".join(lines))
    code, out = mem_verify(elog)
    assert code == 1 and f"run {run_id[:16]} seq" in out and ("chain" in out or "out of order" in out)


def test_deleted_index_line_is_named(log):
    elog, ids = log
    lines = elog.index_path.read_bytes().splitlines(keepends=True)
    elog.index_path.write_bytes(lines[1])
    code, out = mem_verify(elog)
    assert code == 1 and ("segment chain" in out or "not in the index" in out)
