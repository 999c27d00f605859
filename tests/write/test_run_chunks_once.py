"""`mem run` cuts each source into chunks once: the L0 record and every query's loop read the chunks file.

Before, a source was chunked once to learn its chunk shas, again for its L0 stream record and again for each
query's loop. Now ``open_sources`` writes each source's chunks file once (as the build's `chunks` step does) in a
folder that lasts as long as the runs, and every reader of the stream reads that file.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import reply

from poimen.inputs import chunking
from poimen.llm.client import ScriptedClient
from poimen.log.runs import loop_runs, read_runs
from poimen.log.store import EventLog
from poimen.write.core import RunRequest, run_loops

TEXT = "\n\n".join(f"Paragraph {i}: the upload API returned 413 for files over 1 MB on node-{i}." for i in range(8))
QUERIES = """\
queries:
  - id: errors
    text: "Which errors occurred?"
  - id: fixes
    text: "How was the upload limit fixed?"
"""


@pytest.fixture
def sources(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("api.md", "edge.md"):
        (src / name).write_text(TEXT.replace("upload", name[:-3]))
    (tmp_path / "queries.yaml").write_text(QUERIES)
    return sorted(src.iterdir()), tmp_path / "queries.yaml"


@pytest.fixture
def chunkings(monkeypatch):
    """How many times each source was read into chunks (every chunking of a file reads its records once)."""
    calls: Counter = Counter()
    real = chunking.records

    def counting(path, *args, **kwargs):
        calls[Path(path).name] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(chunking, "records", counting)
    return calls


def test_each_source_is_chunked_once_for_its_record_and_every_query(tmp_path, sources, chunkings):
    files, queries = sources
    log = tmp_path / "log"
    result = run_loops(RunRequest(root=log, sources=files, queries=queries, chunk_tokens=32),
                       ScriptedClient([reply("no")], repeat_last=True))
    assert result.ok and len(result.outcomes) == 4 and all(o.chunks_seen > 2 for o in result.outcomes)
    assert chunkings == {"api.md": 1, "edge.md": 1}
    runs = read_runs(EventLog(log))
    assert {r.stream_id for r in runs if r.level == "L0"} == {"api.md", "edge.md"}  # the L0 records read the file too
    assert len(loop_runs(runs, "L1")) == 4
    assert not (log / "chunks").exists(), "the chunks files are the command's, not a derivative left in the log"


def test_streams_named_by_absolute_paths_keep_their_chunks_out_of_the_sources_folder(tmp_path, sources, chunkings):
    files, queries = sources
    result = run_loops(RunRequest(root=tmp_path / "log", sources=files, queries=queries, chunk_tokens=32,
                                  sources_root=Path("/")), ScriptedClient([reply("no")], repeat_last=True))
    assert result.ok and {o.stream_id for o in result.outcomes} == {str(f.resolve()) for f in files}
    assert sorted(p.name for p in files[0].parent.iterdir()) == ["api.md", "edge.md"]
