"""Scale: the build on Dagster's executors, the log on a local S3 server, and growth with the number of sources.

Every model call goes over HTTP to a loopback OpenAI-compatible server that waits 100 ms and then gives one
canned gate reply, so calls overlap the way a real model's do and cost no CPU here. The corpus is synthetic: short incident
notes, each a few chunks. Measured:

- the build (`chunks` + `l1_memories`) in process (one shard) against the multiprocess executor with 2
  workers (``pipelines.scaled``: 4 shards, two step processes at a time), as a ratio of wall times;
- the same L1 runs (``run_loops``, as `mem run` does them) with the log on moto's S3 server and on the GCS
  emulator against a local folder;
- the in-process build at 1x, 4x and 16x the sources, with the wall time per source at each size;
- typed-store writes (``Memory.add``, each a read-modify-write of the whole log in one exclusive session: the
  local ``LOCK``, or on an object store the optimistic session) into a local folder, S3 and GCS: the wall time of
  one write and the requests it makes to the store.

Run alone: ``python -m bench.scale [--quick] [--only executors|storage|growth|sessions]``.
"""

from __future__ import annotations

import json
import os
import statistics
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
WORKERS = 2  # step processes at a time in the multiprocess build


def corpus(folder: Path, sources: int) -> Path:
    """``sources`` notes and a queries file under ``folder``; returns the sources folder."""
    src = folder / "sources"
    src.mkdir(parents=True)
    for i in range(sources):
        (src / f"incident-{i:03d}.md").write_text(NOTE.format(i=i, m=i % 60), encoding="utf-8")
    (folder / "reference").mkdir()
    (folder / "queries.yaml").write_text(QUERIES, encoding="utf-8")
    return src


def resources_config(folder: Path, api_base: str) -> dict:
    """Run config pointing every resource the build uses at ``folder`` (its log, its model-reply cache).

    Run config rather than the environment: step processes are forked from a fork server that keeps the
    environment it started with, and the bench starts it once, before any clock, for every multiprocess build.
    """
    return {"resources": {
        "event_log": {"config": {"root": str(folder / "log")}},
        "corpus": {"config": {"sources": str(folder / "sources"), "reference": str(folder / "reference"),
                              "queries": str(folder / "queries.yaml"), "chunk_tokens": CHUNK_TOKENS}},
        "llm": {"config": {"model": "openai/scale-bench", "api_base": api_base,
                           "cache_dir": str(folder / "log" / "cache" / "llm")}},
    }}


def dagster_build(folder: Path, api_base: str, multiprocess: bool) -> float:
    """Wall seconds of one build of `chunks` and `l1_memories` (fresh log), in process or on 2 step processes.

    In process: the default code location (one shard, one process). Multiprocess: ``pipelines.scaled`` (4 shards),
    ``WORKERS`` step processes at a time forked from the fork server that ``pipelines.preload`` warmed.
    """
    import dagster as dg

    from pipelines.definitions import make_definitions
    from pipelines.scaled import execution_config, full_build_job

    keys = [dg.AssetKey(k) for k in SELECTION]
    # Dagster's console logger at WARNING: the bench prints its figures, not every step event of every build.
    run_config = {**resources_config(folder, api_base), "loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    (folder / "dagster").mkdir(exist_ok=True)
    with dg.instance_for_test(temp_dir=str(folder / "dagster")) as instance:
        start = time.perf_counter()
        if multiprocess:
            result = dg.execute_job(dg.reconstructable(full_build_job), instance=instance, asset_selection=keys,
                                    run_config={**run_config, **execution_config(WORKERS)})
        else:
            result = make_definitions().resolve_job_def("full_build").execute_in_process(
                instance=instance, asset_selection=keys, run_config=run_config)
        seconds = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"the {'multiprocess' if multiprocess else 'in-process'} build failed")
    return seconds


