"""Scale: the build on Dagster's executors, the log on a local S3 server, and growth with the number of sources.

Every model call goes over HTTP to a loopback OpenAI-compatible server that waits 100 ms and then gives one
canned gate reply, so calls overlap the way a real model's do and cost no CPU here. The corpus is synthetic: short incident
notes, each a few chunks. Measured:

- the build (`chunks` + `l1_memories`) in process (one shard) against the multiprocess executor with 2
  workers (``pipelines.scaled``: 4 shards, two step processes at a time), as a ratio of wall times;
- the same L1 runs (``run_loops``, as `mem run` does them) with the log on moto's S3 server against a local folder;
- the in-process build at 1x, 4x and 16x the sources, with the wall time per source at each size.

Run alone: ``python -m bench.scale [--quick]``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

QUERIES = """queries:
  - id: root-causes
    text: "What caused each failure, and how was it fixed?"
  - id: remediation
    text: "Which commands or config changes fixed a problem?"
"""
NOTE = """# Incident {i}
At 02:{m:02d} UTC the checkout service on shard-{i} began returning 502 Bad Gateway for one request in five.
The on-call engineer saw the upstream pool exhausted: max_connections was 64 after the config push of build {i}.
Rolling back the config push restored the pool; the error rate fell to zero within four minutes.
Follow-up: the deploy check now fails when max_connections drops below 256 for a service of this size.
The postmortem also notes the dashboards lagged by ninety seconds, which delayed the page.
"""
DELAY = 0.1  # seconds per model call
# The scripted model's one reply: a gate that keeps one line. Canned, so the server spends no CPU on it and the
# measured time is the pipeline's, not a fake model's that shares this process's interpreter lock.
REPLY = "<check>yes</check>\n<update>Rolling back the config push restored the upstream pool.</update>\n<next>continue</next>"
CHUNK_TOKENS = 48
SELECTION = ("chunks", "l1_memories")
# Two step processes at a time, forked from a server that imported the code location (and litellm) once. The fork
# server keeps the environment it started with, so this process makes one multiprocess build and no more.
MULTIPROCESS = {"execution": {"config": {"max_concurrent": 2, "start_method": {
    "forkserver": {"preload_modules": ["pipelines.scaled", "litellm"]}}}}}


def corpus(folder: Path, sources: int) -> Path:
    """``sources`` notes and a queries file under ``folder``; returns the sources folder."""
    src = folder / "sources"
    src.mkdir(parents=True)
    for i in range(sources):
        (src / f"incident-{i:03d}.md").write_text(NOTE.format(i=i, m=i % 60), encoding="utf-8")
    (folder / "reference").mkdir()
    (folder / "queries.yaml").write_text(QUERIES, encoding="utf-8")
    return src


@contextmanager
def environment(folder: Path, api_base: str):
    """Point every resource of the code location (read when a step runs, in any process) at ``folder``."""
    saved = dict(os.environ)
    os.environ.update({
        "POIMEN_HOME": str(folder / "log"), "POIMEN_DB": str(folder / "index.duckdb"),
        "POIMEN_SOURCES": str(folder / "sources"), "POIMEN_REFERENCE": str(folder / "reference"),
        "POIMEN_QUERIES": str(folder / "queries.yaml"), "POIMEN_CHUNK_TOKENS": str(CHUNK_TOKENS),
        "POIMEN_MODEL": "openai/scale-bench", "POIMEN_API_BASE": api_base, "OPENAI_API_KEY": "sk-fake-loopback",
        "POIMEN_EMBEDDER": "hash", "DAGSTER_HOME": str(folder / "dagster"),
    })
    (folder / "dagster").mkdir(exist_ok=True)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def dagster_build(folder: Path, api_base: str, multiprocess: bool) -> float:
    """Wall seconds of one build of `chunks` and `l1_memories` (fresh log), in process or on 2 step processes."""
    import dagster as dg

    from pipelines.definitions import make_definitions
    from pipelines.scaled import full_build_job

    keys = [dg.AssetKey(k) for k in SELECTION]
    with environment(folder, api_base), dg.instance_for_test(temp_dir=str(folder / "dagster")) as instance:
        start = time.perf_counter()
        if multiprocess:
            result = dg.execute_job(dg.reconstructable(full_build_job), instance=instance, asset_selection=keys,
                                    run_config=MULTIPROCESS)
        else:
            result = make_definitions().resolve_job_def("full_build").execute_in_process(
                instance=instance, asset_selection=keys)
        seconds = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"the {'multiprocess' if multiprocess else 'in-process'} build failed")
    return seconds


def loop_build(root: str | Path, sources: Path, api_base: str) -> float:
    """Wall seconds of the L1 runs over ``sources`` (as `mem run --queries` does them) into the log at ``root``."""
    from poimen.core import RunRequest, run_loops

    files = sorted(sources.glob("*.md"))
    start = time.perf_counter()
    result = run_loops(RunRequest(root=root, sources=files, queries=sources.parent / "queries.yaml",
                                  model="openai/scale-bench", api_base=api_base, chunk_tokens=CHUNK_TOKENS,
                                  sources_root=sources))
    seconds = time.perf_counter() - start
    if not result.ok:
        raise RuntimeError(f"the L1 runs into {root} did not all seal")
    return seconds


def run(data_dir: Path | None = None, quick: bool = False, progress=print) -> dict:
    from poimen.testing.openai_server import FakeOpenAI, text
    from poimen.testing.s3_server import LocalS3

    base = 2 if quick else 16  # 1x; the executor and storage comparisons use 4x (8 or 64 sources)
    out: dict = {"delay_s": DELAY, "chunk_tokens": CHUNK_TOKENS, "queries": 2, "quick": quick}
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-loopback")
    with FakeOpenAI(delay=DELAY, default=text(REPLY)) as server, tempfile.TemporaryDirectory(prefix="poimen-scale-") as tmp:
        tmp = Path(tmp)
        n = base * 4
        corpus(tmp / "warm", 1)  # imports (litellm, dagster, the code location) paid before any clock starts
        dagster_build(tmp / "warm", server.api_base, multiprocess=False)
        progress(f"scale: executors over {n} sources x 2 queries")
        corpus(tmp / "in-process", n)
        corpus(tmp / "multiprocess", n)
        calls = server.calls
        in_process = dagster_build(tmp / "in-process", server.api_base, multiprocess=False)
        out["calls"] = server.calls - calls
        multiprocess = dagster_build(tmp / "multiprocess", server.api_base, multiprocess=True)
        out["executors"] = {"sources": n, "in_process_s": in_process, "multiprocess_s": multiprocess,
                            "ratio": in_process / multiprocess}

        progress(f"scale: the log on S3 against local files, {n} sources")
        src = corpus(tmp / "storage", n)
        local = loop_build(tmp / "storage" / "log", src, server.api_base)
        with LocalS3() as s3:
            saved = dict(os.environ)
            os.environ.update(s3.env)
            try:
                remote = loop_build(s3.uri("scale"), src, server.api_base)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        out["storage"] = {"sources": n, "local_s": local, "s3_s": remote, "ratio": remote / local}

        growth = []
        for factor in (1, 4, 16):
            progress(f"scale: in-process build at {factor}x ({base * factor} sources)")
            folder = tmp / f"growth-{factor}"
            corpus(folder, base * factor)
            seconds = dagster_build(folder, server.api_base, multiprocess=False)
            growth.append({"factor": factor, "sources": base * factor, "seconds": seconds,
                           "per_source_s": seconds / (base * factor)})
        out["growth"] = growth
    if data_dir:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        (Path(data_dir) / "scale.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    return out


def linear(growth: list[dict]) -> tuple[bool, str]:
    """Linear if the time per source at 16x is within 1.5x of that at 4x (1x carries the fixed start-up cost)."""
    per = {g["factor"]: g["per_source_s"] for g in growth}
    ratio = per[16] / per[4]
    return ratio <= 1.5, f"time per source at 16x / at 4x = {ratio:.2f}"


def section(r: dict) -> dict:
    e, s = r["executors"], r["storage"]
    is_linear, why = linear(r["growth"])
    rows = [
        (f"build ({e['sources']} sources x 2 queries, {r['delay_s'] * 1000:.0f} ms/call): in-process / multiprocess "
         "with 2 workers", ">= 1.7x", f"{e['ratio']:.2f}x ({e['in_process_s']:.1f} s / {e['multiprocess_s']:.1f} s)",
         e["ratio"] >= 1.7),
        (f"L1 runs ({s['sources']} sources x 2 queries): log on local S3 server / local files", "<= 1.5x",
         f"{s['ratio']:.2f}x ({s['s3_s']:.1f} s / {s['local_s']:.1f} s)", s["ratio"] <= 1.5),
        ("wall time grows linearly with the sources (1x, 4x, 16x)", "linear", f"{'yes' if is_linear else 'no'}: {why}",
         None),
    ]
    table = [[g["factor"], g["sources"], round(g["seconds"], 1), round(g["per_source_s"], 3)] for g in r["growth"]]
    notes = (f"A loopback OpenAI-compatible server answers every call after {r['delay_s'] * 1000:.0f} ms with one "
             f"canned gate reply ({r['calls']} calls in the in-process build); chunks of {r['chunk_tokens']} "
             "tokens. In-process: one shard, the loops concurrent inside one step (LLMResource concurrency 4). "
             "Multiprocess: `pipelines.scaled` (4 shards), `max_concurrent: 2`, step processes forked from a "
             "forkserver that preloaded the code location; the same per-step concurrency. The S3 server is moto "
             "on 127.0.0.1 serving one request at a time, s3fs the client; a commit is a GET and a conditional PUT "
             "of index.jsonl. Machine: " + f"{os.cpu_count()} CPUs.")
    return {"title": "Scale", "rows": rows, "notes": notes,
            "tables": [{"title": "in-process build by corpus size", "columns": ["x", "sources", "s", "s / source"],
                        "rows": table}]}


if __name__ == "__main__":
    result = run(quick="--quick" in sys.argv)
    print(json.dumps(result, indent=2))
    for row in section(result)["rows"]:
        print(" | ".join(map(str, row)))
