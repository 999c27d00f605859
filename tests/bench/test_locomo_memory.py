"""bench.locomo_memory: the prior's dev sweep, the paired comparison with and without memory, and their rows."""

from __future__ import annotations

import pytest

from bench import locomo_memory
from bench.locomo_data import QAItem
from poimen.read import context as context_module


def item(sample_id: str, evidence: str, question: str = "q?") -> QAItem:
    return QAItem(sample_id, question, "a", ("D1:1",), 4, (evidence,))


class _Rendered:
    def __init__(self, text: str):
        self.text = text

    def render(self) -> str:
        return self.text


class _Engine:
    """A context engine whose context holds the evidence only under the given prior weights."""

    def __init__(self, holds: set[tuple[float, float]]):
        self.holds = holds
        self.weights: tuple[float, float] | None = None

    def set_memory_prior(self, weight: float, closeness: float) -> None:
        self.weights = (weight, closeness)

    def context(self, question: str, budget: int) -> _Rendered:
        return _Rendered("the evidence" if self.weights in self.holds else "chatter")


def test_the_sweep_picks_the_best_weights_ties_to_the_smaller_and_restores_the_constants():
    engine = _Engine({(0.2, 0.3), (0.5, 0.3)})
    result = locomo_memory.sweep_prior({"c": engine}, [item("c", "the evidence")], budgets=(500,),
                                       weights=(0.0, 0.5, 0.2), closeness=(0.0, 0.3))
    assert (result["weight"], result["closeness"]) == (0.2, 0.3) and result["objective"] == 1.0
    assert {(g["weight"], g["closeness"]) for g in result["grid"]} == {(0.0, 0.0), (0.5, 0.0), (0.5, 0.3),
                                                                       (0.2, 0.0), (0.2, 0.3)}
    assert engine.weights == (context_module.MEMORY_PRIOR, context_module.MEMORY_CLOSENESS)
    nothing = locomo_memory.sweep_prior({"c": _Engine(set())}, [item("c", "the evidence")], budgets=(500,),
                                        weights=(0.5, 0.0), closeness=(0.3,))
    assert nothing["weight"] == 0.0  # no prior beats a prior it ties


def test_paired_gain_is_the_mean_difference_with_a_bootstrap_interval():
    flat = locomo_memory.paired_gain([1.0, 0.5, 0.0], [0.5, 0.0, -0.5])
    assert flat["gain"] == pytest.approx(0.5) and flat["low"] == pytest.approx(0.5) == flat["high"]
    mixed = locomo_memory.paired_gain([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    assert mixed["gain"] == 0.0 and mixed["low"] < 0.0 < mixed["high"] and mixed["n"] == 4
    with pytest.raises(ValueError, match="unequal"):
        locomo_memory.paired_gain([1.0], [])


def _methods(**scores: list[float]) -> dict:
    return {m: {"per_item": {500: v}} for m, v in scores.items()}


def test_contribution_splits_the_paired_items_by_conversation():
    items = [item("dev", "x"), item("dev", "x"), item("test", "x")]
    methods = _methods(**{"poimen": [1.0, 0.0, 1.0], "poimen-no-memory": [0.0, 0.0, 1.0],
                          "poimen-untagged": [1.0, 1.0, 1.0], "poimen-no-memory-untagged": [1.0, 1.0, 0.0],
                          "hybrid-linear": [0.0, 0.0, 0.0]})
    out = locomo_memory.contribution(methods, items, {"dev": ["dev"], "held-out": ["test"]})
    assert out["all"]["n"] == 3 and out["dev"]["n"] == 2 and out["held-out"]["n"] == 1
    assert out["dev"]["gain"]["what the memory adds, as rendered"][500]["gain"] == pytest.approx(0.5)
    assert out["held-out"]["gain"]["what the memory adds, untagged"][500]["gain"] == pytest.approx(1.0)
    assert out["dev"]["coverage"]["hybrid-linear"][500] == 0.0
    assert out["all"]["gain"]["poimen over hybrid-linear, both untagged"][500]["gain"] == pytest.approx(1.0)
    rows = locomo_memory.section_rows({"memory": out})
    goal = [r for r in rows if r[3] is not None]
    assert [r[3] for r in goal] == [True, True] and goal[0][2].startswith("0.667 vs 0.333: +0.333")
    assert "hybrid-linear" in goal[1][0] and goal[1][2].startswith("1.000 vs 0.000: +1.000")
    assert any(r[0].startswith("coverage @500 on the held-out conversations (n = 1)") for r in rows)


def test_loop_vs_ranking_fills_the_ranking_to_each_memorys_tokens():
    items = [item("c", "the evidence", "first?"), item("c", "the evidence", "second?"), item("c", "x", "none?")]
    memories = {("c", "first?"): "the evidence", ("c", "second?"): "chatter only here"}
    budgets = []

    def ranking(it: QAItem, tokens: int) -> str:
        budgets.append(tokens)
        return "the evidence"

    out = locomo_memory.loop_vs_ranking(memories, items, ranking)
    assert out == {"memory": 0.5, "ranking": 1.0, "tokens": pytest.approx(sum(budgets) / 2), "n": 2}
    assert budgets and all(b > 0 for b in budgets)