def loop_build(root: str | Path, sources: Path, api_base: str) -> float:
    """Wall seconds of the L1 runs over ``sources`` (as `mem run --queries` does them) into the log at ``root``."""
    from poimen.settings import ModelConfig
    from poimen.write.core import RunRequest, run_loops

    files = sorted(sources.glob("*.md"))
    start = time.perf_counter()
    result = run_loops(RunRequest(root=root, sources=files, queries=sources.parent / "queries.yaml",
                                  model=ModelConfig("openai/scale-bench", api_base), chunk_tokens=CHUNK_TOKENS,
                                  sources_root=sources))
    seconds = time.perf_counter() - start
    if not result.ok:
        raise RuntimeError(f"the L1 runs into {root} did not all seal")
    return seconds


PARTS = ("executors", "storage", "growth", "sessions")
WRITES = 20  # typed-store writes per store (5 with --quick)


def run(data_dir: Path | None = None, quick: bool = False, progress=print, parts=PARTS) -> dict:
    from poimen.testing.openai_server import FakeOpenAI, text

    base = 2 if quick else 16  # 1x; the executor and storage comparisons use 4x (8 or 64 sources)
    out: dict = {"delay_s": DELAY, "chunk_tokens": CHUNK_TOKENS, "queries": 2, "quick": quick}
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-loopback")
    with FakeOpenAI(delay=DELAY, default=text(REPLY)) as server, tempfile.TemporaryDirectory(prefix="poimen-scale-") as tmp:
        tmp = Path(tmp)
        corpus(tmp / "warm", 1)  # imports (litellm, dagster, the code location) paid before any clock starts
        dagster_build(tmp / "warm", server.api_base, multiprocess=False)
        if "executors" in parts:
            out.update(executors(tmp, server, base * 4, 1 if quick else 3, progress))
        if "storage" in parts:
            out["storage"] = storage(tmp, server.api_base, base * 4, 1 if quick else 3, progress)
        if "growth" in parts:
            out["growth"] = growth(tmp, server.api_base, base, progress)
        if "sessions" in parts:
            out["sessions"] = sessions(tmp, 5 if quick else WRITES, progress)
    if data_dir:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        (Path(data_dir) / "scale.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    return out


def executors(tmp: Path, server, n: int, repeats: int, progress) -> dict:
    """In-process against multiprocess builds of ``n`` sources, alternated ``repeats`` times; medians."""
    # Like the imports of the warm-up build, the fork server's start (it imports pipelines.preload; a Dagster run
    # worker starts one per run) is paid before the clock, by a first multiprocess build, and reported.
    corpus(tmp / "warm-multiprocess", 1)
    first = dagster_build(tmp / "warm-multiprocess", server.api_base, multiprocess=True)
    progress(f"scale: executors over {n} sources x 2 queries, {repeats} builds each")
    samples: dict[str, list[float]] = {"in_process": [], "multiprocess": []}
    calls: dict[str, int] = {}
    for i in range(repeats):  # alternated, so a change in the machine's load falls on both
        for name in samples:
            corpus(tmp / f"{name}-{i}", n)
            before = server.calls
            samples[name].append(dagster_build(tmp / f"{name}-{i}", server.api_base, name == "multiprocess"))
            calls[name] = server.calls - before
    in_process, multiprocess = (statistics.median(samples[k]) for k in ("in_process", "multiprocess"))
    # The same pair once at 4x the sources: the multiprocess build pays a fixed cost per step process (its start,
    # the instance it opens, its events) that a larger build spreads thinner, so where the executors cross is a figure
    # a user choosing one needs, not only the ratio at one size.
    larger = {}
    for name in samples:
        corpus(tmp / f"{name}-x4", n * 4)
        larger[f"{name}_s"] = dagster_build(tmp / f"{name}-x4", server.api_base, name == "multiprocess")
    return {"calls": calls, "first_multiprocess_build_s": first, "executors": {
        "sources": n, "in_process_s": in_process, "multiprocess_s": multiprocess, "ratio": in_process / multiprocess,
        "samples": samples}, "executors_x4": {"sources": n * 4, **larger,
                                              "ratio": larger["in_process_s"] / larger["multiprocess_s"]}}


@contextmanager
def environment(env: dict[str, str]):
    """``env`` set for the block (a store's client reads its endpoint from the environment), then restored."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def storage(tmp: Path, api_base: str, n: int, repeats: int, progress) -> dict:
    """The L1 runs of ``n`` sources into a local folder, moto's S3 server and the GCS emulator, alternated
    ``repeats`` times (each into a fresh log); medians."""
    from poimen.testing.gcs_server import LocalGCS
    from poimen.testing.s3_server import LocalS3

    progress(f"scale: the log on S3 and on GCS against local files, {n} sources, {repeats} runs each")
    src = corpus(tmp / "storage", n)
    samples: dict[str, list[float]] = {"local": [], "s3": [], "gs": []}
    with LocalS3() as s3, LocalGCS() as gcs:
        for i in range(repeats):
            samples["local"].append(loop_build(tmp / "storage" / f"log-{i}", src, api_base))
            for name, server in (("s3", s3), ("gs", gcs)):
                with environment(server.env):
                    samples[name].append(loop_build(server.uri(f"scale-{i}"), src, api_base))
    local, s3_s, gs_s = (statistics.median(samples[k]) for k in ("local", "s3", "gs"))
    return {"sources": n, "local_s": local, "s3_s": s3_s, "ratio": s3_s / local, "gs_s": gs_s,
            "gs_ratio": gs_s / local, "samples": samples}


def growth(tmp: Path, api_base: str, base: int, progress) -> list[dict]:
    """The in-process build at 1x, 4x and 16x ``base`` sources."""
    rows = []
    for factor in (1, 4, 16):
        progress(f"scale: in-process build at {factor}x ({base * factor} sources)")
        folder = tmp / f"growth-{factor}"
        corpus(folder, base * factor)
        seconds = dagster_build(folder, api_base, multiprocess=False)
        rows.append({"factor": factor, "sources": base * factor, "seconds": seconds,
                     "per_source_s": seconds / (base * factor)})
    return rows


@contextmanager
def counting_requests():
    """Count the requests the object stores send (each one round trip): the one method each store's plain requests go
    through, plus S3's GET (read with its ETag in one request) and GCS's batched delete."""
    from poimen.log.storage.gcs import GCSStore
    from poimen.log.storage.s3 import S3Store

    count = [0]
    patched = [(S3Store, "_call"), (S3Store, "_get"), (GCSStore, "_call"), (GCSStore, "_delete_keys")]
    saved = [getattr(cls, name) for cls, name in patched]

    def counted(method):
        def call(*args, **kwargs):
            count[0] += 1
            return method(*args, **kwargs)
        return call

    for (cls, name), method in zip(patched, saved):
        setattr(cls, name, counted(method))
    try:
        yield count
    finally:
        for (cls, name), method in zip(patched, saved):
            setattr(cls, name, method)


def sessions(tmp: Path, writes: int, progress) -> dict:
    """``writes`` typed-store writes into a fresh log in a local folder, on S3 and on GCS: the median wall time of
    one write, and (object stores) the requests per write. No other writer: no write is redone."""
    from poimen.agent.facade import Memory
    from poimen.testing.gcs_server import LocalGCS
    from poimen.testing.s3_server import LocalS3

    progress(f"scale: {writes} typed-store writes each into a local log, S3 and GCS")
    out = {"writes": writes}
    with LocalS3() as s3, LocalGCS() as gcs:
        for name, root, env in (("local", tmp / "sessions", {}), ("s3", s3.uri("sessions"), s3.env),
                                ("gs", gcs.uri("sessions"), gcs.env)):
            with environment(env), counting_requests() as requests:
                mem = Memory("bench", root=root)
                mem.add("semantic", "warm-up: the log and its replica exist")  # first-write costs off the clock
                before, samples = requests[0], []
                for i in range(writes):
                    start = time.perf_counter()
                    mem.add("semantic", f"fact {i}: the checkout service on shard-{i} needs 256 connections")
                    samples.append(time.perf_counter() - start)
                out[name] = {"median_ms": statistics.median(samples) * 1000, "samples_ms": [x * 1000 for x in samples],
                             "requests_per_write": (requests[0] - before) / writes}
    return out


def linear(growth: list[dict]) -> tuple[bool, str]:
    """Linear if the time per source at 16x is within 1.5x of that at 4x (1x carries the fixed start-up cost)."""
    per = {g["factor"]: g["per_source_s"] for g in growth}
    ratio = per[16] / per[4]
    return ratio <= 1.5, f"time per source at 16x / at 4x = {ratio:.2f}"


def section(r: dict) -> dict:
    e, x4, s = r["executors"], r["executors_x4"], r["storage"]
    is_linear, why = linear(r["growth"])
    rows = [
        (f"build ({e['sources']} sources x 2 queries, {r['delay_s'] * 1000:.0f} ms/call): in-process / multiprocess "
         "with 2 workers", ">= 1.7x", f"{e['ratio']:.2f}x ({e['in_process_s']:.1f} s / {e['multiprocess_s']:.1f} s)",
         e["ratio"] >= 1.7),
        (f"the same build at {x4['sources']} sources (one build each): in-process / multiprocess", "",
         f"{x4['ratio']:.2f}x ({x4['in_process_s']:.1f} s / {x4['multiprocess_s']:.1f} s)", None),
        (f"L1 runs ({s['sources']} sources x 2 queries): log on local S3 server / local files", "<= 1.5x",
         f"{s['ratio']:.2f}x ({s['s3_s']:.1f} s / {s['local_s']:.1f} s)", s["ratio"] <= 1.5),
        (f"L1 runs ({s['sources']} sources x 2 queries): log on local GCS emulator / local files", "<= 1.5x",
         f"{s['gs_ratio']:.2f}x ({s['gs_s']:.1f} s / {s['local_s']:.1f} s)", s["gs_ratio"] <= 1.5),
        ("wall time grows linearly with the sources (1x, 4x, 16x)", "linear", f"{'yes' if is_linear else 'no'}: {why}",
         None),
    ]
    if "sessions" in r:
        w = r["sessions"]
        where = {"local": "local files", "s3": "local S3 server", "gs": "local GCS emulator"}
        rows += [(f"typed-store write, log on {where[name]} (median of {w['writes']}"
                  + ("" if name == "local" else "; requests to the store per write") + ")", "",
                  f"{w[name]['median_ms']:.0f} ms" + ("" if name == "local" else
                                                      f", {w[name]['requests_per_write']:.0f} requests"), None)
                 for name in where]
    table = [[g["factor"], g["sources"], round(g["seconds"], 1), round(g["per_source_s"], 3)] for g in r["growth"]]
    notes = (f"A loopback OpenAI-compatible server answers every call after {r['delay_s'] * 1000:.0f} ms with one "
             f"canned gate reply ({r['calls']['in_process']} calls in an in-process build, "
             f"{r['calls']['multiprocess']} in a multiprocess one); chunks of {r['chunk_tokens']} "
             "tokens. In-process: one shard, the loops concurrent inside one step (LLMResource concurrency 4). "
             "Multiprocess: `pipelines.scaled` (4 shards), `max_concurrent: 2`, step processes forked from a "
             "fork server that preloaded `pipelines.preload`, started before the clock by a first multiprocess "
             f"build of one source ({r['first_multiprocess_build_s']:.1f} s), as the in-process imports are; the "
             "same per-step concurrency; medians of 3 alternated builds. The S3 server is moto "
             "on 127.0.0.1 serving one request at a time, s3fs the client; a commit is one conditional PUT "
             "of index.jsonl (and a GET only after a lost race). The GCS server is gcp-storage-emulator on 127.0.0.1, "
             "one request at a time, with the generation preconditions it lacks added (poimen/testing/gcs_server.py), "
             "gcsfs the client. Machine: " + f"{os.cpu_count()} CPUs.")
    return {"title": "Scale", "rows": rows, "notes": notes,
            "tables": [{"title": "in-process build by corpus size", "columns": ["x", "sources", "s", "s / source"],
                        "rows": table}]}


if __name__ == "__main__":
    # --only executors|storage|growth|sessions measures one part (its JSON only); the report needs them all.
    only = sys.argv[sys.argv.index("--only") + 1:][:1] if "--only" in sys.argv else list(PARTS)
    unknown = [p for p in only if p not in PARTS]
    if not only or unknown:
        sys.exit(f"--only takes one of {', '.join(PARTS)}")
    result = run(quick="--quick" in sys.argv, parts=only)
    print(json.dumps(result, indent=2))
    if only == list(PARTS):
        for row in section(result)["rows"]:
            print(" | ".join(map(str, row)))
