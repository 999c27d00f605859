"""Fixtures of the Dagster code location's tests: a Dagster home and the example corpus, both under tmp_path."""

import shutil

import pytest

from pipeline_helpers import QUERIES, REPO
from resources import CorpusResource


@pytest.fixture
def dagster_home(tmp_path, monkeypatch):
    """$DAGSTER_HOME in tmp_path. A module whose builds need it says so: ``pytest.mark.usefixtures("dagster_home")``
    (not autouse: some tests make their own, or start a process with an environment of their own)."""
    home = tmp_path / "dagster-home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.fixture
def corpus(tmp_path) -> CorpusResource:
    """Three of the example sources, the reference folder and two standing queries, copied under tmp_path."""
    sources = tmp_path / "sources"
    sources.mkdir()
    for name in ("postmortem-upload-413.md", "adr-007-queue-choice.md", "incident-channel.jsonl"):
        shutil.copy(REPO / "examples" / "sources" / name, sources / name)
    shutil.copytree(REPO / "examples" / "reference", tmp_path / "reference")
    (tmp_path / "queries.yaml").write_text(QUERIES, encoding="utf-8")
    return CorpusResource(sources=str(sources), reference=str(tmp_path / "reference"),
                          queries=str(tmp_path / "queries.yaml"), chunk_tokens=400, incidents=True)
