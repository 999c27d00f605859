"""`python -m bench` end to end on a tiny fixture: hand-made HotpotQA items, a hand-made LoCoMo slice, HashEmbedder."""

from __future__ import annotations

import re

from bench import __main__ as bench_main
from bench import hotpot_data, report
from bench.locomo_data import Conversation, LoCoMo, QAItem, Turn
from poimen.embedding.embedders import HashEmbedder

FILLER = ("Document {n}:\nFiller {n}\nThe river town of Filler {n} holds a weekly market. "
          "Its bakery sells rye bread to travellers. The mayor rides a bicycle to work.")


def tiny_hotpot(n_items: int, target_tokens: int, seed: int) -> list[hotpot_data.Item]:
    gold = ("Document 3:\nAlpha Band\nAlpha Band was formed in 1965 in Leeds by the Smith brothers.",
            "Document 6:\nBeta Band\nBeta Band was formed in 1971 in Glasgow by three students.")
    blocks = [FILLER.format(n=n) for n in range(1, 9)]
    blocks[2], blocks[5] = gold
    document = "\n\n".join(blocks * (target_tokens // 400))
    item = hotpot_data.Item(
        id=f"tiny{target_tokens}", question="Which band was formed first, Alpha Band or Beta Band?",
        answer="Alpha Band", document=document,
        supporting_sentences=("Alpha Band was formed in 1965 in Leeds by the Smith brothers.",
                              "Beta Band was formed in 1971 in Glasgow by three students."),
        gold_titles=("Alpha Band", "Beta Band"), tokens=0, n_documents=8, distractor_passes=0)
    return [item] * n_items


def tiny_locomo() -> LoCoMo:
    lines = [("Ann", "I adopted a puppy named Rex last weekend."), ("Bob", "Congrats! My kids love dogs too."),
             ("Ann", "I started a new job as a nurse at the city hospital."), ("Bob", "I went camping at Lake Tahoe."),
             ("Ann", "My favourite book is Dune."), ("Bob", "I plan to run a marathon next spring."),
             ("Ann", "Painting helps me with stress."), ("Bob", "My partner and I travelled to Rome.")]
    turns = tuple(Turn("conv-t", f"D{1 + i // 4}:{1 + i % 4}", who, text, f"{1 + i // 4} May, 2023", 1 + i // 4)
                  for i, (who, text) in enumerate(lines))
    qa = [QAItem("conv-t", "What is the name of Ann's puppy?", "Rex", ("D1:1",), 4, (lines[0][1],)),
          QAItem("conv-t", "Where did Bob go camping?", "Lake Tahoe", ("D1:4",), 4, (lines[3][1],)),
          QAItem("conv-t", "When did Ann adopt a puppy and where does she work?", "May 2023; city hospital",
                 ("D1:1", "D1:3"), 1, (lines[0][1], lines[2][1])),
          QAItem("conv-t", "When did Bob travel to Rome?", "May 2023", ("D2:4",), 2, (lines[7][1],))]
    return LoCoMo([Conversation("conv-t", ("Ann", "Bob"), turns)], qa)


def test_bench_main_writes_report_tables(tmp_path):
    cfg = bench_main.Config(
        quick=True, out_dir=tmp_path, cache_dir=tmp_path / "cache", hotpot_lengths=(800, 1600), hotpot_items=2,
        chunk_tokens=64, locomo_data=tiny_locomo(), locomo_chunk_tokens=64, embedder=HashEmbedder(),
        hotpot_build=tiny_hotpot, only=("hotpot", "locomo"), progress=lambda line: None,
    )
    path = bench_main.run_benchmark(cfg)
    assert path == tmp_path / "REPORT.md"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# poimen benchmark report (quick)"
    assert any(line.startswith("- Git sha: `") for line in lines)
    assert any(line.startswith("- Total duration: ") for line in lines)

    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## Headline", "## Long-context QA (RULER-HQA style, HotpotQA)",
                        "## LoCoMo: evidence coverage of the context an agent gets", "## This run"]
    assert lines.count("| metric | goal | measured | met? |") == 4

    # HotpotQA: one row per length and way, figures within their ranges.
    header = "| length | way | items | chunks | gold chunks | gate P | gate R | retention | EM | F1 | acceptance |"
    assert any(line.startswith(header) for line in lines)
    rows = [line.split(" | ") for line in lines if re.match(r"\| (0\.8|1\.6)K \| ", line)]
    assert len(rows) == 2 * 3
    for cells in rows:
        precision, recall, retention = (float(cells[i]) for i in (5, 6, 7))
        assert 0 <= precision <= 1 and 0 <= recall <= 1 and 0 <= retention <= 1
    gated = [cells for cells in rows if cells[1] == "gated"]
    # Gold paragraphs repeat in this fixture; the gate takes the first copy, so recall is above zero, not one.
    assert all(float(cells[6]) > 0 and float(cells[7]) == 1.0 for cells in gated)

    # LoCoMo: every method at both budgets, side by side, plus the memory ceiling.
    for method in ("bm25", "dense", "hybrid", "poimen", "poimen-untagged", "poimen-scorer"):
        for budget in (500, 2000):
            assert re.search(rf"^\| {re.escape(method)} \| {budget} \| [01]\.\d{{3}} \|", text, re.M), (method, budget)
    assert "| memory ceiling | - |" in text
    assert re.search(r"coverage @500: poimen \(topic queries\) vs best baseline .* \| (✅ met|❌ not met) \|", text)

    for name in ("hotpot_memory_tokens.png", "hotpot_gate_timeline.png", "locomo_coverage_500.png",
                 "locomo_coverage_2000.png"):
        png = tmp_path / report.ASSETS / name
        assert png.read_bytes()[:4] == b"\x89PNG"
        assert f"]({report.ASSETS}/{name})" in text


def test_missing_section_module_is_reported_not_faked(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_main, "_optional", lambda name: None)
    cfg = bench_main.Config(out_dir=tmp_path, only=("reliability",), progress=lambda line: None)
    text = bench_main.run_benchmark(cfg).read_text(encoding="utf-8")
    assert "**Not available in this run:** `bench/reliability.py` is not in the tree." in text
    assert "not available / failed (see section)" in text


def test_hotpot_section_against_an_openai_compatible_server_records_model_server_grammar_and_rate(tmp_path, monkeypatch):
    """``--model``/``--api-base``/``--constrain``: the section runs over HTTP and the report says what it ran against."""
    from poimen.testing.openai_server import FakeOpenAI

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as server:
        cfg = bench_main.Config(
            out_dir=tmp_path, cache_dir=tmp_path / "cache", hotpot_lengths=(800,), hotpot_items=1, chunk_tokens=64,
            embedder=HashEmbedder(), hotpot_build=tiny_hotpot, only=("hotpot",), progress=lambda line: None,
            model="openai/fake-gate", api_base=server.api_base, constrain="llamacpp",
        )
        text = bench_main.run_benchmark(cfg).read_text(encoding="utf-8")
        calls = server.calls
    assert calls > 0 and all("grammar" in r.payload for r in server.requests if "poimen-task: gate" in r.system)
    assert f"Model `openai/fake-gate` at {server.api_base}, gate grammar llamacpp " in text
    rate = re.search(r"model calls per second, parse-failed turns per item \(gated\) \| *\| *([0-9.]+), ([0-9.]+)", text)
    assert rate and float(rate.group(1)) > 0 and float(rate.group(2)) == 0.0
    assert "--constrain llamacpp" in text and "| server |" in text


def test_every_section_is_a_benchmark_and_a_failing_build_is_reported_failed(tmp_path, monkeypatch):
    from bench.section import FunctionBenchmark

    assert set(bench_main.BENCHMARKS) == set(bench_main.SECTIONS)

    def broken(cfg, assets):
        raise RuntimeError("the data folder is gone")

    monkeypatch.setitem(bench_main.BENCHMARKS, "speed", FunctionBenchmark("speed", "Speed", broken))
    path = bench_main.run_benchmark(bench_main.Config(quick=True, out_dir=tmp_path, only=("speed",),
                                                      progress=lambda line: None))
    text = path.read_text()
    assert "the section failed: `RuntimeError: the data folder is gone`" in text
    assert "not available / failed" in text  # the headline says so too; no figure is filled in
    monkeypatch.setattr(bench_main, "FAILED", [])
    assert bench_main.main(["--quick", "--only", "speed", "--out", str(tmp_path)]) == 1  # and the exit, for CI


def test_a_quick_run_reads_the_weights_suite_the_newest_dev_suites_and_every_blind_one():
    """CI's smoke run (`python -m bench --quick`) stays short as suites are added; the full report reads them all."""
    from bench.incident_suite import SUITES

    quick = bench_main.quick_suites(SUITES)
    dev = [s for s in SUITES if s[1] == "dev"]
    assert quick[0] == SUITES[0] and quick[1:1 + bench_main.QUICK_DEV_SUITES] == tuple(dev[-bench_main.QUICK_DEV_SUITES:])
    assert {s for s in SUITES if s[1] == "blind"} <= set(quick) and len(quick) < len(SUITES)
