"""The loop closes the source reader it opened on every way out, not only when it reads to the end.

A source's reader is a generator holding the file open. Left to the garbage
collector it is closed only once nothing refers to it, and a reader caught in a
cycle (a kept traceback) is finalized after its file: "ResourceWarning:
unclosed file". The tests keep a reference to the reader, as such a cycle would.
"""

from __future__ import annotations

import asyncio
import dataclasses

import psutil
import pytest
from helpers import QUERY, reply

from poimen.domain import Level
from poimen.errors import ModelUnavailable
from poimen.llm.client import ScriptedClient
from poimen.write.loop import ListSink, LoopConfig, run_loop
from poimen.write.runner import source_stream


@pytest.fixture
def opened(tmp_path):
    """A four-paragraph source as a stream, and the readers the loop opened on it."""
    path = tmp_path / "incident.md"
    path.write_text("\n\n".join(f"Paragraph {i}: nginx returned 413 for uploads over 1 MB." for i in range(4)) + "\n")
    s = source_stream(path, max_tokens=16, root=tmp_path)
    readers = []

    def open_reader():
        readers.append(s.open())
        return readers[-1]

    return dataclasses.replace(s, open=open_reader), readers, path


def assert_closed(readers, path):
    (reader,) = readers
    assert reader.gi_frame is None, "the reader is still suspended"
    assert str(path) not in [f.path for f in psutil.Process().open_files()], "the source file is still open"


def _run(s, script, cfg=LoopConfig()):
    return asyncio.run(run_loop(Level.L1, QUERY, s, ScriptedClient(script), ListSink(), cfg))


def test_reader_is_closed_when_the_exit_gate_stops_the_loop(opened):
    s, readers, path = opened
    outcome = _run(s, [reply("no", nxt="end")], LoopConfig(use_exit_gate=True))
    assert outcome.chunks_seen == 1 < len(s.chunk_shas)
    assert_closed(readers, path)


def test_reader_is_closed_when_the_model_fails(opened):
    s, readers, path = opened
    with pytest.raises(ModelUnavailable):
        _run(s, [reply("no"), ModelUnavailable("fake status 500")])
    assert_closed(readers, path)


def test_reader_is_closed_when_read_to_the_end(opened):
    s, readers, path = opened
    outcome = _run(s, [reply("no")] * len(s.chunk_shas))
    assert outcome.chunks_seen == len(s.chunk_shas)
    assert_closed(readers, path)
