"""Issue 10 acceptance: an error query over real logs nobody in this project wrote.

The loghub 2k samples of OpenStack and Zookeeper are read in place from
``../shared/bench/failures/loghub`` with the default (offline) engine, for
"Which errors occurred and what component failed?". The final memory must be
made of the log's WARN/ERROR lines, hold no line twice, and not be many copies
of one template (drain3 masking, `poimen.signatures.masking.template`).

Found before the fix: the OpenStack memory held only INFO lines ("VM Started",
"VM Paused") and none of the 31 WARNING lines; the Zookeeper memory was 17
copies of one WARN template.

Marked slow: the engine scores units with the configured embedder (MiniLM).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.log.store import EventLog
from poimen.log.runs import loop_runs, read_runs
from poimen.signatures.masking import template

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "bench" / "failures" / "loghub"
QUERY = "Which errors occurred and what component failed?"
# The level field of both formats: "<time>.<ms> <pid> LEVEL" (OpenStack), "<time>,<ms> - LEVEL" (Zookeeper).
LEVEL = re.compile(r"\d{2}:\d{2}:\d{2}[.,]\d{3} (?:\d+ |- )(?P<level>[A-Z]+)\b")
SEVERE = {"WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"}
# A stated bar: most lines of an error query's memory are the log's WARN/ERROR lines.
MIN_SEVERE_SHARE = 0.5
# Near-duplicates are kept once (with a count); allow a little slack for masks that differ from the engine's.
MAX_COPIES_OF_ONE_TEMPLATE = 3
MIN_ZOOKEEPER_SEVERE_TEMPLATES = 4  # the sample has 13 distinct WARN/ERROR templates

pytestmark = pytest.mark.slow


def sample(name: str) -> Path:
    path = LOGHUB / name / f"{name}_2k.log"
    if not path.is_file():
        pytest.skip(f"loghub sample not found at {path} (the shared bench data sits beside the repo)")
    return path


def level(line: str) -> str | None:
    m = LEVEL.search(line)
    return m.group("level") if m else None


def severe(line: str) -> bool:
    return level(line) in SEVERE


SAMPLES = ["OpenStack", "Zookeeper"]


def read_for_the_error_query(name: str, home: Path) -> list[str]:
    """The final memory's non-blank lines after one `mem run` of the error query over a sample."""
    log_path = sample(name)
    res = CliRunner().invoke(app, ["run", "--query", QUERY, str(log_path)], env={"POIMEN_HOME": str(home), "POIMEN_EMBEDDER": "all-MiniLM-L6-v2"})
    if res.exit_code != 0:
        raise AssertionError(f"mem run over {name} exited {res.exit_code}:\n{res.output[-3000:]}")
    runs = [s for s in loop_runs(read_runs(EventLog(home))) if s.query_text == QUERY and s.stream_id == log_path.name]
    if len(runs) != 1:
        raise AssertionError(f"expected one run of the query over {log_path.name}, found {len(runs)}")
    return [line.strip() for line in runs[0].final_memory.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def memory_of(tmp_path_factory):
    """memory_of(name): that sample's memory lines, each sample read once per module (a failed run fails once)."""
    done: dict[str, list[str] | AssertionError] = {}

    def get(name: str) -> list[str]:
        if name not in done:
            try:
                done[name] = read_for_the_error_query(name, tmp_path_factory.mktemp(f"loghub-{name}") / "poimen-home")
            except AssertionError as exc:
                done[name] = exc
        if isinstance(done[name], AssertionError):
            pytest.fail(str(done[name]))
        return done[name]

    return get


def describe(lines: list[str], n: int = 8) -> str:
    levels = Counter(level(line) or "?" for line in lines)
    shown = "\n".join(f"  | {line[:180]}" for line in lines[:n])
    return f"{len(lines)} lines, levels {dict(levels)}:\n{shown}" + (f"\n  | … {len(lines) - n} more" if len(lines) > n else "")


@pytest.mark.parametrize("name", SAMPLES)
def test_memory_is_mostly_warn_and_error_lines(memory_of, name):
    lines = memory_of(name)
    assert lines, f"{name}: the final memory is empty (no gate opened)"
    share = sum(map(severe, lines)) / len(lines)
    assert share >= MIN_SEVERE_SHARE, (
        f"{name}: {share:.0%} of the memory's lines are WARN/ERROR, want ≥ {MIN_SEVERE_SHARE:.0%}; {describe(lines)}")


@pytest.mark.parametrize("name", SAMPLES)
def test_memory_holds_no_line_twice(memory_of, name):
    twice = {line[:160]: n for line, n in Counter(memory_of(name)).items() if n > 1}
    assert not twice, f"{name}: lines held more than once: {twice}"


@pytest.mark.parametrize("name", SAMPLES)
def test_memory_is_not_copies_of_one_template(memory_of, name):
    lines = memory_of(name)
    assert lines, f"{name}: the final memory is empty (no gate opened)"
    shape, copies = Counter(template(line) for line in lines).most_common(1)[0]
    assert copies <= MAX_COPIES_OF_ONE_TEMPLATE, (
        f"{name}: {copies} of the memory's {len(lines)} lines share the template {shape[:160]!r}")


def test_openstack_memory_covers_each_warning_kind(memory_of):
    """The sample has two WARNING templates (30x "Unknown base file", 1x power-state sync); both belong."""
    source = [line.strip() for line in sample("OpenStack").read_text(encoding="utf-8").splitlines() if severe(line)]
    wanted = {template(line) for line in source}
    assert len(source) == 31 and len(wanted) == 2, f"the sample changed: {len(source)} lines, {len(wanted)} templates"
    lines = memory_of("OpenStack")
    missing = sorted(wanted - {template(line) for line in lines if severe(line)})
    assert not missing, f"OpenStack: no memory line of the WARNING templates {[m[:120] for m in missing]}; {describe(lines)}"


def test_zookeeper_memory_names_several_kinds_of_failure(memory_of):
    lines = memory_of("Zookeeper")
    kinds = Counter(template(line) for line in lines if severe(line))
    assert len(kinds) >= MIN_ZOOKEEPER_SEVERE_TEMPLATES, (
        f"Zookeeper: the memory holds {len(kinds)} distinct WARN/ERROR templates, want >= "
        f"{MIN_ZOOKEEPER_SEVERE_TEMPLATES}: { {k[:100]: n for k, n in kinds.items()} }")
