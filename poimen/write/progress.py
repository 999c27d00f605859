"""Progress lines for a batch of loop runs, for any line sink (the Dagster step log, a log file).

A build of many (query × stream) runs can take long with a real model; these lines say how far the batch got,
which runs are in flight and at which turn, and, at the end, how every run ended (sealed, skipped because
already sealed, interrupted) with its gate counts, so a step that is working is never silent.

Lines go out at most once every ``interval`` seconds, not once per run: in a Dagster step each line is an event
written to the instance's event log (15-25 ms of SQLite on a loaded machine), and it is written from the event loop
that is waiting on the model. A line per run started and per run sealed was 6 s of a 19 s step over 128 short
runs, and the model calls of every other run in the step waited behind it (docs/scale.md). The per-run outcomes
of ``finish`` are one message, one line per run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

INTERVAL = 5.0  # seconds between two progress lines while runs go on


class RunProgress:
    """Hooks for ``run_loops(on_start=..., on_turn=...)`` and a ``finish(outcomes)`` summary, all through ``emit``."""

    def __init__(self, emit: Callable[[str], None], level: str, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic):
        self.emit, self.level, self.interval, self.clock = emit, level, interval, clock
        self.total = self.read = self.opened = 0
        self._turn: dict[tuple[str, str], tuple[int, int]] = {}  # (query, stream) -> (turn, chunks) of runs in flight
        self._done = 0
        self._last = clock()

    def on_start(self, total_chunks: int) -> None:
        self.total = total_chunks
        self.emit(f"{self.level}: {total_chunks} chunks to read over the planned runs (sealed runs are skipped)")

    def on_turn(self, plan, turn: int, opened: bool, memory_tokens: int) -> None:
        name, chunks = (plan.query.id, plan.stream.id), len(plan.stream.chunk_shas)
        self.read += 1
        self.opened += opened
        if turn == chunks:
            self._turn.pop(name, None)
            self._done += 1
        else:
            self._turn[name] = (turn, chunks)
        if self.clock() - self._last >= self.interval:
            self.emit(self.line())

    def line(self) -> str:
        """Where the batch is: chunks read, gates opened, runs read to the end, and up to three runs in flight."""
        self._last = self.clock()
        flight = ", ".join(f"{q} × {s} at {t}/{n}" for (q, s), (t, n) in sorted(self._turn.items())[:3])
        more = f" and {len(self._turn) - 3} more" if len(self._turn) > 3 else ""
        return (f"{self.level}: {self.read}/{self.total} chunks read this session, {self.opened} gates opened, "
                f"{self._done} runs read to the end" + (f"; in flight: {flight}{more}" if flight else ""))

    def finish(self, outcomes: Sequence) -> None:
        """The totals by status, then one line per run with its final status and gate counts, as one message."""
        by_status: dict[str, int] = {}
        lines = []
        for o in outcomes:
            by_status[o.status] = by_status.get(o.status, 0) + 1
            gates = f"{o.chunks_used}/{o.chunks_seen} gates opened" if o.status in ("sealed", "skipped") else o.error
            lines.append(f"{self.level} {o.query_id} × {o.stream_id}: {o.status} (run {o.run_id[:12]}): {gates}")
        summary = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items())) or "no runs planned"
        self.emit("\n".join([f"{self.level}: {summary}", *lines]))
