"""The contract every benchmark section keeps: a key, a title, and a build that returns its report section.

A section is a plain dict that ``bench.report`` renders: ``title``, ``rows``
(metric, goal, measured, met — ``None`` when there is no goal), and optionally
``notes``, ``tables``, ``figures`` and ``headline`` (the rows the headline
table shows). ``python -m bench`` runs each ``Benchmark`` in turn; a build that
raises is reported as failed in its own section, never filled in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

Row = tuple[str, str, Any, "bool | None"]
Section = dict[str, Any]


class Benchmark(Protocol):
    key: str  # what --only names
    title: str  # the section's title when it could not be built

    def build(self, cfg: Any, assets: Path) -> Section: ...


@dataclass(frozen=True)
class FunctionBenchmark:
    """A ``Benchmark`` whose build is one function of the run's config and the report's asset folder."""

    key: str
    title: str
    fn: Callable[[Any, Path], Section]

    def build(self, cfg: Any, assets: Path) -> Section:
        return self.fn(cfg, assets)


def unavailable(title: str, why: str) -> Section:
    """The section of a benchmark that could not run: it says why, and has no rows."""
    return {"title": title, "notes": f"**Not available in this run:** {why}"}
