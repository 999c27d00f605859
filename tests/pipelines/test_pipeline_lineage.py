"""A memory the Dagster build wrote resolves to its source's file lines, as one `mem run` wrote does (issue 25).

The build reads its chunks from the corpus's sources folder; `mem show` of its memories must find that folder
without being told (`--sources`), or every line reads "line unknown: source not found".
"""

import pytest

from pipeline_helpers import full_build, make_resources
from poimen.index.read import connect_read_only
from poimen.inputs.source_lines import SourceFinder, default_roots
from poimen.read.lineage import lineage


@pytest.mark.slow
def test_a_build_notes_its_sources_so_memory_lines_reach_the_file_line(tmp_path, corpus, monkeypatch):
    monkeypatch.delenv("POIMEN_SOURCES", raising=False)
    monkeypatch.chdir(tmp_path / "reference")  # not the sources folder: the working directory must not find them
    resources = make_resources(tmp_path, corpus)
    assert full_build(resources).success
    log = tmp_path / "log"
    assert str(corpus.sources_dir.resolve()) in (log / "sources.roots").read_text().splitlines()
    con = connect_read_only(tmp_path / "index.duckdb")
    (sha,) = con.execute("SELECT m.sha FROM memory m JOIN run r USING (run_id) WHERE m.final AND r.current "
                         "AND m.level = 'L1' ORDER BY m.sha LIMIT 1").fetchone()
    con.close()
    found = lineage(tmp_path / "index.duckdb", sha, SourceFinder(default_roots(log)))
    refs = [ln.unit.where for ln in found.memory.lines if ln.unit is not None]
    assert refs and all(ref.found for ref in refs), [ref.label() for ref in refs]
