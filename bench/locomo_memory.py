"""What the memory adds on LoCoMo: the memory prior chosen on the dev conversations, and the context with
memories against the same builder over the raw units alone, in the same run.

Why (issue 27): the context builder ranks every raw turn, so a memory can only
add coverage by changing the ranking; its provenance marks cost budget. Three
measurements keep the comparison honest:

- ``sweep_prior``: the memory prior's weight and closeness floor
  (``poimen.read.context.MEMORY_PRIOR`` / ``MEMORY_CLOSENESS``) over a grid, on
  the dev conversations only (``locomo_poimen.DEV_CONVERSATIONS``), scored on
  the context as rendered (provenance marks included). The committed constants
  are the grid's best; the run reports the grid's pick beside them, so a drift
  shows.
- ``paired_gain``: poimen with memories against the same builder over the raw
  units alone (``raw_units_engine``), per question, with a paired bootstrap
  interval: both as rendered (the memory pays for its ``*`` marks and closing
  note) and both untagged (equal rendering: the ranking alone).
- ``loop_vs_ranking``: a memory built for the question itself (the
  per-question variant) against poimen's scorer over the raw turns filled to
  the same tokens: what the L1 loop's pick is worth next to a ranking of
  everything, when both know the question.

What was found (issue 27; weights on the dev conversations conv-26 and
conv-30, 231 questions, untagged @500 / @2000, the raw units alone 0.687 /
0.818): with the offline engine a memory holds verbatim turns that the same
fused scorer picked for a standing query, so it knows nothing the ranking of
every turn does not. Every use of it tried lost coverage or stayed within
noise:

- the old prior (0.1 x closeness, no floor) 0.681 / 0.822; weight 0.3: 0.676
  / 0.826, 1.0: 0.613 / 0.774; with a floor (the committed prior) within
  +-0.005 of none;
- co-membership, a line lifted by beta x its best sibling's score in a
  memory: beta 0.1: 0.672 / 0.803, 0.2: 0.604 / 0.785; weighted by the
  siblings' cosine (beta 0.2): 0.636 / 0.801; pulled towards the best
  sibling (beta 0.2): 0.673 / 0.826; neighbours in a memory's line order
  (beta 0.05): 0.683 / 0.833;
- the closest topic memory's rare words as query expansion (weight 0.1):
  0.684 / 0.834; the best memory line as relevance feedback: 0.700 / 0.826,
  where the best raw line does better with no memory at all (0.710 / 0.834).

The reasons, measured on the same data: a sibling of the top three lines
that ranks 60th or lower is evidence 3 times in 2,850 (0.1%, as any line at
that rank); at equal rank a line a memory kept is evidence no more often than
one no memory kept, except for the few questions close to a standing query;
and a memory built for the question itself holds less evidence than the
scorer's ranking at the same tokens (``loop_vs_ranking``), so no choice of
standing queries would change this. A memory can add coverage only when it
knows something the ranking cannot (a model's summary with its lineage to
the turns it read); that needs a model, not the offline engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bench import baselines
from bench.locomo_data import QAItem
from poimen.read import context as context_module
from poimen.text.tokens import count_tokens

PRIOR_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
PRIOR_CLOSENESS = (0.0, 0.2, 0.3, 0.4, 0.5)


def sweep_prior(engines: Mapping[str, object], items: Sequence[QAItem], budgets: Sequence[int] = baselines.BUDGETS,
                weights: Sequence[float] = PRIOR_WEIGHTS, closeness: Sequence[float] = PRIOR_CLOSENESS) -> dict:
    """Mean coverage of the rendered context per (weight, closeness floor) on ``items``, and the pick: the best
    mean over ``budgets``, ties to the smaller weight, then the lower floor (no prior beats a prior it ties).

    ``engines``: sample id -> ``ContextEngine``. Each question is scored once (the engine keeps the scores
    before the prior); the engines are left with the committed constants."""
    grid = {(w, t): {b: [] for b in budgets} for w in weights for t in (closeness if w else (0.0,))}
    try:
        for item in items:
            engine = engines[item.sample_id]
            for (w, t), per in grid.items():
                engine.set_memory_prior(w, t)
                for b in budgets:
                    per[b].append(baselines.coverage(item, engine.context(item.question, b).render()))
    finally:
        for engine in engines.values():
            engine.set_memory_prior(context_module.MEMORY_PRIOR, context_module.MEMORY_CLOSENESS)
    means = {key: {b: float(np.mean(v)) if v else 0.0 for b, v in per.items()} for key, per in grid.items()}
    objective = {key: float(np.mean(list(m.values()))) for key, m in means.items()}
    pick = max(objective, key=lambda k: (round(objective[k], 9), -k[0], -k[1]))
    return {"grid": [{"weight": w, "closeness": t, **{str(b): m[b] for b in budgets}, "mean": objective[(w, t)]}
                     for (w, t), m in means.items()],
            "weight": pick[0], "closeness": pick[1], "objective": objective[pick], "n": len(items),
            "committed": {"weight": context_module.MEMORY_PRIOR, "closeness": context_module.MEMORY_CLOSENESS,
                          "mean": objective.get((context_module.MEMORY_PRIOR, context_module.MEMORY_CLOSENESS))}}


def ceiling(items: Sequence[QAItem], memories: Mapping[str, str]) -> dict:
    """The memory ceiling: coverage of all of a conversation's memories joined (``memories``: sample id -> their
    text), overall and per category; the most a context built only from memory lines could hold."""
    per: dict[str, list[float]] = {}
    for item in items:
        per.setdefault(item.category_name, []).append(baselines.coverage(item, memories[item.sample_id]))
    flat = [s for v in per.values() for s in v]
    return {"overall": sum(flat) / len(flat) if flat else 0.0, **{c: sum(v) / len(v) for c, v in per.items()}}


def paired_gain(a: Sequence[float], b: Sequence[float], draws: int = 2000, seed: int = 0) -> dict:
    """Mean of ``a - b`` over paired items and its 95% bootstrap interval (items resampled with replacement)."""
    if len(a) != len(b):
        raise ValueError(f"paired scores of unequal length: {len(a)} and {len(b)}")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not len(diff):
        return {"gain": 0.0, "low": 0.0, "high": 0.0, "n": 0}
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(draws, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {"gain": float(diff.mean()), "low": float(low), "high": float(high), "n": int(len(diff))}


def loop_vs_ranking(memories: Mapping[tuple[str, str], str], items: Sequence[QAItem], scorer_context) -> dict:
    """Coverage of the memory an L1 run built for each question (``memories[(sample_id, question)]``) against
    ``scorer_context(item, tokens)`` filled to the memory's own tokens, on the items that have such a memory."""
    mine, theirs, tokens = [], [], []
    for item in items:
        memory = memories.get((item.sample_id, item.question))
        if memory is None:
            continue
        n = count_tokens(memory)
        mine.append(baselines.coverage(item, memory))
        theirs.append(baselines.coverage(item, scorer_context(item, n)) if n else 0.0)
        tokens.append(n)
    return {"memory": float(np.mean(mine)) if mine else 0.0, "ranking": float(np.mean(theirs)) if theirs else 0.0,
            "tokens": float(np.mean(tokens)) if tokens else 0.0, "n": len(mine)}


