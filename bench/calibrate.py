"""Choose the offline engine's relevance threshold on a dev split, never on the benchmark's items.

    python -m bench.calibrate            # prints a table and the best threshold; writes bench/out/calibrate.json
    python -m bench.calibrate --bridge   # the same for the name-bridge weight at 112K; bench/out/calibrate-bridge.json
    python -m bench.calibrate --margin   # the same for the fill margin at 112K; bench/out/calibrate-margin.json
    python -m bench.calibrate --displace # the displacement margin on loghub logs; bench/out/calibrate-displace.json

Dev split: HotpotQA questions ``DEV_START`` to ``DEV_START + DEV_ITEMS`` of the
sample (the sample holds 100; the benchmark reads the first 25–50, so the last 30 are dev), built as RULER-HQA documents at
28K tokens with another seed. For each threshold the gated loop runs over every
dev item with the offline engine, and the sweep reports gate precision, recall
and F1 against the chunks that hold supporting facts, and supporting-fact
retention. The rule (``choose``): the highest threshold whose retention
stays within ``RETENTION_GIVE`` of the lowest threshold's.

Measured (fused-2 scorer, 30 dev items at 28K): 0.55 → P 0.604 / retention
0.811; 0.60 → 0.651 / 0.803; 0.65 → 0.675 / 0.786; 0.70 → 0.742 / 0.736.
Chosen: 0.65. Embedding the unmasked text instead of ``embedding_text`` gave
the same figures at 0.60 and 0.65 (so masking costs no quality here).

The fill margin (``relevance.FILL_MARGIN``: the gate's bar rises with how full
the memory is) was swept the same way at 112K tokens, threshold 0.65: margin
0 → P 0.321 / retention 0.797; 0.15 → 0.349 / 0.781; 0.30 → 0.368 / 0.769.
The same rule (at most 0.03 retention given) chose 0.30. ``poimen.relevance.THRESHOLD``
holds the value this chose, and its docstring says so.

The name-bridge weight (``relevance.BRIDGE_WEIGHT``, ``--bridge``) was swept on the
same dev questions at 112K tokens (fused-6 scorer, threshold 0.65, margin 0.30):
0 → P 0.366 / retention 0.769; 0.3 → 0.363 / 0.786; 0.6 → 0.358 / 0.786;
1.0 → 0.358 / 0.786. The rule (``choose_bridge``): the best retention whose
precision stays within ``PRECISION_GIVE`` of no bridging, ties to the smaller
weight. It chose 0.3. The fill margin swept again with bridges (``--margin``, 112K):
0 → P 0.321 / retention 0.797; 0.15 → 0.346 / 0.797; 0.30 → 0.363 / 0.786; the
threshold's rule keeps 0.30.

The heading weight (``relevance.HEADING_WEIGHT``, ``--heading``: what a unit's section
title adds to its lexical share) was swept on the same dev questions at 112K tokens
(fused-7 scorer, with sentences no longer cut after "Dr." or "Ann B."): 0 → P 0.356 /
retention 0.803; 0.25 → 0.356 / 0.819; 0.5 → 0.356 / 0.819; 1.0 → 0.358 / 0.819.
The bridge's rule chose 0.25 (the smallest weight with the best retention).

The displacement margin (``relevance.DISPLACE_MARGIN``, ``--displace``: by how much a unit below the raised bar
must beat, on its own merit, each line it pushes out of a full memory) acts for questions after failures only.
Swept first on this HotpotQA dev split at 112K with a 256-token memory (so that it fills; fused-11 before the
narrowing): main P 0.407 / retention 0.669; own-merit eviction alone 0.398 / 0.653; with displacement at margin
0.30 the same, 0.15 → 0.385 / 0.636, 0 → 0.366 / 0.619. On prose both cost retention (the memory's expansion terms
bridge a second hop that its own merit would drop), so both act for failure questions only, and HotpotQA and
LoCoMo choose exactly as before. Then swept on the error query over the loghub samples with standard levels
(graded recall of WARN-or-worse events, ``severe_recall``): BGL 0.088, HDFS 1.000, OpenStack 1.000, Zookeeper
0.923 at every margin from 0 to none (no memory changes), so the sweep cannot choose (``choose_displace``) and
the margin stays at one severity grade at equal relevance, 0.15. The held-out Hadoop sample: 0.800 at margins 0
and 0.05, 0.733 from 0.10 up and with no displacement (its FATAL line gets in by its severity grade either way).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from bench import hotpot_data
from bench.loghub import DATA as LOGHUB
from poimen import relevance
from poimen.inputs.chunking import iter_chunks, source_id
from poimen.domain import Level, Query, Stream
from poimen.llm import offline
from poimen.llm.client import ScriptedClient
from poimen.write.loop import ListSink, LoopConfig, run_loop

DEV_START, DEV_ITEMS, DEV_SEED, DEV_TOKENS = 70, 30, 11, 28_000
GRID = (0.55, 0.60, 0.65, 0.70)
# Also tried on this split (fused-1 scorer): admitting a unit only within 60-75% of the best score seen raised
# precision but cost 0.06-0.13 retention at every threshold, so the gate has the threshold alone.
OUT = Path(__file__).resolve().parent / "out" / "calibrate.json"


def dev_items(start: int = DEV_START, n: int = DEV_ITEMS, tokens: int = DEV_TOKENS, seed: int = DEV_SEED):
    questions, corpus = hotpot_data._load()
    return [hotpot_data._assemble(q, corpus, tokens, seed) for q in questions[start:start + n]]


def _set_threshold(tau: float) -> None:
    relevance.THRESHOLD = tau


def _set_fill_margin(margin: float) -> None:
    relevance.FILL_MARGIN = margin


def _set_displace_margin(margin: float) -> None:
    relevance.DISPLACE_MARGIN = margin


def _set_bridge_weight(weight: float) -> None:
    offline.scorer().bridge_weight = weight


def _set_heading_weight(weight: float) -> None:
    offline.scorer().heading_weight = weight


def sweep(items, grid=GRID, chunk_tokens: int = 5000, budget: int = 1024, workdir: Path = OUT.parent,
          setting=_set_threshold, name: str = "threshold") -> list[dict]:
    """Gate precision, recall, F1 and retention of the gated loop over ``items`` for each value of one setting."""
    client = ScriptedClient([offline.respond], model_id="poimen/extractive-dev", repeat_last=True)
    workdir.mkdir(parents=True, exist_ok=True)
    prepared = []
    for item in items:
        path = workdir / f"calibrate-{item.id}.txt"
        path.write_text(item.document, encoding="utf-8")
        chunks = list(iter_chunks(path, chunk_tokens))
        prepared.append((item, Stream.of(source_id(path), chunks), hotpot_data.label_chunks(item, [c.text for c in chunks])))
        path.unlink()
    rows = []
    for tau in grid:
        setting(tau)
        tp = fp = fn = 0
        kept = []
        for item, stream, labels in prepared:
            gates: list[bool] = []
            outcome = asyncio.run(run_loop(Level.L1, Query(f"dev-{item.id}", item.question), stream, client, ListSink(),
                                           LoopConfig(memory_budget=budget), on_turn=lambda t, u, m: gates.append(u)))
            tp += sum(g and lab for g, lab in zip(gates, labels))
            fp += sum(g and not lab for g, lab in zip(gates, labels))
            fn += sum(lab and not g for g, lab in zip(gates, labels))
            kept.append(hotpot_data.retention(item, outcome.final_memory))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        rows.append({name: tau, "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
                     "retention": sum(kept) / len(kept)})
        print(f"  {name} {tau:.2f}: P {p:.3f} R {r:.3f} F1 {rows[-1]['f1']:.3f} retention {rows[-1]['retention']:.3f}",
              file=sys.stderr)
    return rows


RETENTION_GIVE = 0.03  # how much supporting-fact retention precision may cost, against the lowest threshold


def choose(rows: list[dict], key: str = "threshold") -> float:
    """The highest threshold whose retention stays within RETENTION_GIVE of the lowest threshold's: precision
    bought with at most a little retention (a memory that loses facts is worse than one that opens too often)."""
    base = min(rows, key=lambda r: r[key])["retention"]
    return max(r[key] for r in rows if r["retention"] >= base - RETENTION_GIVE)


BRIDGE_GRID = (0.0, 0.3, 0.6, 1.0)
BRIDGE_TOKENS = 112_000  # names bridge hops that lie far apart: swept where the stream is long
PRECISION_GIVE = 0.02  # how much gate precision a bridge weight may cost, against no bridging


def choose_bridge(rows: list[dict], key: str = "bridge_weight") -> float:
    """The weight with the best retention whose precision stays within PRECISION_GIVE of weight 0 (ties: the
    smaller weight)."""
    base = min(rows, key=lambda r: r[key])["precision"]
    ok = [r for r in rows if r["precision"] >= base - PRECISION_GIVE]
    return max(ok, key=lambda r: (r["retention"], -r[key]))[key]


MARGIN_GRID = (0.0, 0.15, 0.30)
DISPLACE_GRID = (0.0, 0.05, 0.10, 0.15, 0.30, float("inf"))  # inf: no unit below the bar ever displaces a line
# Displacement acts for questions after failures only, so it is swept on logs: the loghub samples whose lines carry
# the standard levels (WARN and worse), the Hadoop one (where the problem was seen) held out as the check.
DISPLACE_SYSTEMS, DISPLACE_HELD_OUT = ("BGL", "HDFS", "OpenStack", "Zookeeper"), ("Hadoop",)
LOG_QUERY = "Which errors occurred and what component failed?"
LEVEL_GRADE = {"WARN": 1.0, "WARNING": 1.0, "ERROR": 1.5, "SEVERE": 1.5, "FATAL": 2.0, "CRITICAL": 2.0,
               "warn": 1.0, "error": 1.5, "W": 1.0, "E": 1.5, "F": 2.0}  # Apache's and Android logcat's Level columns


def severe_recall(system: str, memory: str) -> float:
    """The share of the sample's WARN-or-worse events (loghub's own EventId and Level columns) that the memory
    holds a line of, each event weighing its level's grade: a memory that keeps the FATAL events scores more than
    one that keeps as many warnings."""
    import csv

    folder = LOGHUB / system
    rows = list(csv.DictReader((folder / f"{system}_2k.log_structured.csv").open(encoding="utf-8")))
    raw = (folder / f"{system}_2k.log").read_text(encoding="utf-8", errors="replace").splitlines()
    event = {line.strip(): row["EventId"] for line, row in zip(raw, rows)}
    grade = {row["EventId"]: LEVEL_GRADE[row["Level"]] for row in rows if row["Level"] in LEVEL_GRADE}
    held = {event.get(line.strip()) for line in memory.splitlines()} & grade.keys()
    return sum(grade[e] for e in held) / sum(grade.values())


def sweep_logs(systems, grid=DISPLACE_GRID, budget: int = 1024) -> list[dict]:
    """Graded severe-event recall of the error query's final memory over each loghub sample, per margin."""
    client = ScriptedClient([offline.respond], model_id="poimen/extractive-dev", repeat_last=True)
    streams = {s: Stream.of(s, list(iter_chunks(LOGHUB / s / f"{s}_2k.log"))) for s in systems}
    rows = []
    for margin in grid:
        _set_displace_margin(margin)
        row = {"displace_margin": margin}
        for system, stream in streams.items():
            outcome = asyncio.run(run_loop(Level.L1, Query(f"dev-{system}", LOG_QUERY), stream, client, ListSink(),
                                           LoopConfig(memory_budget=budget)))
            row[system] = severe_recall(system, outcome.final_memory)
            row[f"{system} opens"] = outcome.chunks_used
        row["recall"] = sum(row[s] for s in systems) / len(systems)
        row["opens"] = sum(row[f"{s} opens"] for s in systems)
        rows.append(row)
        print(f"  displace_margin {margin:.2f}: " + ", ".join(f"{s} {row[s]:.3f} ({row[s + ' opens']} opens)"
                                                          for s in systems), file=sys.stderr)
    return rows


