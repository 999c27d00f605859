"""The benchmark report: goal-vs-measured tables, the header facts and the plots it links."""

from __future__ import annotations

from pathlib import Path

from bench import report


def _fixture(tmp_path: Path) -> dict:
    assets = tmp_path / report.ASSETS
    memory = report.line_plot(assets / "memory.png", {"gated": [10, 40, 40, 90], "ungated": [30, 80, 150, 260]},
                              "memory tokens per turn", hline=100)
    gates = report.gate_timeline(assets / "gates.png", [False, True, False, True], "gates", positives=[False, True, False, False])
    bars = report.grouped_bars(assets / "bars.png", ["multi-hop", "temporal"], {"bm25": [0.4, 0.5], "dense": [0.3, 0.6]}, "coverage")
    return {
        "hotpot": {
            "title": "HotpotQA retention",
            "rows": [("retention @7K", ">= 0.80", 0.85, True), ("retention @448K", ">= 0.80", 0.42, False),
                     ("wall time", "", "3.0 s", None)],
            "tables": [{"title": "per length", "columns": ["tokens", "retention"], "rows": [[7000, 0.85], [448000, 0.42]]}],
            "plots": [memory, gates],
            "notes": "Toy numbers.",
        },
        "locomo": report.Section(title="LoCoMo coverage", rows=[("coverage @500", "> bm25", 0.6, True)], plots=[bars]),
    }


def test_report_tables_header_and_plots(tmp_path):
    sections = _fixture(tmp_path)
    meta = {"git_sha": "0123abc-dirty", "duration_s": 75.5, "date": "2025-01-02 03:04 UTC", "title": "fixture"}
    path = report.write_report(sections, tmp_path, meta)
    assert path == tmp_path / "REPORT.md"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()

    assert lines[0] == "# fixture"
    assert "- Git sha: `0123abc-dirty`" in lines
    assert "- Total duration: 1 min 15.5 s" in lines
    assert any(line.startswith("- Machine: ") and " cores, Python 3." in line for line in lines)
    assert "- Date: 2025-01-02 03:04 UTC" in lines

    assert lines.count("| metric | goal | measured | met? |") == 2
    assert "| retention @7K | >= 0.80 | 0.850 | ✅ met |" in lines
    assert "| retention @448K | >= 0.80 | 0.420 | ❌ not met |" in lines
    assert "| wall time |  | 3.0 s | — |" in lines
    assert "| tokens | retention |" in lines and "| 448000 | 0.420 |" in lines
    assert text.index("## HotpotQA retention") < text.index("## LoCoMo coverage")

    for name in ("memory.png", "gates.png", "bars.png"):
        png = tmp_path / report.ASSETS / name
        assert png.exists() and png.read_bytes()[:4] == b"\x89PNG"
        assert f"]({report.ASSETS}/{name})" in text


def test_git_sha_of_this_repository():
    sha = report.git_sha(Path(__file__).resolve().parents[2])
    assert sha == "unknown" or len(sha.removesuffix("-dirty")) == 40


def test_git_sha_outside_a_repository(tmp_path):
    assert report.git_sha(tmp_path) == "unknown"
