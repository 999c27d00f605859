"""Streams keyed by path: two files with one name in two folders stay two current streams, and both memories
reach `mem ask` and `mem lookup`; files of one folder keep their bare names (and so their old run ids)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.inputs.chunking import source_id, sources_root
from poimen.cli.app import app
from poimen.write.core import RunRequest, run_loops
from poimen.errors import SourceError
from poimen.llm.client import ScriptedClient
from poimen.llm.offline import respond
from poimen.log.runs import current, read_runs
from poimen.log.store import EventLog
from poimen.log.verify import verify

QUERY = "What failed, and how was it fixed?"
ALPHA = "2026-04-01T02:00:00Z ERROR disk full on node alpha-7\n2026-04-01T02:09:00Z rotated the logs on alpha-7\n"
BETA = "2026-04-02T10:00:00Z ERROR certificate expired on gateway beta-3\n2026-04-02T10:20:00Z renewed it on beta-3\n"

runner = CliRunner()


def mem(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def two_apps(tmp_path):
    for folder, text in (("a", ALPHA), ("b", BETA)):
        (tmp_path / "src" / folder).mkdir(parents=True)
        (tmp_path / "src" / folder / "app.log").write_text(text)
    return tmp_path / "src", tmp_path / "log"


def current_l1(log: Path) -> dict[str, str]:
    """stream id -> final memory sha of each current L1 run (the runs read model)."""
    return {r.stream_id: r.final_memory_sha for (level, _, _), r in current(read_runs(EventLog(log))).items()
            if level == "L1"}


def test_same_named_files_in_two_folders_stay_two_current_streams(two_apps):
    src, log = two_apps
    mem("run", "--log", log, "--query", QUERY, src / "a" / "app.log", src / "b" / "app.log")
    finals = current_l1(log)
    assert set(finals) == {"a/app.log", "b/app.log"} and all(finals.values())
    rows = mem("sql", "--log", log, "--csv", "SELECT stream_id FROM run WHERE level = 'L1' AND current ORDER BY 1")
    assert rows.splitlines()[1:] == ["a/app.log", "b/app.log"]
    answer = mem("ask", "--log", log, QUERY)
    assert "alpha-7" in answer and "beta-3" in answer
    drew_on = next(line for line in answer.splitlines() if line.startswith("from ")).split()[1:]
    assert all(sha[:12] in drew_on for sha in finals.values())
    standing = mem("ask", "--log", log, "--query", QUERY)
    assert all(f"memory {sha}" in standing for sha in finals.values())
    for text, sha in (("disk full on node alpha-7", finals["a/app.log"]), ("certificate expired beta-3", finals["b/app.log"])):
        assert sha in mem("lookup", "--log", log, "--json", "-k", "3", text)
    assert verify(log).ok


def test_files_of_one_folder_keep_their_bare_names_and_run_ids(two_apps, tmp_path):
    src, _ = two_apps
    (src / "a" / "db.log").write_text("ERROR connection refused to db-1\n")
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    files = [src / "a" / "app.log", src / "a" / "db.log"]
    implicit = run_loops(RunRequest(root=tmp_path / "one", sources=files, query=QUERY), client=client)
    explicit = run_loops(RunRequest(root=tmp_path / "two", sources=files, query=QUERY, sources_root=src / "a"),
                         client=client)  # how the Dagster corpus (and the old per-file name) spelled them
    assert [o.stream_id for o in implicit.outcomes] == ["app.log", "db.log"]
    assert [o.run_id for o in implicit.outcomes] == [o.run_id for o in explicit.outcomes]


def test_a_log_with_the_old_colliding_ids_still_reads_and_new_content_gets_path_ids(two_apps):
    src, log = two_apps
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    for folder in ("a", "b"):  # the old behaviour: each file named by its name alone, so both are "app.log"
        assert run_loops(RunRequest(root=log, sources=[src / folder / "app.log"], query=QUERY), client=client).ok
    assert set(current_l1(log)) == {"app.log"}  # b's run superseded a's: the bug path ids fix
    assert verify(log).ok
    # Run ids hash content, not names: unchanged files reuse their sealed runs (under the old id) ...
    both = [src / "a" / "app.log", src / "b" / "app.log"]
    assert {o.status for o in run_loops(RunRequest(root=log, sources=both, query=QUERY), client=client).outcomes} \
        == {"skipped"}
    # ... and a file whose content changed gets a new run under its path id, current beside the old one.
    (src / "a" / "app.log").write_text(ALPHA + "2026-04-01T03:00:00Z ERROR disk full again on alpha-7\n")
    assert run_loops(RunRequest(root=log, sources=both, query=QUERY), client=client).ok
    assert set(current_l1(log)) == {"app.log", "a/app.log"}
    assert verify(log).ok


def test_the_root_of_sources_that_share_no_folder_gives_absolute_ids(tmp_path):
    f = tmp_path / "x.md"
    f.write_text("text")
    assert source_id(f, Path("/")) == f.resolve().as_posix()
    assert sources_root([f, tmp_path / "missing.md", tmp_path]) == tmp_path.resolve()  # only files count
    assert source_id(f, sources_root([f])) == "x.md"
    with pytest.raises(SourceError, match="outside the sources root"):
        source_id(f, tmp_path / "elsewhere")


def test_an_explicit_root_names_streams_relative_to_it(two_apps):
    src, log = two_apps
    mem("run", "--log", log, "--root", src.parent, "--query", QUERY, src / "a" / "app.log")
    assert set(current_l1(log)) == {"src/a/app.log"}
