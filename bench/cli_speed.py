"""How long a person waits for ``mem``: ``--help``, and ``lookup`` / ``ask`` on the example index, cold and warm.

    python -m bench.cli_speed [--out bench/out/data/cli_speed.json] [--repeats 3]

The example index is built once in a temporary ``POIMEN_HOME`` the way a
newcomer builds it (``mem run`` over ``examples/sources`` with
``examples/queries.yaml``, then ``mem rebuild --from-log``). Each command is
then run as its own process, as a person or an agent loop runs it:

- cold: ``POIMEN_NO_SERVER=1``, so the command loads the index and the embedder itself;
- warm: with ``mem serve --http`` running on the same log, which the command finds and uses.

Every figure is the median wall time of ``repeats`` runs, next to ``python -c pass``
measured in the same run (the interpreter's own start-up on this machine, now),
so the ratio says what poimen adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
LOOKUP = ["lookup", "-k", "3", "HTTP/1.1 413 Request Entity Too Large"]
ASK = ["ask", "how was the 413 on uploads fixed?"]
GOALS = {"help": 0.5, "cold": 3.0, "warm": 0.3}  # seconds, on 2 cores (issue 13)


def _mem() -> list[str]:
    """The console script a user runs, else the module (a checkout without the entry point installed)."""
    script = Path(sys.executable).parent / "mem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "poimen.cli.entry"]


def _timed(argv: list[str], env: dict[str, str], repeats: int) -> dict:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[-4:])} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return {"median_s": statistics.median(times), "runs_s": times}


def _build_example(env: dict[str, str]) -> None:
    sources = sorted(str(p) for p in (EXAMPLES / "sources").iterdir() if p.is_file())
    for argv in (["run", "--queries", str(EXAMPLES / "queries.yaml"), *sources], ["rebuild", "--from-log"]):
        done = subprocess.run(_mem() + argv, env=env, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mem {argv[0]} exited {done.returncode}: {done.stderr.strip()[-400:]}")


def _start_server(env: dict[str, str], root: Path, timeout_s: float = 300) -> subprocess.Popen:
    server = subprocess.Popen(_mem() + ["serve", "--http"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    while not (root / "serve.json").exists():
        if server.poll() is not None:
            raise RuntimeError(f"mem serve --http exited {server.returncode}: {server.stderr.read()[-400:]}")
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError("mem serve --http did not come up")
        time.sleep(0.1)
    return server


def _http_lookup(root: Path, n: int) -> dict:
    """What an agent loop that talks to the server itself pays per lookup: one POST /lookup on loopback."""
    import urllib.request

    state = json.loads((root / "serve.json").read_text())  # the port, and the token the CLI sends too
    port, token = state["port"], state["token"]
    body = json.dumps({"text": LOOKUP[-1], "k": 3}).encode()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/lookup", data=body,
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            hits = json.load(resp)["hits"]
        times.append(time.perf_counter() - start)
        if not hits:
            raise RuntimeError("POST /lookup returned no hits on the example index")
    return {"median_s": statistics.median(times), "runs_s": times}


def run(out: Path | None = None, repeats: int = 3) -> dict:
    with tempfile.TemporaryDirectory(prefix="poimen-cli-speed-") as tmp:
        root = Path(tmp) / "home"
        env = {**os.environ, "POIMEN_HOME": str(root), "POIMEN_CHUNK_TOKENS": "800", "NO_COLOR": "1",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "POIMEN_NO_SERVER": "1"}
        env.pop("POIMEN_DB", None)
        _build_example(env)
        result = {"python": _timed([sys.executable, "-c", "pass"], env, repeats),
                  "help": _timed(_mem() + ["--help"], env, repeats),
                  "lookup_cold": _timed(_mem() + LOOKUP, env, repeats),
                  "ask_cold": _timed(_mem() + ASK, env, repeats)}
        warm_env = {k: v for k, v in env.items() if k != "POIMEN_NO_SERVER"}
        server = _start_server(warm_env, root)
        try:
            _timed(_mem() + LOOKUP, warm_env, 1)  # the server's first request settles its caches
            result["lookup_warm"] = _timed(_mem() + LOOKUP, warm_env, repeats)
            result["ask_warm"] = _timed(_mem() + ASK, warm_env, repeats)
            result["http_lookup"] = _http_lookup(root, repeats * 10)
        finally:
            server.terminate()
            server.wait(30)
    result["repeats"] = repeats
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=2))
    return result


def rows(result: dict) -> list[tuple]:
    """Report rows: each command's median wall time, its goal, and its ratio to ``python -c pass``."""
    base = result["python"]["median_s"]
    out = []
    for key, label, goal in (("help", "mem --help", "help"), ("lookup_cold", "mem lookup, cold", "cold"),
                             ("ask_cold", "mem ask QUESTION, cold", "cold"),
                             ("lookup_warm", "mem lookup, warm (mem serve --http running)", "warm"),
                             ("ask_warm", "mem ask QUESTION, warm (mem serve --http running)", "warm")):
        t = result[key]["median_s"]
        out.append((f"{label}: median wall time (example index)", f"<= {GOALS[goal]:g} s",
                    f"{t:.2f} s = {t / base:.1f}x python -c pass ({base * 1000:.0f} ms)", t <= GOALS[goal]))
    if "http_lookup" in result:
        t = result["http_lookup"]["median_s"]
        out.append(("POST /lookup to the warm server, no CLI process (an agent loop calling it)", "",
                    f"{t * 1000:.0f} ms", None))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "data" / "cli_speed.json")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    result = run(args.out, args.repeats)
    for row in rows(result):
        print(f"{row[0]}: {row[2]} (goal {row[1]}: {'met' if row[3] else 'not met'})")


if __name__ == "__main__":
    main()
