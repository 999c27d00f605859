"""Asset checks: thin wrappers over pure validators of the log and the index (the validators are tested directly)."""


import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from assets.memories import l1_memories, l2_memories
from poimen.domain import EventKind, Level
from poimen.index.rebuild import RebuildReport, rebuild_into
from poimen.log.runs import INCIDENT_KIND, Run, acceptance, current, loop_runs, read_runs
from poimen.log.store import EventLog
from poimen.log.verify import VerifyReport, verify
from poimen.log.timeline import markdown_table
from poimen.text.tokens import count_tokens
from resources import WRITER_POOL, EmbedderResource, EventLogResource, writer_step

MEMORY_INDEX = dg.AssetKey("memory_index")

ACCEPTANCE_LIMIT = 0.30
MIN_CHUNKS = 4  # streams shorter than this at their chunk bound cannot show a gate choosing
LISTED = 50
WHY_HIGH = (
    "Why a high rate is a warning: a gate that opens on most chunks is not choosing. The memory is rewritten on "
    "nearly every chunk, so under its token budget it drifts toward a summary of everything read rather than what "
    "the question needs, and each opened turn costs a memory rewrite. On a noisy corpus (chat, tool output, logs) "
    "it usually means a standing query too broad to say no to, or a gate model that agrees with everything. "
    "A corpus whose every document is about the question (like the bundled example: short postmortems, an ADR and "
    "an incident channel, all about the incidents the queries ask about) is expected to open often; "
    "read the per-query rates and the gate timeline before rewording a query."
)


@dataclass
class Verdict:
    """A validator's answer in plain data; multi-line strings in ``metadata`` are markdown."""

    passed: bool
    description: str
    metadata: dict = field(default_factory=dict)


def log_integrity(report: VerifyReport) -> Verdict:
    """The log verifies as `mem verify` would: chain, parents, shas, every run sealed or resumable."""
    meta = {"sealed_runs": report.sealed_runs, "resumable_runs": report.resumable_runs, "events": report.events}
    if report.ok:
        return Verdict(True, f"{report.sealed_runs} sealed runs, {report.events} events verify", meta)
    return Verdict(False, f"first bad event: {report.first}", {**meta, "problems": len(report.problems)})


def acceptance_within(runs: Iterable[Run], limit: float = ACCEPTANCE_LIMIT, min_chunks: int = MIN_CHUNKS) -> Verdict:
    """Gates opened over chunks seen in the latest run of each (query, stream): a gate open on most chunks is not gating.

    Judged over the runs whose stream has at least ``min_chunks`` chunks at the bound it was cut at: a stream of one
    or two chunks (a short document at 5000-token chunks) says nothing about choosing, since a gate that opens on its
    only relevant chunk opens on all of it. So the rate follows each build's chunk bound, not one bound's corpus."""
    latest = list(current(runs).values())
    judged = [run for run in latest if run.start.chunks >= min_chunks]
    if latest and not judged:
        bounds = sorted({run.start.chunk_tokens for run in latest if run.start.chunk_tokens})
        return Verdict(True, f"not judged: no stream has {min_chunks} chunks or more"
                             + (f" at {', '.join(map(str, bounds))}-token chunks" if bounds else ""),
                       {"acceptance_rate": 0.0, "runs_judged": 0, "runs_too_short": len(latest), "why_a_limit": WHY_HIGH})
    by_query: dict[str, list[Run]] = {}
    for run in judged:
        by_query.setdefault(run.query_id, []).append(run)
    per_query = {q: acceptance(rs) for q, rs in by_query.items()}
    used, seen = total = acceptance(judged)
    rate = total.rate
    rows = [{"query": q, "opened": a.opened, "chunks": a.seen, "rate": f"{a.rate:.0%}" if a.seen else "-"}
            for q, a in sorted(per_query.items())]
    summary = f"acceptance {rate:.1%} ({used}/{seen} chunks) against a limit of {limit:.0%}"
    if rate >= limit:
        highest = max(per_query.items(), key=lambda kv: kv[1].rate)[0]
        summary += f" (highest: {highest}). " + WHY_HIGH
    return Verdict(rate < limit, summary,
                   {"acceptance_rate": round(rate, 4), "gates_opened": used, "chunks": seen,
                    "runs_judged": len(judged), "runs_too_short": len(latest) - len(judged),
                    "per_query": markdown_table(rows) + "\n", "why_a_limit": WHY_HIGH})


