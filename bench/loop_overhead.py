"""Loop overhead, concurrency efficiency and chunking throughput (issue: the gated loop).

    python -m bench.loop_overhead [--out bench/out/loop_overhead.json]

- per-turn overhead of ``run_loop`` with an instant scripted client, in memory
  and with the fsynced journal (goal: median <= 2 ms in memory);
- concurrency: 32 streams x 8 chunks against a client that sleeps 100 ms per
  call, 32 runs in flight (goal: wall time <= 1.2x the ideal 0.8 s);
- chunking throughput on 10 MB of text next to plain ``tiktoken.encode`` on the
  same text (goal >= 0.5x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from poimen.inputs.chunking import iter_chunks
from poimen.domain import Chunk, Level, Query, Stream
from poimen.llm.client import Completion
from poimen.log.store import EventLog
from poimen.write.loop import ListSink, LoopConfig, run_loop
from poimen.write.runner import RunPlan, execute
from poimen.text.tokens import count_tokens, encoding

QUERY = Query("bench", "What caused the outage and how was it fixed?")
REPLIES = ["<check>no</check><update></update><next>continue</next>",
           "<check>yes</check><update>The outage was caused by a full disk; fixed by rotating logs.</update><next>continue</next>"]


class InstantClient:
    model_id = "bench/instant"

    def __init__(self):
        self.calls = 0

    async def complete(self, system, user, max_tokens):
        self.calls += 1
        return Completion(REPLIES[self.calls % 5 == 0], self.model_id)


class SleepyClient(InstantClient):
    model_id = "bench/sleep-100ms"

    async def complete(self, system, user, max_tokens):
        await asyncio.sleep(0.1)
        return await super().complete(system, user, max_tokens)


def _stream(name: str, n: int, words: int = 300) -> Stream:
    body = " ".join(f"line {i} of the on-call channel says disk usage is normal." for i in range(words // 10))
    chunks = [Chunk(text=f"{name} chunk {i}: {body}", source=name, position=i, tokens=count_tokens(body) + 5)
              for i in range(n)]
    return Stream.of(name, chunks)


def per_turn(turns: int = 400) -> dict:
    stream = _stream("overhead", turns)
    times = []

    def on_turn(*_):
        times.append(time.perf_counter())

    start = time.perf_counter()
    asyncio.run(run_loop(Level.L1, QUERY, stream, InstantClient(), ListSink(), LoopConfig(), on_turn=on_turn))
    deltas = [b - a for a, b in zip([start] + times[:-1], times)]
    with tempfile.TemporaryDirectory() as tmp:
        log = EventLog(tmp)
        jtimes = []
        with log.writer():
            t0 = time.perf_counter()
            asyncio.run(run_loop(Level.L1, QUERY, stream, InstantClient(), log.open_run(
                __import__("poimen.write.loop", fromlist=["run_id_for"]).run_id_for(Level.L1, QUERY, stream, LoopConfig(), "bench/instant")),
                LoopConfig(), on_turn=lambda *_: jtimes.append(time.perf_counter())))
        jdeltas = [b - a for a, b in zip([t0] + jtimes[:-1], jtimes)]
    return {"turns": turns, "median_ms": statistics.median(deltas) * 1e3,
            "p95_ms": sorted(deltas)[int(0.95 * len(deltas))] * 1e3,
            "journal_median_ms": statistics.median(jdeltas) * 1e3}


def _warm_up() -> None:
    """Pay once-per-process costs (pyarrow's Parquet writer start-up, ~0.5 s) before timing anything."""
    with tempfile.TemporaryDirectory() as tmp:
        log = EventLog(tmp)
        with log.writer():
            asyncio.run(execute(log, [RunPlan(Level.L1, QUERY, _stream("warm", 1, words=20))], InstantClient()))


def concurrency(streams: int = 32, chunks: int = 8, repeats: int = 3) -> dict:
    """The median of ``repeats`` executions (one alone swung 1.19x-1.23x between runs on this machine)."""
    _warm_up()
    walls = []
    for _ in range(repeats):
        plans = [RunPlan(Level.L1, QUERY, _stream(f"s{i}", chunks, words=60)) for i in range(streams)]
        with tempfile.TemporaryDirectory() as tmp:
            log = EventLog(tmp)
            with log.writer():
                t0 = time.perf_counter()
                outcomes = asyncio.run(execute(log, plans, SleepyClient(), LoopConfig(), concurrency=streams))
                walls.append(time.perf_counter() - t0)
        assert all(o.status == "sealed" for o in outcomes)
    wall, ideal = statistics.median(walls), chunks * 0.1
    return {"streams": streams, "chunks_per_stream": chunks, "wall_s": wall, "ideal_s": ideal, "ratio": wall / ideal,
            "samples_s": walls}


def chunking(megabytes: int = 10, repeats: int = 3) -> dict:
    """The chunker and plain ``tiktoken.encode`` on the same text, alternated ``repeats`` times; medians of each (one
    pair alone gave 0.47x-0.81x across reports on this machine)."""
    para = ("The payments worker restarted after the batch size change. Operators rolled back the config, "
            "and memory stayed flat afterwards. Uploads over ten kilobytes failed at the ingress.\n\n")
    text = para * (megabytes * 1_000_000 // len(para))
    ours, plain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        path.write_text(text, encoding="utf-8")
        encoding()  # load ranks outside the timings
        for _ in range(repeats):
            t0 = time.perf_counter()
            tokens = sum(c.tokens for c in iter_chunks(path, 5000))
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            plain_tokens = len(encoding().encode(text))
            plain.append(time.perf_counter() - t0)
    ours_s, plain_s = statistics.median(ours), statistics.median(plain)
    return {"megabytes": megabytes, "tokens": tokens, "plain_tokens": plain_tokens,
            "chunker_tokens_per_s": tokens / ours_s, "tiktoken_tokens_per_s": plain_tokens / plain_s,
            "ratio": (tokens / ours_s) / (plain_tokens / plain_s), "samples_s": {"chunker": ours, "tiktoken": plain}}


def run(out_path: Path = Path("bench/out/loop_overhead.json")) -> dict:
    result = {"per_turn": per_turn(), "concurrency": concurrency(), "chunking": chunking()}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench/out/loop_overhead.json"))
    r = run(parser.parse_args().out)
    t, c, k = r["per_turn"], r["concurrency"], r["chunking"]
    print(f"loop overhead per turn: median {t['median_ms']:.3f} ms (goal <= 2), p95 {t['p95_ms']:.3f} ms, "
          f"with fsynced journal median {t['journal_median_ms']:.3f} ms")
    print(f"concurrency: {c['streams']}x{c['chunks_per_stream']} at 100 ms/call: {c['wall_s']:.2f} s vs ideal "
          f"{c['ideal_s']:.2f} s = {c['ratio']:.2f}x (goal <= 1.2)")
    print(f"chunking: {k['chunker_tokens_per_s']:,.0f} tok/s vs tiktoken {k['tiktoken_tokens_per_s']:,.0f} tok/s "
          f"= {k['ratio']:.2f}x (goal >= 0.5)")


if __name__ == "__main__":
    main()
