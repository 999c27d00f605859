"""Builders for the typed-memory tests: a deterministic clock and a Memory under tmp_path."""

from __future__ import annotations

from pathlib import Path

from poimen.agent.archive import StaticArchive
from poimen.agent.facade import Memory

POLICY_CHUNKS = [
    "Returns after the 30-day window are still refundable, minus a 10% restocking fee.",
    "Items can be returned within 30 days of delivery for a full refund.",
    "Gift cards and final-sale items cannot be returned.",
]


class Clock:
    """Time stamps one second apart, so runs are reproducible to the byte."""

    def __init__(self) -> None:
        self.t = 0

    def __call__(self) -> str:
        self.t += 1
        return f"2026-01-01T09:{self.t // 60:02d}:{self.t % 60:02d}+00:00"


def memory(root: Path, namespace: str = "dana", **kwargs) -> Memory:
    kwargs.setdefault("archive", StaticArchive(POLICY_CHUNKS))
    kwargs.setdefault("clock", Clock())
    return Memory(namespace, root=root, **kwargs)


def fill(mem: Memory) -> None:
    """One write of every kind in every store."""
    mem.remember("Hi, I'm Dana and I prefer email contact.")
    mem.remember("The warehouse in Rotterdam handles all EU returns.")
    mem.remember("User opened a return request for ORD-3300 earlier today.")
    mem.remember("Yesterday the courier reported the parcel as delivered.")
    mem.remember("Returns after the 30-day window incur a 10% restocking fee; multiply the total by 0.9.")
    mem.remember("Quoting the refund for ORD-3300 now.")
    mem.append("task_state", "order ORD-3300, $200, returned after the window")
    mem.replace("user_profile", "prefers email", "prefers phone")
