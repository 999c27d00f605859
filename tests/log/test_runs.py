"""Acceptance and the current run have one home: ``poimen/log/runs.py`` (issue 26, item 5).

``runs.acceptance`` (gates opened over chunks seen) and ``runs.current`` (the latest run per level, query and
stream; ``l1_memories`` and ``final_runs`` for the latest run with a memory) are what the index, the Dagster checks
and materialization metadata, `mem run`'s L2 planning and `mem ask` call. Nothing else counts gates over chunks or
keeps the last run per key.
"""

from __future__ import annotations

import ast
from pathlib import Path

from assets.checks import acceptance_within
from assets.metadata import run_stats
from poimen.log.runs import Acceptance, acceptance, current, l1_memories, loop_runs, read_runs
from poimen.log.store import EventLog
from poimen.write.loop import RunOutcome

REPO = Path(__file__).resolve().parents[2]
HOME = REPO / "poimen" / "log" / "runs.py"
CODE = [REPO / d for d in ("poimen", "assets", "resources", "pipelines", "bench")]
COUNTS = {"chunks_used", "chunks_seen", "gates_opened"}
KEYS = {"stream_id", "query_id"}  # what "the latest run per …" is keyed by (a bare `.key` names too much else)


def _counted(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in COUNTS for n in ast.walk(node))


def _rules_computed(path: Path) -> list[str]:
    """Where ``path`` adds up or divides run counts, or keeps the last item per run key (``{r.key: r for r in …}``,
    ``latest[r.stream_id] = r``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and _counted(node):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: arithmetic on run counts")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "sum" and _counted(node):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: a sum of run counts")
        elif isinstance(node, ast.DictComp) and isinstance(node.value, ast.Name) and isinstance(node.key, ast.Attribute) \
                and node.key.attr in KEYS and getattr(node.key.value, "id", None) == node.value.id:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: the last run per {node.key.attr}")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and any(
                isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Attribute) and t.slice.attr in KEYS
                and getattr(t.slice.value, "id", None) == node.value.id for t in node.targets):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: the last run per key")
    return found


def test_acceptance_and_the_current_run_are_computed_only_in_log_runs():
    assert _rules_computed(HOME), "the rules' home no longer computes them: this test looks for the wrong shapes"
    elsewhere = [hit for root in CODE for path in sorted(root.rglob("*.py")) if path != HOME
                 for hit in _rules_computed(path)]
    assert not elsewhere, "computed outside poimen/log/runs.py:\n" + "\n".join(elsewhere)


def test_the_checks_the_metadata_and_a_run_report_the_acceptance_runs_computes(tmp_path, template):
    runs = read_runs(EventLog(template))
    l1 = loop_runs(runs, "L1")
    expected = acceptance(l1)
    assert expected.seen > expected.opened > 0
    assert run_stats({r.run_id: list(r.events) for r in l1}).acceptance == expected
    latest = list(current(l1).values())
    verdict = acceptance_within(l1, limit=1.01, min_chunks=0)
    assert (verdict.metadata["gates_opened"], verdict.metadata["chunks"]) == acceptance(latest)
    assert verdict.metadata["acceptance_rate"] == round(acceptance(latest).rate, 4)
    assert [r.acceptance_rate for r in l1] == [acceptance([r]).rate for r in l1]
    assert all(r.acceptance_rate is None for r in runs if r.level in ("L0", "R"))


def test_acceptance_counts_gated_runs_only_and_takes_what_mem_run_returns():
    outcomes = [RunOutcome("a", "L1", "q", "s", "sealed", chunks_seen=4, chunks_used=1),
                RunOutcome("b", "L2", "q", "L1-memories:q", "sealed", chunks_seen=2, chunks_used=2),
                RunOutcome("c", "L0", "", "s", "sealed", chunks_seen=9, chunks_used=9)]
    assert acceptance(outcomes) == Acceptance(3, 6) and acceptance(outcomes).rate == 0.5
    assert acceptance([]).rate == 0.0


def test_an_l2_run_reads_the_latest_l1_run_with_a_memory_per_source(template):
    runs = read_runs(EventLog(template))
    memories = l1_memories(runs, "root-causes")
    assert set(memories) == {r.stream_id for r in loop_runs(runs, "L1") if r.final_memory}
    assert all(m.final_memory and m.level == "L1" for m in memories.values())
