"""The speed section: loop overhead, concurrency, chunking, lookup latency, pipeline throughput, rebuild, peak RSS,
and the wall time of ``mem`` commands a person waits for (``cli_speed``).

Each figure comes from its own module (``loop_overhead``, ``lookup``,
``pipeline``, ``clients.litellm_overhead``); this one runs them and turns their
results into report rows with the goals the issues set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def run(out_dir: Path, progress: Callable[[str], None] = print, quick: bool = False) -> dict:
    """Every speed figure; ``quick`` (CI's run on every push, kept well under its time limit) reads a 40k-token
    source for the peak RSS, not a million, times lookups at 10k vectors only and each ``mem`` command once (the
    rows name the sizes and counts they read)."""
    from bench import cli_speed, clients, lookup, pipeline

    out = {"loadavg_before": os.getloadavg()}
    progress("  speed: loop overhead, concurrency, chunking")
    out["loop"] = isolated_loop_overhead(Path(out_dir) / "loop_overhead.json")
    progress("  speed: lookup latency next to numpy")
    out["lookup"] = lookup.run(Path(out_dir) / "lookup.json", **({"sizes": (10_000,)} if quick else {}))
    progress("  speed: pipeline build, rebuild, peak RSS")
    out["pipeline"] = pipeline.run(Path(out_dir) / "pipeline.json", rss_tokens=40_000 if quick else 1_000_000)
    out["litellm"] = clients.litellm_overhead()
    progress("  speed: mem --help, lookup and ask as processes, cold and warm")
    out["cli"] = cli_speed.run(Path(out_dir) / "cli_speed.json", repeats=1 if quick else 3)
    out["loadavg_after"] = os.getloadavg()
    return out


def isolated_loop_overhead(out_path: Path) -> dict:
    """``bench.loop_overhead`` in a fresh interpreter: its micro-benchmarks time pure-Python work (the loop's turns,
    the chunker) next to a Rust baseline (tiktoken), and inside the full report's process, after the QA sections had
    loaded their data and models, the chunker measured 0.38x of tiktoken where a fresh process measures 0.6-0.75x."""
    subprocess.run([sys.executable, "-m", "bench.loop_overhead", "--out", str(out_path.resolve())],
                   cwd=Path(__file__).resolve().parents[1], check=True, stdout=subprocess.DEVNULL)
    return json.loads(out_path.read_text(encoding="utf-8"))


def section(result: dict) -> dict:
    t, c, k = result["loop"]["per_turn"], result["loop"]["concurrency"], result["loop"]["chunking"]
    b, m, lit = result["pipeline"]["build"], result["pipeline"]["rss"], result["litellm"]
    rows = [
        ("loop overhead per turn (median, in memory)", "<= 2 ms", f"{t['median_ms']:.3f} ms", t["median_ms"] <= 2),
        ("loop overhead per turn (median, fsynced journal)", "", f"{t['journal_median_ms']:.3f} ms", None),
        (f"concurrency: {c['streams']} runs x {c['chunks_per_stream']} chunks at 100 ms/call, wall / ideal "
         f"(median of {len(c['samples_s'])})",
         "<= 1.2x", f"{c['ratio']:.2f}x ({c['wall_s']:.2f} s / {c['ideal_s']:.2f} s)", c["ratio"] <= 1.2),
        (f"chunking throughput next to plain tiktoken.encode (medians of {len(k['samples_s']['chunker'])} alternated)",
         ">= 0.5x",
         f"{k['ratio']:.2f}x ({k['chunker_tokens_per_s']:,.0f} tok/s)", k["ratio"] >= 0.5),
    ]
    for r in result["lookup"]["results"]:
        goal = "p95 <= 1.5x numpy" + (", <= 20 ms" if r["vectors"] >= 100_000 else "")
        rows.append((f"lookup top-{r['k']} at {r['vectors']:,} vectors: p95 MemoryIndex / numpy", goal,
                     f"{r['memory_index']['p95_ms']:.2f} / {r['numpy']['p95_ms']:.2f} ms = {r['p95_ratio']:.2f}x",
                     bool(r["goal_met"])))
    rows += [
        ("pipeline throughput, example corpus (cold build, model load included)", "",
         f"{b['tokens_per_s']:,.0f} tok/s ({b['tokens']:,} tokens in {b['build_s']:.1f} s)", None),
        ("rebuild from the log (warm embedding cache) / build", "<= 0.2",
         f"{b['rebuild_fraction']:.3f} ({b['rebuild_s']:.2f} s; matches manifest: {b['rebuild_matches']})",
         b["rebuild_fraction"] <= 0.2 and b["rebuild_matches"]),
        (f"peak RSS reading a {m['tokens'] / 1e6:.2f}M-token source ({m['bytes'] / 1e6:.1f} MB, chunk + L1 loop; "
         "empty embedding cache)", "<= 1 GB", f"{m['peak_rss_mb']:.0f} MB ({m['seconds']:.0f} s)",
         m["peak_rss_mb"] <= 1024),
        ("peak RSS reading it again, its vectors cached", "",
         f"{m['warm']['peak_rss_mb']:.0f} MB ({m['warm']['seconds']:.0f} s)", None),
        ("offline engine per gate call: through litellm / in process", "",
         f"{lit['litellm_ms']:.1f} / {lit['in_process_ms']:.1f} ms", None),
    ]
    if "cli" in result:
        from bench.cli_speed import rows as cli_rows

        rows += cli_rows(result["cli"])
    steps = [[name, round(v, 2)] for name, v in b["steps"].items()]
    lookup_rows = [[r["vectors"], r["memory_index"]["p50_ms"], r["memory_index"]["p95_ms"], r["numpy"]["p50_ms"],
                    r["numpy"]["p95_ms"], r["same_top10"]] for r in result["lookup"]["results"]]
    notes = (f"Load average (1 min) before / after this section: {result['loadavg_before'][0]:.2f} / "
             f"{result['loadavg_after'][0]:.2f} on {os.cpu_count()} cores; absolute times move with it, ratios less. "
             "Peak RSS is the child's VmHWM (ru_maxrss would include the parent's pages at fork), with its own "
             "POIMEN_HOME: the first read starts from an empty embedding cache and loads the embedding model, the "
             "second reads the vectors the first one cached.")
    return {"title": "Speed", "rows": rows, "notes": notes, "tables": [
        {"title": "build steps (seconds)", "columns": ["step", "seconds"], "rows": steps},
        {"title": "lookup latency (ms)", "columns": ["vectors", "index p50", "index p95", "numpy p50", "numpy p95",
                                                     "same top-10"], "rows": lookup_rows}]}