def memories_within_budget(runs: Iterable[Run]) -> Verdict:
    """Every stored memory of a gated run fits the budget its run was given (recounted from the text, not taken from
    attrs); an incident's card is given none."""
    over, checked, retained = [], 0, 0
    for run in (r for r in loop_runs(runs) if r.kind != INCIDENT_KIND):
        budget = run.start.memory_budget
        for e in run.events:
            retained += e.kind == EventKind.BUDGET_EXCEEDED
            if e.kind == EventKind.MEMORY:
                checked += 1
                tokens = count_tokens(e.text)
                if tokens > budget:
                    over.append({"run": e.run_id[:16], "turn": e.turn, "sha": e.sha[:16], "tokens": tokens, "budget": budget})
    meta = {"memories": checked, "over_budget": len(over), "candidates_retained_over_budget": retained}
    if over:
        meta["rows"] = markdown_table(over[:LISTED])
    return Verdict(not over, f"{len(over)} of {checked} memories over budget", meta)


def rebuild_matches(report: RebuildReport) -> Verdict:
    """A rebuild from the log reproduces every stored table hash and Parquet file; differing rows are named."""
    rows = [{"table": t, "key": k, "what": w} for t, k, w in report.differing_rows]
    meta = {"tables": len(report.tables), "differing_rows": len(rows),
            "report": f"```\n{report}\n```"}
    if rows:
        meta["rows"] = markdown_table(rows[:LISTED])
    first = "; ".join(f"{t} {k}: {w}" for t, k, w in report.differing_rows[:3])
    return Verdict(report.ok, "rebuild matches the manifest" if report.ok else f"rebuild differs: {first or report.notes}", meta)


def _result(verdict: Verdict, severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
            spec: dg.AssetCheckSpec | None = None) -> dg.AssetCheckResult:
    """``verdict`` as Dagster's check result; ``spec`` names it where one step yields several (a multi-asset check)."""
    metadata = {k: dg.MetadataValue.md(v) if isinstance(v, str) and "\n" in v else v for k, v in verdict.metadata.items()}
    return dg.AssetCheckResult(passed=verdict.passed, severity=severity, description=verdict.description, metadata=metadata,
                               check_name=spec.name if spec else None, asset_key=spec.asset_key if spec else None)


def _level_runs(log: EventLog, level: str) -> list[Run]:
    """The sealed gated runs of one level, in log order (so the last run of a (query, stream) is its latest); an
    incident's card is no gate's memory and has no memory budget (the `incidents` asset writes it)."""
    return [r for r in loop_runs(read_runs(log), level) if r.kind != INCIDENT_KIND]


# Each L1 check: its spec, its validator over the level's runs, the severity of a failure.
L1_CHECKS = [
    (dg.AssetCheckSpec("l1_acceptance_rate", asset=l1_memories, description="L1 gates open on under 30% of chunks (warn: "
                      "a gate open on most chunks is not choosing, and its memory drifts toward a summary of everything "
                      "read)."), acceptance_within, dg.AssetCheckSeverity.WARN),
    (dg.AssetCheckSpec("l1_memory_budget", asset=l1_memories, description="No L1 memory is over its run's token budget."),
     memories_within_budget, dg.AssetCheckSeverity.ERROR),
]


@dg.multi_asset_check(specs=[spec for spec, _, _ in L1_CHECKS], can_subset=True, name="l1_checks",
                      description="The L1 checks over one read of the level's runs: one step, not one per check (on "
                                  "the multiprocess executor each step is a process of its own).")
def l1_checks(context: dg.AssetCheckExecutionContext, event_log: EventLogResource) -> Iterable[dg.AssetCheckResult]:
    runs = _level_runs(event_log.log(), Level.L1.value)
    for spec, validator, severity in L1_CHECKS:
        if spec.key in context.selected_asset_check_keys:
            yield _result(validator(runs), severity, spec)


@dg.asset_check(asset=l2_memories, description="No L2 memory is over its run's token budget.")
def l2_memory_budget(event_log: EventLogResource) -> dg.AssetCheckResult:
    return _result(memories_within_budget(_level_runs(event_log.log(), Level.L2.value)))


@dg.asset_check(asset=MEMORY_INDEX, description="The event log verifies (the same check as `mem verify`).", pool=WRITER_POOL)
@writer_step
def log_integrity_check(event_log: EventLogResource) -> dg.AssetCheckResult:
    return _result(log_integrity(verify(event_log.log_root)))


@dg.asset_check(asset=MEMORY_INDEX, pool=WRITER_POOL,
                description="Every projection rebuilt from the log into a scratch database matches the manifest's hashes "
                            "(the index it checks is never touched).")
@writer_step
def rebuild_hashes_match(event_log: EventLogResource, embedder: EmbedderResource) -> dg.AssetCheckResult:
    with tempfile.TemporaryDirectory(prefix="poimen-check-") as scratch:
        return _result(rebuild_matches(rebuild_into(event_log.log_root, Path(scratch), embedder.get_embedder(),
                                                   manifest_root=event_log.path)))


CHECKS = [l1_checks, l2_memory_budget, log_integrity_check, rebuild_hashes_match]
