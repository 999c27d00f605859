"""Bad input: each bad source gets one clear line naming the file; the other sources still seal; nothing half-written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import loop_run_ids

from poimen.testing.bad_sources import bad_sources
from poimen.inputs.chunking import check_source, iter_chunks
from poimen.write.core import RunRequest, run_loops
from poimen.errors import SourceError
from poimen.llm.client import ScriptedClient
from poimen.llm.offline import respond
from poimen.log.store import EventLog
from poimen.log.verify import verify

QUERY = "What caused the upload failure, and how was it fixed?"
GOOD = "The upload failure was caused by client_max_body_size at 1m. It was fixed by raising it to 64m.\n"


@pytest.fixture
def corpus(tmp_path):
    d = tmp_path / "sources"
    d.mkdir()
    good = [d / "good-1.md", d / "good-2.log"]
    good[0].write_text(GOOD)
    good[1].write_text("2024-05-01T09:14:03Z ERROR upload failed: 413 Request Entity Too Large\n" + GOOD)
    return d, good, bad_sources(d)


@pytest.mark.parametrize("name", [
    "binary", "invalid-utf8", "empty", "whitespace-only", "deeply-nested-json", "symlink-loop", "missing",
    "unsupported-type", "directory"])
def test_bad_source_gets_one_line_naming_it(corpus, name):
    _, _, bad = corpus
    path, what = bad[name]
    with pytest.raises(SourceError) as info:
        list(iter_chunks(path))
    message = str(info.value)
    assert str(path) in message and what in message and "\n" not in message


def test_other_sources_still_seal_and_nothing_is_half_written(tmp_path, corpus):
    d, good, bad = corpus
    sources = [good[0], *(p for p, _ in bad.values()), good[1]]
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=sources, query=QUERY, concurrency=2), client=client)
    assert len(result.source_errors) == len(bad)
    for (path, what), line in zip(bad.values(), result.source_errors):
        assert str(path) in line and what in line and "\n" not in line
    assert sorted(o.stream_id for o in result.outcomes) == ["good-1.md", "good-2.log"]
    assert all(o.status == "sealed" and o.chunks_used == 1 for o in result.outcomes)
    log = EventLog(root)
    assert not log.journals() and len(loop_run_ids(log)) == 2
    assert not list(log.segment_dir.glob(".*")), "no temp segment left"
    assert verify(root).ok


def test_path_outside_the_sources_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text(GOOD)
    (root / "escape.md").symlink_to(outside)
    for path in (outside, root / ".." / "secret.md", root / "escape.md"):
        with pytest.raises(SourceError) as info:
            check_source(path, root)
        assert "outside the sources root" in str(info.value) and str(path) in str(info.value)
    inside = root / "ok.md"
    inside.write_text(GOOD)
    check_source(inside, root)
    client = ScriptedClient([respond], repeat_last=True, model_id="scripted/offline")
    result = run_loops(RunRequest(root=tmp_path / "log", sources=[outside, inside], query=QUERY, sources_root=root),
                       client=client)
    assert len(result.source_errors) == 1 and "outside the sources root" in result.source_errors[0]
    assert [o.stream_id for o in result.outcomes] == ["ok.md"] and result.outcomes[0].status == "sealed"


HUGE = 200 * 1024 * 1024
RSS_LIMIT_MB = 200  # below the size of the line itself: holding the line whole cannot pass

_CHILD = r"""
import sys
from pathlib import Path
from poimen.inputs.chunking import _blocks, _split_stream, iter_chunks
path = Path(sys.argv[1])
pieces = total = 0
for piece in _split_stream(_blocks(path), "\n", 80_000):   # the streaming reader over the whole line
    pieces += 1
    total += len(piece)
chunks = 0
for chunk in iter_chunks(path):                           # and the tokenizing chunker over its first chunks
    assert chunk.tokens <= 5000
    chunks += 1
    if chunks == 40:
        break
# VmHWM is this process image's own peak; ru_maxrss would carry the forking parent's peak across exec
peak_kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(pieces, total, chunks, peak_kb // 1024)
"""


def test_a_200_mb_single_line_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "one-line.log"
    sentence = b"upload failed with HTTP 413 at the ingress after 31.4 s. "
    block = sentence * (1024 * 1024 // len(sentence))
    with path.open("wb") as fh:
        written = 0
        while written < HUGE:
            fh.write(block)
            written += len(block)
        fh.write(b"\n")
    size = path.stat().st_size
    assert size > HUGE
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    pieces, total, chunks, peak_mb = map(int, out.stdout.split())
    assert total == size - 1 and pieces > 1000 and chunks == 40
    assert peak_mb < RSS_LIMIT_MB, f"peak RSS {peak_mb} MB while reading a {size >> 20} MB line"


def test_level_l2_with_no_l1_memories_says_so_and_exits_non_zero(tmp_path):
    """An empty selection is not a success: `mem run --level L2` before any L1 run prints why and exits 1."""
    from typer.testing import CliRunner

    from poimen.cli.app import app

    res = CliRunner().invoke(app, ["run", "--level", "L2", "--log", str(tmp_path / "log"), "--query", "What failed?"])
    assert res.exit_code == 1
    assert "--level L2: no sealed L1 memory of this query" in res.output and "mem run" in res.output


@pytest.mark.parametrize("argv", [["lookup", "disk full"], ["symptoms", "project"], ["rebuild", "--from-log"]])
def test_a_local_command_names_the_object_store_log_it_cannot_read(argv):
    """Read as a path, `--log s3://bucket/prefix` was the folder `s3:/bucket/prefix`: the error named a folder nobody
    typed and advised `mem rebuild`, which cannot read the log either. It names what was typed, and what can."""
    from typer.testing import CliRunner

    from poimen.cli.app import app

    res = CliRunner().invoke(app, [*argv, "--log", "s3://bucket/prefix"])
    assert res.exit_code == 2
    said = " ".join(res.output.replace("│", " ").split())
    assert "s3://bucket/prefix: this command reads a local log folder" in said and "s3:/bucket" not in said
    assert "`mem run`, `mem verify`, `mem forget`, `mem log show` and the typed-memory commands take s3:// and gs:// " \
           "logs" in said


def test_a_local_command_reads_a_file_uri_as_its_folder(tmp_path):
    """`file://` names a local folder, as it does for `mem run`: the error speaks of that folder."""
    from typer.testing import CliRunner

    from poimen.cli.app import app

    res = CliRunner().invoke(app, ["symptoms", "project", "--log", f"file://{tmp_path / 'log'}"])
    assert res.exit_code == 1
    assert f"{tmp_path / 'log'}: no event log here" in res.output
