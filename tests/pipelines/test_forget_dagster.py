"""`mem forget` after a Dagster build: no file under $DAGSTER_HOME (run storage, event logs, compute logs) nor under
the log's work folder holds the forgotten text. Dagster's metadata carries shas, counts and token counts only; the
text stays in the log, where the forget reaches it."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from pipeline_helpers import QUERIES, REPO, gate
from pipelines.definitions import make_definitions
from poimen.forget import Target, forget
from poimen.llm.client import ScriptedClient
from poimen.log.verify import verify
from resources import CorpusResource, EmbedderResource, EventLogResource, ScriptedLLMResource, duckdb_resource

CANARY = "Quetzalcoatl-Brightwater"  # a name in one source only, copied into memories by the scripted gate
SECRET = f"""\
# Payroll export incident

The payroll export failed with an error: the row of {CANARY} (7300 EUR gross) broke the CSV quoting.
Fixed by quoting every field of the export and re-running it at 04:10.
"""


def holding(root: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


@pytest.mark.slow
def test_a_forget_after_a_build_leaves_no_text_in_dagster_home_or_the_work_folder(tmp_path, monkeypatch):
    home = tmp_path / "dagster-home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    sources = tmp_path / "sources"
    sources.mkdir()
    shutil.copy(REPO / "examples" / "sources" / "postmortem-upload-413.md", sources)
    (sources / "payroll-export.md").write_text(SECRET, encoding="utf-8")
    shutil.copytree(REPO / "examples" / "reference", tmp_path / "reference")
    (tmp_path / "queries.yaml").write_text(QUERIES, encoding="utf-8")
    work = tmp_path / "log"
    resources = {
        "corpus": CorpusResource(sources=str(sources), reference=str(tmp_path / "reference"),
                                 queries=str(tmp_path / "queries.yaml"), chunk_tokens=400),
        "event_log": EventLogResource(root=str(work)),
        "llm": ScriptedLLMResource.of(ScriptedClient([gate], repeat_last=True)),
        "embedder": EmbedderResource(model="hash"),
        "duckdb": duckdb_resource(work / "index.duckdb"),
    }
    instance = dg.DagsterInstance.get()  # sqlite run and event-log storage under $DAGSTER_HOME, as `dagster dev` keeps
    try:
        result = make_definitions(resources).resolve_job_def("full_build").execute_in_process(instance=instance)
        assert result.success
        needle = CANARY.encode()
        assert holding(work, needle), "the build should have put the text into the log (else this test proves nothing)"
        assert list(home.rglob("*.db")), "the build should have written Dagster's run storage"
        assert "413" in (work / "index.duckdb").read_bytes().decode("latin-1")  # the other source is indexed

        report = forget(work, Target(source=str(sources / "payroll-export.md")), reason="test", by="test")
        assert report.forget_run and report.index_rebuilt and verify(work).ok
        assert holding(home, needle) == []
        assert holding(work, needle) == []
    finally:
        instance.dispose()
