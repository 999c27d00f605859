"""`mem run` keeps a called model's replies in ``<log>/cache/llm`` (the pipeline's ``CachingClient``): a rebuilt or
resumed run asks the model only for what it has not answered, ``--no-cache`` asks every time, ``mem forget`` scrubs
the cache with the log, and neither the offline engine nor a log on an object store leaves a cache behind.

The model is the loopback OpenAI-compatible server (through litellm, as a real provider), which answers as the
offline engine would and counts every request.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.llm.client import CachingClient, ModelConfig, OfflineClient, client_for, reply_cache
from poimen.log.verify import verify
from poimen.testing.crash import run_mem
from poimen.testing.openai_server import FakeOpenAI

QUERY = "What caused the upload failure, and how was it fixed?"
SECRET = "The upload failure was caused by Dana Kowalski's 7300 EUR payroll file; deleting it fixed the upload."
INCIDENT = f"""# Upload failure

Uploads of files over 1 MB failed with 413 Request Entity Too Large after the ingress chart upgrade.

The team lunch was pizza again, and nobody remembered the drinks.

{SECRET}

The new chart dropped the proxy-body-size annotation, so nginx fell back to client_max_body_size 1m.

Restoring proxy-body-size: 64m on the ingress fixed it; the upload error rate went back to zero.
"""


pytestmark = pytest.mark.usefixtures("fake_api_key")


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "src" / "upload.md"
    path.parent.mkdir()
    path.write_text(INCIDENT, encoding="utf-8")
    return path


def run_args(log: Path | str, source: Path, server: FakeOpenAI | None, *extra: str) -> list[str]:
    model = ["--model", "openai/fake-gate", "--api-base", server.api_base] if server else []
    return ["run", "--log", str(log), *model, "--query", QUERY, "--chunk-tokens", "40", "--concurrency", "1",
            "--no-index", *extra, str(source)]


def mem_run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


def segments(log: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (log / "segments").glob("*.parquet")}


def cached(log: Path) -> list[Path]:
    return sorted(reply_cache(log).rglob("*.json"))


def delete_log_keeping_cache(log: Path) -> None:
    """The user deletes the log (its index, segments, journals, chunk files) to rebuild it; the cache stays."""
    for path in log.iterdir():
        if path.name != "cache":
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def test_a_rebuilt_log_asks_the_model_nothing_and_seals_the_same_bytes(tmp_path, server, source):
    log = tmp_path / "log"
    mem_run(*run_args(log, source, server))
    asked = server.calls
    assert asked >= 3 and len(cached(log)) == asked  # one reply per turn, each kept
    first = segments(log)
    delete_log_keeping_cache(log)
    mem_run(*run_args(log, source, server))
    assert server.calls == asked, "every turn of the rebuild must be answered from the cache"
    assert segments(log) == first


def test_no_cache_asks_the_model_every_time_and_keeps_nothing(tmp_path, server, source):
    log = tmp_path / "log"
    mem_run(*run_args(log, source, server))
    asked = server.calls
    delete_log_keeping_cache(log)
    mem_run(*run_args(log, source, server, "--no-cache"))
    assert server.calls == 2 * asked
    fresh = tmp_path / "fresh"
    mem_run(*run_args(fresh, source, server, "--no-cache"))
    assert server.calls == 3 * asked and not reply_cache(fresh).exists()


def test_a_run_killed_as_it_seals_resumes_with_its_last_turn_from_the_cache(tmp_path, server, source):
    """Killed after the last turn's reply came back but before anything of that turn was written: the resume replays
    the journal and finds the missing turn's reply in the cache, so the model is not asked (nor paid) again."""
    log = tmp_path / "log"
    code, out = run_mem(run_args(log, source, server), tmp_path / "killed.out",
                        {"POIMEN_TEST_KILL_AT": "before_loop_seal"})
    assert code == -signal.SIGKILL, out
    report = verify(log)
    assert report.ok and report.resumable_runs == 1, report.problems
    asked = server.calls
    mem_run(*run_args(log, source, server, "--resume"))
    assert server.calls == asked, "the resumed turn must be answered from the cache"
    whole = tmp_path / "whole"
    mem_run(*run_args(whole, source, server))
    assert segments(log) == segments(whole)


def test_forget_with_the_log_as_work_dir_scrubs_the_replies_that_quote_the_text(tmp_path, server, source):
    log = tmp_path / "log"
    mem_run(*run_args(log, source, server))
    assert any(SECRET in p.read_text(encoding="utf-8") for p in cached(log)), "the gate copies the line verbatim"
    result = CliRunner().invoke(app, ["forget", "--log", str(log), "--work-dir", str(log), "--source", "upload.md"])
    assert result.exit_code == 0, result.output
    assert not any(SECRET in p.read_text(encoding="utf-8") for p in cached(log))


def test_the_offline_engine_is_never_cached(tmp_path, source):
    assert isinstance(client_for(ModelConfig("poimen/extractive", cache_dir=tmp_path / "c")), OfflineClient)
    assert isinstance(client_for(ModelConfig("openai/fake-gate", api_base="http://127.0.0.1:9/v1",
                                             cache_dir=tmp_path / "c")), CachingClient)
    log = tmp_path / "log"
    mem_run(*run_args(log, source, None))
    assert segments(log) and not reply_cache(log).exists()


def test_a_log_on_an_object_store_leaves_no_cache_on_this_machine(tmp_path, server, source, monkeypatch):
    from poimen.testing.s3_server import LocalS3

    monkeypatch.chdir(tmp_path)
    with LocalS3() as s3:
        for key, value in s3.env.items():
            monkeypatch.setenv(key, value)
        mem_run(*run_args(s3.uri("cached"), source, server))
    assert server.calls >= 3
    assert not [p for p in tmp_path.rglob("llm") if p.parent.name == "cache"]


def test_the_pipeline_keeps_replies_in_the_event_logs_work_folder(tmp_path, server, source):
    """The pipeline's cache sits where `mem forget --work-dir <the log's work folder>` scrubs it, beside the chunk
    files and the index, not in $POIMEN_HOME, where no forget of this log would look."""
    import os

    import dagster as dg

    from pipelines.definitions import make_definitions
    from resources import CorpusResource, EmbedderResource, EventLogResource, LLMResource, duckdb_resource

    (tmp_path / "reference").mkdir()
    queries = tmp_path / "queries.yaml"
    queries.write_text(f"queries:\n  - id: upload\n    text: \"{QUERY}\"\n", encoding="utf-8")
    resources = {
        "corpus": CorpusResource(sources=str(source.parent), reference=str(tmp_path / "reference"),
                                 queries=str(queries), chunk_tokens=40),
        "event_log": EventLogResource(root=str(tmp_path / "log")),
        "llm": LLMResource(model="openai/fake-gate", api_base=server.api_base, concurrency=1),
        "embedder": EmbedderResource(model="hash"),
        "duckdb": duckdb_resource(tmp_path / "index.duckdb"),
    }
    result = make_definitions(resources).resolve_job_def("full_build").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), asset_selection=[dg.AssetKey("chunks"), dg.AssetKey("l1_memories")])
    assert result.success and server.calls >= 3
    assert len(cached(tmp_path / "log")) == server.calls
    assert not reply_cache(Path(os.environ["POIMEN_HOME"])).exists()
