"""The incident suites together: each suite run on its own log, the baselines' weights chosen once on
``bench/incidents`` split dev, and one report section that says which suite was what to the cues.

    python -m bench.incident_suite                     # every suite in ``SUITES``
    python -m bench.incident_suite --suite bench/incidents3 --json out.json

A suite with no dev split (``--suite``) gets the weights chosen on ``bench/incidents`` (which is run first for them).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.incident_suite import METHODS, SUITE, SUITES, run, tally

BASELINES = ("hybrid-lines", "hybrid-windows")
GOAL_POINTS = 0.15


def run_suites(suites: Sequence[tuple[Path, str]] = SUITES, embedder=None,
               progress: Callable[[str], None] = print) -> dict:
    """Each suite in turn (the first chooses the baselines' weights on its dev split; the others reuse them), with
    every item tagged by its suite and what the suite was ("dev" or "blind"), and the tallies pooled."""
    results, weights = [], None
    for folder, role in suites:
        if not (folder / "suite.yaml").is_file():
            raise FileNotFoundError(f"{folder}: no suite.yaml (an incident suite is a folder with one)")
        progress(f"  incident suite {folder.name} ({role})")
        result = run(folder, embedder=embedder, progress=progress, weights=weights)
        weights = weights or result["weights"]
        for item in result["items"]:
            item |= {"suite": folder.name, "role": role}
        results.append({"suite": folder.name, "role": role} | result)
    groups: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        for item in result["items"]:
            for group in (f"suite {item['suite']} ({item['role']})", f"format {item['format']}",
                          f"{item['role']} suites", "all"):
                groups[group].append(item)
    return {"suites": results, "weights": weights, "seconds": sum(r["seconds"] for r in results),
            "tally": {g: {m: tally(rows, m) for m in METHODS} for g, rows in groups.items()}}


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def _share(t: dict) -> float:
    return (t["ask"] + t["lookup"]) / max(1, t["asks"] + t["probes"])


def _rows(group: str, t: dict[str, dict]) -> list[tuple]:
    """A group's headline: poimen's figures, the best baseline at equal tokens, the memory's own contribution."""
    p = t["poimen"]
    best = max(BASELINES, key=lambda m: _share(t[m]))
    mem, bare = t["context+memory"], t["context-no-memory"]
    return [(f"{group}: poimen ask / lookup top-1 holds the fix, confusions", "",
             f"{_pct(p['ask'], p['asks'])} / {_pct(p['lookup'], p['probes'])}, {p['confusions']}", None),
            (f"{group}: poimen vs best hybrid ({best}) at equal output tokens", f">= +{100 * GOAL_POINTS:.0f} points",
             f"{100 * _share(p):.0f}% vs {100 * _share(t[best]):.0f}% ({100 * (_share(p) - _share(t[best])):+.0f})",
             _share(p) - _share(t[best]) >= GOAL_POINTS),
            (f"{group}: memory's contribution, mem context vs the same scorer over raw units", "",
             f"{100 * _share(mem):.0f}% vs {100 * _share(bare):.0f}% ({100 * (_share(mem) - _share(bare)):+.0f})", None)]


def section(result: dict, assets: Path | None = None) -> dict:
    """The report section: per suite and pooled headline rows, a table per suite and per format, the notes."""
    tally_ = result["tally"]
    suites = [g for g in tally_ if g.startswith("suite ")]
    formats = sorted(g for g in tally_ if g.startswith("format "))
    pooled = [g for g in ("dev suites", "blind suites") if g in tally_]
    head = [row for g in pooled for row in _rows(g, tally_[g])]
    rows = head + [row for g in suites for row in _rows(g, tally_[g])]
    tables = [{"title": g, "columns": ["method", "ask holds fix", "lookup top-1 holds fix", "confusions",
                                       "mean output tokens"],
               "rows": [[m, _pct(t["ask"], t["asks"]), _pct(t["lookup"], t["probes"]), t["confusions"],
                         f"{t['tokens']:.0f}"] for m, t in tally_[g].items()]}
              for g in [*suites, *formats, *pooled, "all"]]
    w = result["weights"]
    per_suite = "; ".join(
        f"{r['suite']} ({r['role']}): {r['incidents']} incidents, {len(r['formats'])} formats "
        f"({', '.join(r['formats'])}), {r['runs']} runs in {r['loop_s']:.0f} s, refused: "
        f"{', '.join(r['refused']) or 'none'}, failed reads: {len(r['errors'])}" for r in result["suites"])
    notes = (
        "Each suite is its own log read with its own standing query by the offline engine; an item is a `mem ask` "
        "question (its answer holds the fix) or a raw error pasted into `mem lookup -k 1` (the top hit holds the "
        f"fix). {per_suite}. What each suite was to the cues: a *dev* suite's misses were read while the roles, "
        "cards, readers and episodes were written; a *blind* suite's were never read (it was written by someone "
        "who read no code, and only its per-format counts were looked at): its rows are the figure to trust. Where "
        "each suite came from (who wrote it, after which data, what it holds) is the header of its `suite.yaml`, and "
        "its first figures, measured before any of its misses was read, are in the comment over `SUITES` in "
        "`bench/incident_suite.py`; in order: "
        + ", ".join(f"`bench/{r['suite']}` ({r['role']})" for r in result["suites"])
        + ". The cue lists and which data added which are in `poimen/incidents/cues.py`. "
        "Baselines (`bench.hybrid`: stemmed BM25 + MiniLM, linear fusion, neighbour mixing; over lines and over "
        "3-line windows) are filled to poimen's output tokens per item, their weights chosen on `bench/incidents` "
        "split dev alone: " + ", ".join(f"{n} alpha = {v['alpha']}, w = {v['w']}" for n, v in w.items())
        + ". `context+memory` is what `mem context` gives (the matched incident card first, then `ContextEngine`'s "
        "ranking); `context-no-memory` is the same engine over the raw units alone (no card, no memory lines, prior "
        "or signatures); both filled untagged to the same tokens. A confusion is an output holding another "
        "incident's fix (the `recurs_with` twin excepted).")
    return {"title": "Incident suites: does the fix come back?", "rows": rows, "headline": head, "tables": tables,
            "notes": notes}


def main(argv: list[str] | None = None) -> None:
    from poimen.settings import offline_defaults

    offline_defaults()
    parser = argparse.ArgumentParser(description="poimen's incident suites against the hybrid baselines")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache (default: poimen's)")
    parser.add_argument("--out", type=Path, help="also write REPORT.md here")
    parser.add_argument("--json", type=Path, help="write the per-item results here")
    parser.add_argument("--suite", type=Path, action="append",
                        help="a suite folder (repeatable; default: every suite in bench.incident_suite.SUITES)")
    args = parser.parse_args(argv)
    from poimen.embedding.embedders import SentenceTransformerEmbedder
    from poimen.llm import offline

    embedder = SentenceTransformerEmbedder(cache_dir=args.cache_dir) if args.cache_dir else None
    if embedder is not None:
        offline.configure(embedder)
    suites = list(SUITES)
    if args.suite:
        known = {folder.resolve(): role for folder, role in SUITES}
        chosen = [(f, known.get(f.resolve(), "given")) for f in args.suite]
        suites = ([] if any(f.resolve() == SUITE for f, _ in chosen) else [(SUITE, "dev")]) + chosen
    result = run_suites(suites, embedder=embedder)
    sec = section(result)
    for r in sec["rows"]:
        print(f"{r[0]}: {r[2]}")
    for t in sec["tables"]:
        print(f"\n{t['title']}")
        for row in t["rows"]:
            print("  " + " | ".join(str(x) for x in row))
    print(f"\n{result['seconds']:.1f}s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    if args.out:
        from bench import report

        print(report.write_report({"incidents": sec}, args.out, {"duration_s": result["seconds"],
                                                                 "repo": Path(__file__).resolve().parents[1]}))