def choose_displace(rows: list[dict]) -> float | None:
    """The largest margin whose severe recall is within RECALL_GIVE of the best (displacement rewrites a memory,
    so it should take only the places it clearly earns), or None when no margin changes a dev memory: then the
    sweep has nothing to say, and ``relevance.DISPLACE_MARGIN`` keeps its reasoned value."""
    if len({(r["recall"], r["opens"]) for r in rows}) == 1:
        return None
    best = max(r["recall"] for r in rows)
    return max(r["displace_margin"] for r in rows if r["recall"] >= best - RECALL_GIVE)


RECALL_GIVE = 0.02
HEADING_GRID = (0.0, 0.25, 0.5, 1.0)


MODES = ("--bridge", "--margin", "--heading", "--displace")


def main() -> None:
    unknown = [a for a in sys.argv[1:] if a not in MODES]
    if unknown:
        raise SystemExit(f"bench.calibrate: unknown argument {unknown[0]!r} (modes: none for the threshold, "
                         f"{', '.join(MODES)}; see the module docstring)")
    mode = next((a.lstrip("-") for a in sys.argv[1:]), "threshold")
    tokens = DEV_TOKENS if mode == "threshold" else BRIDGE_TOKENS
    items = dev_items(tokens=tokens) if mode != "displace" else []
    if mode == "displace":
        rows = sweep_logs(DISPLACE_SYSTEMS)
        chosen = choose_displace(rows)
        for row in rows:  # the held-out sample at each margin, beside (not in) the recall the rule reads
            held = sweep_logs(DISPLACE_HELD_OUT, (row["displace_margin"],))[0]
            row.update({s: held[s] for s in DISPLACE_HELD_OUT})
    elif mode == "bridge":
        rows = sweep(items, BRIDGE_GRID, setting=_set_bridge_weight, name="bridge_weight")
        chosen = choose_bridge(rows)
    elif mode == "heading":  # the bridge's rule: the best retention within PRECISION_GIVE of no headings
        rows = sweep(items, HEADING_GRID, setting=_set_heading_weight, name="heading_weight")
        chosen = choose_bridge(rows, "heading_weight")
    elif mode == "margin":  # the threshold's rule, over the margin: at most RETENTION_GIVE below no margin
        rows = sweep(items, MARGIN_GRID, setting=_set_fill_margin, name="fill_margin")
        chosen = choose(rows, "fill_margin")
    else:
        rows = sweep(items)
        chosen = choose(rows)
    out = OUT if mode == "threshold" else OUT.with_name(f"calibrate-{mode}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    dev = ({"systems": DISPLACE_SYSTEMS, "held_out": DISPLACE_HELD_OUT, "query": LOG_QUERY} if mode == "displace" else
           {"start": DEV_START, "items": DEV_ITEMS, "seed": DEV_SEED, "tokens": tokens})
    out.write_text(json.dumps({"dev": dev, "rows": rows, "chosen": chosen}, indent=2))
    if chosen is None:
        print(f"no {mode} margin chosen: no value changes a dev memory (see choose_displace)")
        return
    print(f"chosen {mode.replace('bridge', 'bridge weight').replace('margin', 'fill margin').replace('heading', 'heading weight')}: {chosen}")


if __name__ == "__main__":
    main()