# (method, against, what their per-question difference says, whether it is issue 27's acceptance line): the
# memory's share as the agent gets it and at equal rendering, and poimen over the strongest cheap baseline at
# equal rendering (hybrid-linear prints plain lines, as poimen-untagged does).
PAIRS = (("poimen", "poimen-no-memory", "what the memory adds, as rendered", True),
         ("poimen-untagged", "poimen-no-memory-untagged", "what the memory adds, untagged", False),
         ("poimen-untagged", "hybrid-linear", "poimen over hybrid-linear, both untagged", True))
SPLIT_METHODS = ("poimen", "poimen-no-memory", "poimen-untagged", "poimen-no-memory-untagged", "hybrid-linear")


def contribution(methods: Mapping[str, dict], items: Sequence[QAItem], splits: Mapping[str, Sequence[str]]) -> dict:
    """Per split ("all" and each of ``splits``: name -> conversation ids), each method's coverage and each
    ``PAIRS`` difference with its paired interval, from ``evaluate``'s per-item scores over ``items``."""
    out = {}
    for split, ids in {"all": None, **splits}.items():
        keep = [n for n, item in enumerate(items) if ids is None or item.sample_id in ids]
        if not keep:
            continue
        pick = {m: {b: [methods[m]["per_item"][b][n] for n in keep] for b in methods[m]["per_item"]}
                for m in SPLIT_METHODS if m in methods}
        out[split] = {"n": len(keep),
                      "coverage": {m: {b: float(np.mean(v)) for b, v in per.items()} for m, per in pick.items()},
                      "gain": {how: {b: paired_gain(pick[a][b], pick[z][b]) for b in pick[a]}
                               for a, z, how, _ in PAIRS if a in pick and z in pick}}
    return out


