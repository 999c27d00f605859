"""Pipeline throughput on the example corpus, rebuild time as a share of build time, and peak RSS on a 1M-token source.

    python -m bench.pipeline [--out bench/out/pipeline.json]

Build = what the Dagster ``full_build`` job does, through the same core calls,
in a fresh temporary ``POIMEN_HOME`` with an empty embedding cache: L1 runs of
``examples/queries.yaml`` over ``examples/sources``, L2 runs, reference docs
ingested, symptom projections, ``build_projections`` and the manifest. The
offline engine is called in process (``bench.clients``). Throughput is source
plus reference tokens over the build's wall time. Rebuild = ``poimen.index.rebuild``
from the log with a new embedder over the now-warm cache (goal: <= 0.2 of the build).

Peak RSS: a child process chunks and runs one L1 loop (offline engine, the
journal on disk) over a generated ~1M-token ``.txt`` source (the HotpotQA
corpus paragraphs, repeated), and reports its own peak RSS, ``VmHWM`` (goal <= 1 GB).
The child's ``POIMEN_HOME`` is a fresh folder, so its embedding cache starts empty:
the first read embeds every chunk (the embedding model loads), as a new source does;
a second child then reads the same source again over the cache the first one filled
(``warm``, a diagnostic). Before, the child used ``./.poimen`` of the checkout, so the
figure was the warm one on a checkout that had run the bench before and the cold one
on a fresh clone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

_RSS_CHILD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
from poimen.settings import offline_defaults; offline_defaults()
from poimen.llm.client import OfflineClient
from poimen.domain import Level, Query
from poimen.log.store import EventLog
from poimen.write.loop import LoopConfig
from poimen.write.runner import RunPlan, execute, source_stream
path, root = Path(sys.argv[1]), Path(sys.argv[2])
start = time.perf_counter()
stream = source_stream(path, 5000)
log = EventLog(root)
with log.writer():
    out = asyncio.run(execute(log, [RunPlan(Level.L1, Query("rss", "Which band was formed first, and where?"), stream)],
                              OfflineClient(), LoopConfig(), 1))
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent (here one holding a loaded model).
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"chunks": len(stream.chunk_shas), "status": out[0].status, "seconds": time.perf_counter() - start,
                  "peak_rss_mb": hwm / 1024, "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build_and_rebuild(workdir: Path) -> dict:
    from poimen.llm.client import OfflineClient
    from poimen.inputs.chunking import iter_chunks
    from poimen.write.core import RunRequest, run_loops
    from poimen.embedding.embedders import SentenceTransformerEmbedder
    from poimen.index import build_projections, write_manifest
    from poimen.index.rebuild import rebuild
    from poimen.log.store import EventLog
    from poimen.write.reference import ingest_reference
    from poimen.write.symptoms import project_log

    import asyncio

    root, cache, db = workdir / "home", workdir / "embeddings", workdir / "home" / "index.duckdb"
    sources = sorted(p for p in (EXAMPLES / "sources").iterdir() if p.is_file())
    references = sorted(p for p in (EXAMPLES / "reference").iterdir() if p.is_file())
    tokens = sum(c.tokens for p in sources for c in iter_chunks(p)) + sum(c.tokens for p in references for c in iter_chunks(p, 1000))
    client = OfflineClient()
    steps = {}
    start = time.perf_counter()
    for level in ("L1", "L2"):
        t = time.perf_counter()
        result = run_loops(RunRequest(root=root, sources=sources, queries=EXAMPLES / "queries.yaml", level=level,
                                      sources_root=EXAMPLES / "sources"), client=client)
        steps[f"{level.lower()}_runs_s"] = time.perf_counter() - t
        assert result.ok, result.source_errors or [o.error for o in result.outcomes]
    t = time.perf_counter()
    ingest_reference(root, references, root=EXAMPLES / "reference")
    log = EventLog(root)
    with log.writer():
        asyncio.run(project_log(log, client))
    steps["reference_and_symptoms_s"] = time.perf_counter() - t
    t = time.perf_counter()
    stats = build_projections(root, db, SentenceTransformerEmbedder(cache_dir=cache))  # cold cache: loads the model
    write_manifest(root, stats)
    steps["projections_s"] = time.perf_counter() - t
    build_s = time.perf_counter() - start
    t = time.perf_counter()
    report = rebuild(root, db, SentenceTransformerEmbedder(cache_dir=cache))  # warm cache: no model load
    rebuild_s = time.perf_counter() - t
    return {"sources": len(sources), "references": len(references), "tokens": tokens, "build_s": build_s,
            "steps": steps, "tokens_per_s": tokens / build_s, "rebuild_s": rebuild_s,
            "rebuild_fraction": rebuild_s / build_s, "rebuild_matches": report.ok, "rows": sum(stats.rows.values())}


def peak_rss(workdir: Path, target_tokens: int = 1_000_000) -> dict:
    from poimen.text.tokens import count_tokens

    corpus = json.loads(Path("/work/shared/bench/hotpot/hipporag_hotpotqa_train_corpus.json").read_text(encoding="utf-8"))
    block = "\n\n".join(f"{title}\n{''.join(s).strip()}" for title, s in corpus.items())
    repeats = -(-target_tokens // count_tokens(block))
    path = workdir / "one-million.txt"
    path.write_text("\n\n".join([block] * repeats), encoding="utf-8")
    tokens = count_tokens(block) * repeats
    home = workdir / "rss-home"  # its own embedding cache, empty at the first read
    env = {**__import__("os").environ, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(home)}

    def child(log: str) -> dict:
        proc = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(path), str(workdir / log)], cwd=REPO,
                              capture_output=True, text=True, check=True, env=env)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    cold = child("rss-log")
    warm = child("rss-log-again")
    return {"bytes": path.stat().st_size, "tokens": tokens, **cold, "warm": warm}


def run(out_path: Path = Path("bench/out/pipeline.json"), rss_tokens: int = 1_000_000) -> dict:
    with tempfile.TemporaryDirectory(prefix="poimen-pipeline-") as tmp:
        result = {"build": build_and_rebuild(Path(tmp)), "rss": peak_rss(Path(tmp), rss_tokens)}
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench/out/pipeline.json"))
    r = run(parser.parse_args().out)
    b, m = r["build"], r["rss"]
    print(f"build {b['tokens']:,} tokens in {b['build_s']:.1f}s = {b['tokens_per_s']:,.0f} tok/s; rebuild "
          f"{b['rebuild_s']:.1f}s = {b['rebuild_fraction']:.2f} of build (goal <= 0.2), matches: {b['rebuild_matches']}")
    print(f"peak RSS {m['peak_rss_mb']:.0f} MB reading {m['tokens']:,} tokens ({m['bytes'] / 1e6:.1f} MB) from an empty "
          f"embedding cache (goal <= 1024), {m['warm']['peak_rss_mb']:.0f} MB again with its vectors cached")


if __name__ == "__main__":
    main()
