"""Issue 27's acceptance for formats: a Slack export JSON, a Markdown timeline, a ticket CSV and a shell session,
as the tools export them, each run through ``mem run`` and through the Dagster build with no conversion by hand;
each yields incident cards that hold its labelled fixes, both entries card them alike, and lineage of a card line
reaches the file line that holds it."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from bench.incident_suite import SUITE, holds, load
from poimen.cli.app import app
from poimen.index.read import connect_read_only
from poimen.serve.service import ReadService

pytestmark = pytest.mark.slow

FILES = ("slack/payments-incidents.json", "pagerduty/INC-4821-checkout-db.md", "tickets/jira-platform.csv",
         "shell/oncall-2024-05-14.txt")
QUERY = "What failed, why, and what fixed it?"


def _cards(db: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Per stream, its card lines as (card sha, role, text)."""
    con = connect_read_only(db)
    rows = con.execute("SELECT i.stream_id, l.memory_sha, l.role, l.text FROM incident i JOIN incident_line l "
                       "USING (memory_sha) ORDER BY i.stream_id, l.memory_sha, l.line_no").fetchall()
    con.close()
    out: dict[str, list[tuple[str, str, str]]] = {}
    for stream, sha, role, text in rows:
        out.setdefault(stream, []).append((sha, role, text))
    return out


def _fixes_on_cards(cards: dict[str, list[tuple[str, str, str]]]) -> dict[str, int]:
    """Per file, how many of its labelled incidents have a card whose fix lines hold the labelled fix."""
    _, incidents = load(SUITE)
    found = {}
    for name in FILES:
        lines = cards.get(name, [])
        by_card: dict[str, list[str]] = {}
        for sha, role, text in lines:
            if role == "action":
                by_card.setdefault(sha, []).append(text)
        found[name] = sum(any(holds("\n".join(fix), inc.fix) for fix in by_card.values())
                          for inc in incidents if inc.stream == name)
    return found


@pytest.fixture
def sources(tmp_path) -> Path:
    root = tmp_path / "sources"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SUITE / name, root / name)
    return root


def test_mem_run_cards_each_export_and_a_card_line_reaches_its_file_line(tmp_path, sources, monkeypatch):
    monkeypatch.setenv("POIMEN_EMBEDDER", "hash")
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    monkeypatch.setenv("POIMEN_INCIDENTS", "1")
    log = tmp_path / "log"
    res = CliRunner().invoke(app, ["run", "--log", str(log), "--query", QUERY, *(str(sources / n) for n in FILES)])
    assert res.exit_code == 0, res.output
    cards = _cards(log / "index.duckdb")
    assert set(cards) == set(FILES)  # every export read as it is, none refused
    assert all(n >= 1 for n in _fixes_on_cards(cards).values()), _fixes_on_cards(cards)
    service = ReadService(log, log / "index.duckdb")
    for name in FILES:
        sha, _, text = next(line for line in cards[name] if line[1] == "action")
        shown = [ln for ln in service.show(sha).memory.lines if ln.text == text]
        assert shown and shown[0].unit is not None and shown[0].unit.where.found, (name, text)
        where = shown[0].unit.where
        file_lines = (sources / name).read_text(encoding="utf-8").splitlines()[where.first_line - 1:where.last_line]
        # the card line is in the file lines lineage names (a JSON or CSV cell's text, unescaped, for the exports)
        words = [w for w in text.split() if len(w) > 3 and w.isalnum()][:3]
        assert all(any(w in line for line in file_lines) for w in words), (name, text, file_lines)


def test_the_dagster_build_cards_the_same_exports(tmp_path, sources, monkeypatch):
    from pipelines.definitions import make_definitions
    from poimen.llm.client import ScriptedClient
    from poimen.testing.gate import scripted_gate
    from resources import CorpusResource, EmbedderResource, EventLogResource, ScriptedLLMResource, duckdb_resource

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster-home"))
    (tmp_path / "dagster-home").mkdir()
    queries = tmp_path / "queries.yaml"
    queries.write_text(f'queries:\n  - id: incidents\n    text: "{QUERY}"\n', encoding="utf-8")
    (tmp_path / "reference").mkdir()
    gate = scripted_gate(lambda p: None, symptom=lambda system, user: "<symptoms></symptoms>")
    resources = {
        "corpus": CorpusResource(sources=str(sources), reference=str(tmp_path / "reference"), queries=str(queries),
                                 chunk_tokens=800, incidents=True),
        "event_log": EventLogResource(root=str(tmp_path / "log")),
        "llm": ScriptedLLMResource.of(ScriptedClient([gate], repeat_last=True)),
        "embedder": EmbedderResource(model="hash"),
        "duckdb": duckdb_resource(tmp_path / "index.duckdb"),
    }
    defs = make_definitions(resources)
    result = defs.resolve_job_def("full_build").execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success
    cards = _cards(tmp_path / "index.duckdb")
    assert set(cards) == set(FILES)
    assert all(n >= 1 for n in _fixes_on_cards(cards).values()), _fixes_on_cards(cards)
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path == ["incidents"]]
    per_source = event.step_materialization_data.materialization.metadata
    assert per_source, "the incidents asset reports its incidents per source"
