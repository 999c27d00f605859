"""What the Dagster code location's tests share: the example corpus's queries, a scripted gate, a build's resources
under tmp_path, the full build, and an asset's materialization metadata (the fixtures are in conftest.py).

Offline throughout: the gate is a function of the prompt, so concurrent runs get the same replies whatever their
order, and the embedder is the hash embedder.
"""

from pathlib import Path

import dagster as dg

from pipelines.definitions import make_definitions
from poimen.llm.client import ScriptedClient
from poimen.testing.gate import GatePrompt, scripted_gate
from resources import CorpusResource, EmbedderResource, EventLogResource, ScriptedLLMResource, duckdb_resource

REPO = Path(__file__).resolve().parents[2]
KEYWORDS = ("error", "fail", "413", "timeout", "rollback", "decid")
QUERIES = """queries:
  - id: root-causes
    text: "What caused each failure, and how was it fixed?"
  - id: decisions
    text: "Which design decisions were made, and why?"
"""


def first_failure_line(p: GatePrompt) -> str | None:
    """Open on chunks that mention a failure word; the memory gains the chunk's first such line (bounded)."""
    lines = [ln.strip() for ln in p.chunk.splitlines() if any(k in ln.lower() for k in KEYWORDS)]
    return (p.memory + "\n" + lines[0][:160]).strip() if lines else None


# To the symptom-projection prompt it answers nothing (a valid answer: no symptom vector).
gate = scripted_gate(first_failure_line, symptom=lambda system, user: "<symptoms></symptoms>")


def make_resources(tmp_path: Path, corpus: CorpusResource, embedder: str = "hash") -> dict:
    return {
        "corpus": corpus,
        "event_log": EventLogResource(root=str(tmp_path / "log")),
        "llm": ScriptedLLMResource.of(ScriptedClient([gate], repeat_last=True)),
        "embedder": EmbedderResource(model=embedder),
        "duckdb": duckdb_resource(tmp_path / "index.duckdb"),
    }


def full_build(resources: dict) -> dg.ExecuteInProcessResult:
    defs = make_definitions(resources)
    return defs.resolve_job_def("full_build").execute_in_process(instance=dg.DagsterInstance.ephemeral())


def materialization(result, key: str) -> dict:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path == [key]]
    return event.step_materialization_data.materialization.metadata
