"""Builders for test inputs: gate replies and chunk streams."""

from __future__ import annotations

from poimen.domain import Chunk, Query
from poimen.domain import Stream
from poimen.text.tokens import count_tokens


def reply(check: str, update: str = "", nxt: str = "continue") -> str:
    return f"<check>{check}</check>\n<update>{update}</update>\n<next>{nxt}</next>"


def chunks(n: int, source: str = "stream.log") -> list[Chunk]:
    texts = [f"Chunk {i}: line {i} of the incident channel, with detail #{i * 7}." for i in range(1, n + 1)]
    return [Chunk(text=t, source=source, position=i, tokens=count_tokens(t)) for i, t in enumerate(texts)]


def stream(n: int = 10) -> Stream:
    return Stream.of("stream.log", chunks(n))


QUERY = Query("q1", "What caused the outage?")


def loop_run_ids(log) -> list[str]:
    """Sealed runs of the gated loop, without the L0 stream and reference runs that record sources."""
    from poimen.write.reference import is_loop_run

    return [rid for rid in log.sealed_run_ids() if is_loop_run(log.run_events(rid))]
