"""Write bench/REPORT.md: per section a goal-vs-measured table, extra tables and plots.

Why: a benchmark run is only worth keeping when a reader can see, in one page,
which goals were met, on what machine, at which commit, and how long it took.
``write_report`` is a pure function of its inputs (apart from asking git for
the sha when ``meta`` does not give one), so a test can run it on a fixture.

Sections are a mapping ``key -> Section`` (or a plain dict with the same
fields); rows are ``(metric, goal, measured, met)`` where ``met`` is True,
False or None (no goal to meet).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MET, NOT_MET, NO_GOAL = "✅ met", "❌ not met", "—"
ASSETS = "report_assets"


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[object]]
    title: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    rows: Sequence[tuple] = ()  # (metric, goal, measured, met)
    tables: Sequence[Table] = ()
    plots: Sequence[Path | str] = ()
    notes: str = ""


def _section(value: Section | Mapping) -> Section:
    if isinstance(value, Section):
        return value
    tables = [t if isinstance(t, Table) else Table(**t) for t in value.get("tables", ())]
    return Section(
        title=value["title"],
        rows=[tuple(r) for r in value.get("rows", ())],
        tables=tables,
        plots=list(value.get("plots", ())),
        notes=value.get("notes", ""),
    )


def git_sha(repo: Path | str = ".") -> str:
    """``git rev-parse HEAD`` plus ``-dirty`` when tracked files differ; "unknown" outside git.

    ``--no-optional-locks`` keeps ``git status`` from rewriting the index while
    other processes (or other engineers) are committing.
    """
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        status = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{sha}-dirty" if status.strip() else sha


def machine() -> dict:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _cell(value: object) -> str:
    if isinstance(value, float):
        text = f"{value:.3f}"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _mark(met: bool | None) -> str:
    return NO_GOAL if met is None else (MET if met else NOT_MET)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    minutes, sec = divmod(float(seconds), 60)
    return f"{int(minutes)} min {sec:.1f} s" if minutes else f"{sec:.1f} s"


def write_report(sections: Mapping[str, Section | Mapping], out_dir: Path | str, meta: Mapping | None = None) -> Path:
    """Write ``out_dir/REPORT.md`` and return its path.

    ``meta`` may give ``title``, ``date`` (ISO string), ``git_sha``, ``repo``
    (where to ask git), ``duration_s`` and ``machine`` (a dict); what it leaves
    out is measured here. Plot paths are linked relative to ``out_dir``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    box = {**machine(), **meta.get("machine", {})}
    sha = meta.get("git_sha") or git_sha(meta.get("repo", "."))
    date = meta.get("date") or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {meta.get('title', 'poimen benchmark report')}",
        "",
        f"- Machine: {box['cores']} cores, Python {box['python']}, {box['platform']}",
        f"- Date: {date}",
        f"- Git sha: `{sha}`",
        f"- Total duration: {_duration(meta.get('duration_s'))}",
        f"- Command: `{meta.get('command', ' '.join(sys.argv))}`",
        "",
    ]
    for value in sections.values():
        section = _section(value)
        lines += [f"## {section.title}", ""]
        if section.notes:
            lines += [section.notes.strip(), ""]
        if section.rows:
            rows = [(m, g, v, _mark(met)) for m, g, v, met in section.rows]
            lines += _markdown_table(("metric", "goal", "measured", "met?"), rows) + [""]
        for table in section.tables:
            if table.title:
                lines += [f"**{table.title}**", ""]
            lines += _markdown_table(table.columns, table.rows) + [""]
        for plot in section.plots:
            plot = Path(plot)
            try:
                link = plot.resolve().relative_to(out_dir.resolve()).as_posix()
            except ValueError:
                link = plot.as_posix()
            lines += [f"![{plot.stem}]({link})", ""]
    path = out_dir / "REPORT.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


# --- plots (matplotlib, Agg: no display needed) ---------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def line_plot(path: Path | str, series: Mapping[str, Sequence[float]], title: str, xlabel: str = "turn",
              ylabel: str = "memory tokens", x: Sequence[float] | None = None, hline: float | None = None) -> Path:
    """One line per series (e.g. memory tokens per turn, gated vs ungated); ``hline`` marks a budget."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for name, ys in series.items():
        ax.plot(list(x) if x is not None else range(1, len(ys) + 1), list(ys), label=name, linewidth=1.4)
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1, label=f"budget {hline:g}")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, path)


def gate_timeline(path: Path | str, gates: Sequence[bool], title: str, positives: Sequence[bool] | None = None) -> Path:
    """Turn vs gate open (update) / closed; ``positives`` marks the chunks that hold gold evidence."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 2.2))
    turns = range(1, len(gates) + 1)
    ax.step(turns, [int(g) for g in gates], where="mid", color="tab:blue", label="gate open")
    if positives is not None:
        hits = [t for t, p in zip(turns, positives) if p]
        ax.scatter(hits, [1.1] * len(hits), marker="v", color="tab:red", label="gold evidence", zorder=3)
    ax.set(title=title, xlabel="turn", yticks=[0, 1], yticklabels=["closed", "open"], ylim=(-0.2, 1.3))
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, path)


def grouped_bars(path: Path | str, groups: Sequence[str], series: Mapping[str, Sequence[float]], title: str,
                 ylabel: str = "evidence coverage") -> Path:
    """Bars per group (e.g. a LoCoMo category), one bar per series (method) within each group."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, list(values), width=width, label=name)
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set(title=title, ylabel=ylabel, ylim=(0, 1.0 if all(0 <= v <= 1 for vs in series.values() for v in vs) else None))
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)