def section_rows(result: dict) -> list[tuple]:
    """The report rows of what the memory adds: per budget the paired gains (the goal: more than without memory,
    as the agent gets it), then per split the coverage of poimen, the same builder without memory and the
    stemmed linear hybrid; the prior's dev sweep; the L1 loop's pick against a ranking at equal tokens."""
    rows, memory = [], result.get("memory", {})
    for a, z, how, goal in PAIRS:
        for b, g in memory.get("all", {}).get("gain", {}).get(how, {}).items():
            got, other = memory["all"]["coverage"][a][b], memory["all"]["coverage"][z][b]
            rows.append((f"coverage @{b}: {how} ({a} vs {z}; paired 95% interval)", "> 0" if goal else "",
                         f"{got:.3f} vs {other:.3f}: {g['gain']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}]",
                         got > other if goal else None))
    for split, part in memory.items():
        if split == "all":
            continue
        for b in next(iter(part["coverage"].values()), {}):
            cov = part["coverage"]
            rows.append((f"coverage @{b} on the {split} conversations (n = {part['n']}): poimen / no memory / "
                         "untagged / untagged no memory / hybrid-linear", "",
                         " / ".join(f"{cov[m][b]:.3f}" for m in SPLIT_METHODS if m in cov), None))
    prior = result.get("prior")
    if prior:
        c = prior["committed"]
        rows.append((f"memory prior (weight, closeness floor) chosen on {', '.join(prior['dev'])} "
                     f"(n = {prior['n']}): grid best / committed", "",
                     f"({prior['weight']}, {prior['closeness']}) {prior['objective']:.3f} / ({c['weight']}, "
                     f"{c['closeness']}) {c['mean']:.3f}" if c["mean"] is not None else "not on the grid", None))
        none = next((g["mean"] for g in prior["grid"] if g["weight"] == 0.0), None)
        if none is not None:
            rows.append(("memory prior on the dev conversations: no prior / ungated 0.1 (the old prior), "
                         "mean of the budgets", "", f"{none:.3f} / " + next(
                             (f"{g['mean']:.3f}" for g in prior["grid"] if (g["weight"], g["closeness"]) == (0.1, 0.0)),
                             "-"), None))
    loop = result.get("loop_vs_ranking")
    if loop and loop["n"]:
        rows.append((f"a memory built for the question itself vs poimen-scorer at the memory's tokens "
                     f"(n = {loop['n']}, {loop['tokens']:.0f} tokens)", "",
                     f"{loop['memory']:.3f} vs {loop['ranking']:.3f}", None))
    return rows
