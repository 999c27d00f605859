"""Progress lines for a batch of loop runs, for any line sink (the Dagster step log, a log file).

A build of many (query × stream) runs can take long with a real model; these
lines say, per run, when it started (or resumed), how far it got, and how it
ended (sealed, skipped because already sealed, interrupted), with its gate
counts, so a step that is working is never silent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

EVERY = 25  # a progress line every this many turns of one run, besides its start and its end


@dataclass
class _Live:
    turns: int = 0
    opened: int = 0


class RunProgress:
    """Hooks for ``run_loops(on_start=..., on_turn=...)`` and a ``finish(outcomes)`` summary, all through ``emit``."""

    def __init__(self, emit: Callable[[str], None], level: str, every: int = EVERY):
        self.emit, self.level, self.every = emit, level, max(1, every)
        self._live: dict[tuple[str, str], _Live] = {}

    def on_start(self, total_chunks: int) -> None:
        self.emit(f"{self.level}: {total_chunks} chunks to read over the planned runs (sealed runs are skipped)")

    def on_turn(self, plan, turn: int, opened: bool, memory_tokens: int) -> None:
        name = (plan.query.id, plan.stream.id)
        total = len(plan.stream.chunk_shas)
        live = self._live.get(name)
        if live is None:
            live = self._live[name] = _Live()
            how = "started" if turn == 1 else f"resumed at turn {turn}"
            self.emit(f"{self.level} {name[0]} × {name[1]}: {how} ({total} chunks)")
        live.turns += 1
        live.opened += opened
        if turn == total:
            self.emit(f"{self.level} {name[0]} × {name[1]}: read {total} chunks, gate opened on {live.opened} "
                      f"this session, memory {memory_tokens} tokens; sealing")
        elif turn % self.every == 0:
            self.emit(f"{self.level} {name[0]} × {name[1]}: turn {turn}/{total}, {live.opened} gates opened")

    def finish(self, outcomes: Sequence) -> None:
        """One line per run with its final status and gate counts, then the totals by status."""
        by_status: dict[str, int] = {}
        for o in outcomes:
            by_status[o.status] = by_status.get(o.status, 0) + 1
            gates = f"{o.chunks_used}/{o.chunks_seen} gates opened" if o.status in ("sealed", "skipped") else o.error
            self.emit(f"{self.level} {o.query_id} × {o.stream_id}: {o.status} (run {o.run_id[:12]}): {gates}")
        summary = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items())) or "no runs planned"
        self.emit(f"{self.level}: {summary}")
