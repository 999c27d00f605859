"""Top-10 lookup latency: MemoryIndex's vector search path next to plain numpy brute force, same data, same run.

    python -m bench.lookup            # writes bench/out/lookup.json and prints a table

Random 384-d unit vectors are written to a real DuckDB ``memory_vector`` table
and loaded through ``MemoryIndex.open``; each query vector is precomputed, so
the figures exclude embedding the query text. Calls alternate between the two
paths so both see the same machine load. Goals (issue 3): p95 <= 1.5x numpy
and <= 20 ms at 100k.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from poimen.index.lookup import MemoryIndex
from poimen.index.project import PROJECTIONS
from poimen.index.schema import create_table_sql

DIM = 384
SIZES = (10_000, 100_000)
QUERIES = 200
WARMUP = 20
K = 10
MODEL_ID = "bench/random-unit-384"


class _NoTextEmbedder:
    """Stands in for the model: the benchmark passes query vectors, never text."""

    model_id = MODEL_ID
    dim = DIM

    def embed(self, texts):  # pragma: no cover - never called
        raise RuntimeError("bench.lookup searches by vector only")


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def write_index(db_path: Path, vectors: np.ndarray) -> None:
    con = duckdb.connect(str(db_path))
    for p in PROJECTIONS:
        con.execute(create_table_sql(p.name, p.schema(DIM), p.key))
    shas = [f"{i:064x}" for i in range(len(vectors))]
    table = pa.table({
        "sha": shas, "level": ["L1"] * len(shas), "kind": ["text"] * len(shas), "model_id": [MODEL_ID] * len(shas),
        "text_sha": shas, "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM),
    })
    con.register("_bench_rows", table)
    con.execute("INSERT INTO memory_vector SELECT * FROM _bench_rows")
    con.close()


def numpy_top_k(matrix: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ q
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def _ms(samples: list[float]) -> dict:
    a = np.asarray(samples) * 1000
    return {"p50_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "mean_ms": round(float(a.mean()), 3)}


def bench_size(n: int, rng: np.random.Generator, workdir: Path) -> dict:
    vectors = unit_vectors(rng, n)
    db = workdir / f"bench-{n}.duckdb"
    write_index(db, vectors)
    t0 = time.perf_counter()
    index = MemoryIndex.open(db, _NoTextEmbedder())
    load_s = time.perf_counter() - t0
    plain = vectors.copy()  # numpy's own copy, as a user of plain numpy would hold it
    queries = unit_vectors(rng, QUERIES + WARMUP)
    ours, base, agree = [], [], 0
    for i, q in enumerate(queries):
        t = time.perf_counter()
        got = index.search_vector(q, K)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        want = numpy_top_k(plain, q, K)
        t_base = time.perf_counter() - t
        if i >= WARMUP:
            ours.append(t_ours)
            base.append(t_base)
            agree += [j for j, _ in got] == [int(j) for j in want]
    row = {"vectors": n, "dim": DIM, "k": K, "queries": QUERIES, "load_s": round(load_s, 3),
           "memory_index": _ms(ours), "numpy": _ms(base), "same_top10": agree / QUERIES}
    row["p95_ratio"] = round(row["memory_index"]["p95_ms"] / row["numpy"]["p95_ms"], 3)
    row["goal_met"] = row["p95_ratio"] <= 1.5 and (n < 100_000 or row["memory_index"]["p95_ms"] <= 20)
    return row


def run(out_path: Path = Path("bench/out/lookup.json"), sizes: tuple[int, ...] = SIZES) -> dict:
    """Run the benchmark at ``sizes`` vectors, write JSON to ``out_path``, and return the result."""
    rng = np.random.default_rng(20261113)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [bench_size(n, rng, Path(tmp)) for n in sizes]
    result = {"benchmark": "lookup top-10 latency (vector path)", "machine": platform.machine(),
              "python": platform.python_version(), "numpy": np.__version__, "duckdb": duckdb.__version__,
              "goals": "p95 <= 1.5x numpy and <= 20 ms at 100k",
              # Absolute figures depend on what else the machine runs; the ratio to numpy does not.
              "cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
              "loadavg_after": [round(x, 2) for x in os.getloadavg()], "results": rows}
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main() -> None:
    result = run()
    print(f"{'vectors':>8} {'index p50':>10} {'index p95':>10} {'numpy p50':>10} {'numpy p95':>10} {'p95 ratio':>9} "
          f"{'same top10':>10} {'goal':>5}")
    for r in result["results"]:
        print(f"{r['vectors']:>8} {r['memory_index']['p50_ms']:>8.2f}ms {r['memory_index']['p95_ms']:>8.2f}ms "
              f"{r['numpy']['p50_ms']:>8.2f}ms {r['numpy']['p95_ms']:>8.2f}ms {r['p95_ratio']:>9.2f} "
              f"{r['same_top10']:>10.0%} {'met' if r['goal_met'] else 'MISSED':>5}")
    print(f"load average before/after: {result['loadavg_before'][0]} / {result['loadavg_after'][0]} on {result['cpus']} CPUs")


if __name__ == "__main__":
    main()
