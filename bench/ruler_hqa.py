"""RULER-HQA-style long-context QA through the gated loop: what the gate keeps, drops and answers.

Per length and item the document (``bench.hotpot_data``) is written to a
``.txt`` source and chunked as poimen chunks any source (``iter_chunks``,
5,000-token bound by default: MemAgent's and GRU-Mem's chunk size and
``mem run``'s default). One L1 run per item with the question as the standing
query, memory budget 1024, three ways:

- ``gated``: the gated loop, ``use_exit_gate`` off (poimen's L1 default);
- ``gated+exit``: the same with the exit gate acted on (stops when the model says end);
- ``always-update``: MemAgent-style, every turn an update (``bench.clients.AlwaysUpdateClient``).

Measured per (length, way): update-gate precision and recall against the
chunks holding a supporting sentence (``label_chunks``; an unread chunk after
an exit counts as not updated), supporting-fact retention in the final memory,
answer-in-memory (the normalised answer is in the final memory, as whole
words: what ψ could answer from, separate from how well ψ phrases it),
answer EM/F1 (ψ: the pinned answer prompt over the final memory, HotpotQA
normalisation), acceptance rate (updates / chunks read), memory tokens per
turn, model calls (gate calls with retries, plus the answer call) and wall time.

The exit gate is judged by the calls it saves against the retention it loses
(``gated`` vs ``gated+exit``). Goals (issue 10): gate precision >= 0.65 at 28K
and >= 0.33 at 112K, with supporting-fact retention >= 0.82 at those lengths;
a length not run has no goal row.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import hotpot_data, report
from bench.clients import AlwaysUpdateClient, CountingClient
from poimen.domain import Level, Query, Stream
from poimen.write.loop import ListSink, LoopConfig, gate_format, run_loop
from poimen.llm.prompts import render, unescape
from poimen.inputs.chunking import iter_chunks, source_id

LENGTHS = hotpot_data.TARGETS
PRECISION_GOALS = {28_000: 0.65, 112_000: 0.33}  # gate precision of ``gated`` at these lengths
RETENTION_GOAL = 0.82  # supporting-fact retention of ``gated`` at the lengths above
WAYS = ("gated", "gated+exit", "always-update")
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


@dataclass
class ItemRun:
    way: str
    labels: list[bool]
    gates: list[bool] = field(default_factory=list)
    memory_tokens: list[int] = field(default_factory=list)
    final_memory: str = ""
    retention: float = 0.0
    answer_in_memory: bool = False
    answer: str = ""
    em: float = 0.0
    f1: float = 0.0
    calls: int = 0
    seconds: float = 0.0
    parse_failed: int = 0


async def answer(client, question: str, memory: str) -> str:
    """ψ(Q, M) with the pinned answer prompt, as ``poimen.read.answer.ask`` renders it."""
    rendered = render("answer", question=question, memory=memory)
    completion = await client.complete(rendered.system, rendered.user, 1024)
    m = _ANSWER.search(completion.text)
    return unescape(m.group(1).strip()) if m else completion.text.strip()


async def run_item(item: hotpot_data.Item, way: str, stream, labels: list[bool], client, budget: int) -> ItemRun:
    counting = CountingClient(AlwaysUpdateClient(client) if way == "always-update" else client)
    out = ItemRun(way, labels)
    cfg = LoopConfig(memory_budget=budget, use_exit_gate=way == "gated+exit")

    def on_turn(turn: int, updated: bool, tokens: int) -> None:
        out.gates.append(updated)
        out.memory_tokens.append(tokens)

    start = time.perf_counter()
    sink = ListSink()
    outcome = await run_loop(Level.L1, Query(f"hqa-{item.id}", item.question), stream, counting, sink, cfg,
                             on_turn=on_turn)
    out.parse_failed = sum(e.kind == "parse_failed" for e in sink.events)
    out.final_memory = outcome.final_memory
    out.answer = await answer(counting, item.question, outcome.final_memory)
    out.seconds = time.perf_counter() - start
    out.calls = counting.calls
    out.retention = hotpot_data.retention(item, outcome.final_memory)
    out.answer_in_memory = hotpot_data.answer_in_memory(item.answer, outcome.final_memory)
    out.em = hotpot_data.exact_match(out.answer, item.answer)
    out.f1 = hotpot_data.f1_score(out.answer, item.answer)
    return out


def summarise(runs: Sequence[ItemRun]) -> dict:
    """Micro-averaged gate precision/recall over all chunks; the rest averaged per item."""
    tp = fp = fn = 0
    for r in runs:
        gates = r.gates + [False] * (len(r.labels) - len(r.gates))  # chunks never read after an exit
        tp += sum(g and lab for g, lab in zip(gates, r.labels))
        fp += sum(g and not lab for g, lab in zip(gates, r.labels))
        fn += sum(lab and not g for g, lab in zip(gates, r.labels))
    mean = lambda xs: statistics.fmean(xs) if xs else 0.0  # noqa: E731
    return {
        "items": len(runs),
        "chunks": mean([len(r.labels) for r in runs]),
        "positives": mean([sum(r.labels) for r in runs]),
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "retention": mean([r.retention for r in runs]),
        "answer_in_memory": mean([float(r.answer_in_memory) for r in runs]),
        "em": mean([r.em for r in runs]),
        "f1": mean([r.f1 for r in runs]),
        "acceptance": mean([sum(r.gates) / len(r.gates) for r in runs if r.gates]),
        "memory_tokens_per_turn": mean([mean(r.memory_tokens) for r in runs if r.memory_tokens]),
        "final_memory_tokens": mean([r.memory_tokens[-1] for r in runs if r.memory_tokens]),
        "calls": mean([r.calls for r in runs]),
        "seconds": mean([r.seconds for r in runs]),
        "parse_failed": mean([r.parse_failed for r in runs]),
    }


async def _run_length(items, client, chunk_tokens: int, budget: int, workdir: Path, concurrency: int):
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(item):
        async with sem:
            path = workdir / f"hqa-{item.id}-{item.tokens}.txt"
            path.write_text(item.document, encoding="utf-8")
            # Chunked once and held: each of the three runs would otherwise re-chunk the file (same shas either way).
            chunks = list(iter_chunks(path, chunk_tokens))
            stream = Stream.of(source_id(path), chunks)
            labels = hotpot_data.label_chunks(item, [c.text for c in chunks])
            return [await run_item(item, way, stream, labels, client, budget) for way in WAYS]

    return await asyncio.gather(*(one(item) for item in items))


def run(client, lengths: Sequence[int] = LENGTHS, n_items: int = 50, chunk_tokens: int = 5000, budget: int = 1024,
        seed: int = 0, concurrency: int = 1, progress: Callable[[str], None] = print,
        build: Callable[[int, int, int], list] = hotpot_data.build, server: str | None = None) -> dict:
    """Every length: build items, run the three ways, summarise; returns per-length summaries and one example.

    The result names the model, the server it was reached at and the gate grammar (mode and sha) the requests
    carried, and counts model calls per second over the items' wall time: an integration figure for a real model.
    """
    fmt = gate_format(client)
    result = {"chunk_tokens": chunk_tokens, "memory_budget": budget, "seed": seed, "model": client.model_id,
              "server": server or "in process", "grammar": f"{fmt.mode} {fmt.sha[:12]}" if fmt else "none",
              "lengths": {}, "example": None}
    with tempfile.TemporaryDirectory(prefix="poimen-hqa-") as tmp:
        for length in lengths:
            start = time.perf_counter()
            items = build(n_items, length, seed)
            built = time.perf_counter() - start
            per_item = asyncio.run(_run_length(items, client, chunk_tokens, budget, Path(tmp), concurrency))
            by_way = {way: summarise([runs[i] for runs in per_item]) for i, way in enumerate(WAYS)}
            off, on = by_way["gated"], by_way["gated+exit"]
            result["lengths"][length] = {
                "tokens": statistics.fmean(i.tokens for i in items), "build_s": built,
                "wall_s": time.perf_counter() - start, "ways": by_way,
                "exit_calls_saved": 1 - on["calls"] / off["calls"] if off["calls"] else 0.0,
                "exit_retention_lost": off["retention"] - on["retention"],
            }
            first = per_item[0]
            # Items run concurrently against one server: calls over the length's wall time, not summed item times.
            calls, seconds = sum(r.calls for runs in per_item for r in runs), time.perf_counter() - start - built
            result["lengths"][length]["calls_per_s"] = calls / seconds if seconds else 0.0
            result["example"] = {"length": length, "item": items[0].id, "labels": first[0].labels,
                                 **{way: {"gates": r.gates, "memory_tokens": r.memory_tokens}
                                    for way, r in zip(WAYS, first)}}
            g = by_way["gated"]
            progress(f"  hotpot {length:>7,} tokens: {len(items)} items, {result['lengths'][length]['calls_per_s']:.3f} calls/s, "
                     f"gate P {g['precision']:.2f} R {g['recall']:.2f}, "
                     f"retention {g['retention']:.2f}, answer in memory {g['answer_in_memory']:.2f}, F1 {g['f1']:.3f}, "
                     f"{time.perf_counter() - start:.1f}s")
    return result


def _k(length: int) -> str:
    return f"{length / 1000:g}K"


def section(result: dict, assets: Path) -> dict:
    """The report section: headline rows, a table per length and way, the memory-growth plot and a gate timeline."""
    lengths = result["lengths"]
    rows = []
    for length, r in lengths.items():
        g = r["ways"]["gated"]
        p_goal = PRECISION_GOALS.get(length)
        rows += [
            (f"{_k(length)} gate recall (chunks with supporting facts)", "", g["recall"], None),
            (f"{_k(length)} gate precision", f">= {p_goal:.2f}" if p_goal else "", g["precision"],
             g["precision"] >= p_goal if p_goal else None),
            (f"{_k(length)} supporting-fact retention", f">= {RETENTION_GOAL:.2f}" if p_goal else "", g["retention"],
             g["retention"] >= RETENTION_GOAL if p_goal else None),
            (f"{_k(length)} answer in final memory, " + " / ".join(WAYS), "",
             " / ".join(f"{r['ways'][w]['answer_in_memory']:.3f}" for w in WAYS), None),
            (f"{_k(length)} answer EM / F1", "", f"{g['em']:.3f} / {g['f1']:.3f}", None),
            (f"{_k(length)} memory tokens per turn, gated vs always-update", "gated < always-update",
             f"{g['memory_tokens_per_turn']:.0f} vs {r['ways']['always-update']['memory_tokens_per_turn']:.0f}",
             g["memory_tokens_per_turn"] < r["ways"]["always-update"]["memory_tokens_per_turn"]),
            (f"{_k(length)} exit gate: calls saved / retention lost", "",
             f"{r['exit_calls_saved']:.1%} / {r['exit_retention_lost']:+.3f}", None),
            (f"{_k(length)} model calls per second, parse-failed turns per item (gated)", "",
             f"{r.get('calls_per_s', 0.0):.3f}, {g.get('parse_failed', 0.0):.2f}", None),
        ]
    cols = ["length", "way", "items", "chunks", "gold chunks", "gate P", "gate R", "retention", "EM", "F1",
            "acceptance", "answer in mem", "mem tok/turn", "final mem tok", "calls", "s/item"]
    table = [[f"{_k(length)}", way, w["items"], round(w["chunks"], 1), round(w["positives"], 1), w["precision"],
              w["recall"], w["retention"], w["em"], w["f1"], w["acceptance"], w["answer_in_memory"], round(w["memory_tokens_per_turn"]),
              round(w["final_memory_tokens"]), round(w["calls"], 1), round(w["seconds"], 2)]
             for length, r in lengths.items() for way, w in r["ways"].items()]
    plots = []
    ex = result.get("example")
    if ex:
        plots.append(report.line_plot(assets / "hotpot_memory_tokens.png",
                                      {way: ex[way]["memory_tokens"] for way in WAYS},
                                      f"memory tokens per turn, {ex['length'] // 1000}K item {ex['item'][:8]}",
                                      hline=result["memory_budget"]))
        plots.append(report.gate_timeline(assets / "hotpot_gate_timeline.png", ex["gated"]["gates"],
                                          f"gate timeline (gated), {ex['length'] // 1000}K item {ex['item'][:8]}",
                                          positives=ex["labels"]))
    notes = (f"Model `{result['model']}` at {result.get('server', 'in process')}, gate grammar "
             f"{result.get('grammar', 'none')}; chunk bound {result['chunk_tokens']} tokens, memory budget "
             f"{result['memory_budget']}, seed {result['seed']}. Gate P/R are micro-averaged over all chunks of "
             "all items; a chunk left unread after an exit counts as not updated. `always-update` is the "
             "MemAgent-style comparison (every turn rewrites the memory: old memory plus the chunk's two best "
             "sentences). EM/F1 come from ψ (the pinned answer prompt) over the final memory; the offline engine "
             "answers with whole memory sentences, so its EM is near zero by construction.")
    headline = [(f"{_k(length)}: gate recall / precision, retention, answer in memory, F1 (gated)", "",
                 f"{r['ways']['gated']['recall']:.2f} / {r['ways']['gated']['precision']:.2f}, "
                 f"{r['ways']['gated']['retention']:.2f}, {r['ways']['gated']['answer_in_memory']:.2f}, "
                 f"{r['ways']['gated']['f1']:.3f}", None)
                for length, r in lengths.items()]
    headline += [r for r in rows if r[3] is not None]
    return {"title": "Long-context QA (RULER-HQA style, HotpotQA)", "rows": rows, "notes": notes, "headline": headline,
            "tables": [{"title": "per length and way", "columns": cols, "rows": table}], "plots": plots}
