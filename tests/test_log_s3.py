"""The event log on object storage: a real S3 API (moto's server on 127.0.0.1, s3fs as the client) and a real GCS
JSON API (gcp-storage-emulator on 127.0.0.1 with generation preconditions, gcsfs as the client). Every test runs on
both: the protocol is one (``ObjectStore``), the conditional puts are each store's own.

The same runs are written to a local folder and to ``s3://``; every sealed segment must be byte-identical,
since the storage changes where bytes go, never which bytes. Concurrent writers are real processes
(forked ``mem run``), each committing to one ``index.jsonl`` through conditional puts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli import app
from poimen.core import RunRequest, run_loops
from poimen.log.storage import open_store
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.testing.crash import run_mem, start_mem
from poimen.testing.gcs_server import LocalGCS
from poimen.testing.s3_server import LocalS3

ROOT = Path(__file__).resolve().parent.parent
QUERY = "What caused the upload failure, and how was it fixed?"
INCIDENT = """Uploads of files over 1 MB failed with 413 Request Entity Too Large after the ingress chart upgrade.
The new chart dropped the proxy-body-size annotation, so nginx fell back to client_max_body_size 1m.
Restoring proxy-body-size: 64m on the ingress fixed it; the upload error rate went back to zero."""


@pytest.fixture(scope="module", params=[LocalS3, LocalGCS], ids=["s3", "gs"])
def s3(request):
    """A local object store server (S3, then GCS), reached through the environment as writer processes reach it."""
    with request.param() as server:
        saved = {k: os.environ.get(k) for k in server.env}
        os.environ.update(server.env)
        try:
            yield server
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def sources(folder: Path, n: int) -> list[Path]:
    """``n`` small distinct incident notes (different streams, so different runs)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"incident-{i:02d}.md"
        path.write_text(f"# Incident {i}\n\nService shard-{i} was affected.\n\n{INCIDENT}\n")
        out.append(path)
    return out


def build(root: str | Path, files: list[Path], resume: bool = False) -> None:
    result = run_loops(RunRequest(root=root, sources=files, query=QUERY, chunk_tokens=64, resume=resume,
                                  sources_root=files[0].parent))
    assert result.ok, [o.error for o in result.outcomes]


def segments(log: EventLog) -> dict[str, str]:
    """run id -> sha256 of its sealed segment, from the index (each run must appear once)."""
    entries = log.index()
    assert len({e["run_id"] for e in entries}) == len(entries), "a run is in the index twice"
    return {e["run_id"]: e["file_sha256"] for e in entries}


def mem_verify(root: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", "--log", root])
    return result.exit_code, " ".join(result.output.split())


def test_the_log_round_trips_through_s3_byte_for_byte(s3, tmp_path):
    files = sources(tmp_path / "src", 2)
    local, remote = EventLog(tmp_path / "local"), EventLog(s3.uri("round-trip"))
    build(local.root, files)
    build(remote.root, files)
    assert segments(remote) == segments(local) and len(segments(local)) == 4  # 2 L0 streams + 2 L1 runs
    # Runs in flight at once commit in whichever order they finish, so compare the events run by run.
    assert {r: remote.run_events(r) for r in segments(remote)} == {r: local.run_events(r) for r in segments(local)}
    assert not remote.journals() and verify(remote.root).ok
    build(remote.root, files)  # sealed runs are skipped: nothing is committed twice
    assert segments(remote) == segments(local)


def test_mem_forget_refuses_a_log_on_s3_in_one_line_and_leaves_it_as_it_was(s3, tmp_path):
    """Forgetting rewrites sealed segments in place, which only a local log allows (docs/scale.md)."""
    root = s3.uri("forget")
    build(root, sources(tmp_path / "src", 1))
    before = segments(EventLog(root))
    result = CliRunner().invoke(app, ["forget", "--log", root, "--source", "incident-00.md"])
    assert result.exit_code == 1, result.output
    assert "only a local log" in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert segments(EventLog(root)) == before and verify(root).ok


def test_mem_verify_reads_s3_and_names_a_flipped_byte(s3, tmp_path):
    root = s3.uri("tamper")
    build(root, sources(tmp_path / "src", 1))
    code, out = mem_verify(root)
    assert code == 0 and "2 sealed runs" in out, out
    log = EventLog(root)
    memory = next(e for e in log.events() if e.kind == "memory")
    name = f"segments/{memory.run_id}.parquet"
    raw = bytearray(log.store.read(name))
    at = raw.find(memory.text.encode())
    raw[at + 5] ^= 0x01
    log.store.put(name, bytes(raw))
    code, out = mem_verify(root)
    assert code == 1 and f"run {memory.run_id[:16]} seq" in out, out
    assert "altered" in out or "sha does not match" in out, out


def test_a_commit_that_loses_the_race_re_reads_and_appends_after_the_winner(s3):
    """The protocol itself, made deterministic: another writer commits between our read and our conditional put."""
    store = open_store(s3.uri("race"))
    seen: list[bytes] = []

    def loser(raw: bytes) -> bytes:
        seen.append(raw)
        if len(seen) == 1:
            store.commit("index.jsonl", lambda raw: b"winner\n")
        return b"loser\n"

    store.commit("index.jsonl", loser)
    assert seen == [b"", b"winner\n"]  # the first put (only if absent) lost; the retry read the winner's line
    assert store.read("index.jsonl") == b"winner\nloser\n"


@pytest.mark.slow
def test_eight_concurrent_writer_processes_commit_every_run_exactly_once(s3, tmp_path):
    """Eight `mem run` processes, one source each, all committing to one index on S3 at once."""
    files = sources(tmp_path / "src", 8)
    root = s3.uri("eight")
    writers = [start_mem(["run", "--log", root, "--query", QUERY, "--chunk-tokens", "64", str(f)],
                         tmp_path / f"writer-{i}.out", s3.env) for i, f in enumerate(files)]
    codes = [w.wait(300) for w in writers]
    assert codes == [0] * 8, [w.output()[-500:] for w in writers]
    build(tmp_path / "local", files)  # the same runs, one writer, a local folder
    remote, local = segments(EventLog(root)), segments(EventLog(tmp_path / "local"))
    assert remote == local and len(remote) == 16  # no run lost, none twice, every event byte-identical
    report = verify(root)
    assert report.ok and report.sealed_runs == 16 and not report.notes, report.problems
    assert mem_verify(root)[0] == 0


@pytest.mark.slow
def test_a_writer_killed_between_segment_put_and_commit_leaves_a_verifiable_log_that_resumes(s3, tmp_path):
    files = sources(tmp_path / "src", 2)
    root = s3.uri("killed")
    argv = ["run", "--log", root, "--query", QUERY, "--chunk-tokens", "64", *map(str, files)]
    code, out = run_mem(argv, tmp_path / "killed.out", {**s3.env, "POIMEN_TEST_KILL_AT": "after_segment_rename"})
    assert code == -9, out
    log = EventLog(root)
    report = verify(root)
    assert report.ok, report.problems
    assert any("killed while sealing" in note for note in report.notes), report.notes
    put_not_committed = set(log.store.names("segments", ".parquet")) - {e["file"][9:] for e in log.index()}
    assert len(put_not_committed) == 1  # the segment is there, its index line is not: nobody reads it
    code, out = run_mem([*argv, "--resume"], tmp_path / "resume.out", s3.env)
    assert code == 0, out
    build(tmp_path / "local", files)
    assert segments(log) == segments(EventLog(tmp_path / "local"))
    report = verify(root)
    assert report.ok and not report.notes and not log.journals(), (report.problems, report.notes)


def test_put_if_absent_creates_once_and_never_overwrites(s3):
    """The store's create condition (S3 If-None-Match: *, GCS ifGenerationMatch=0), which segments and journal turns
    rely on: a second create loses and leaves the first bytes."""
    store = open_store(s3.uri("create-once"))
    assert store.put_if_absent("segments/a.parquet", b"first")
    assert not store.put_if_absent("segments/a.parquet", b"second")
    assert store.read("segments/a.parquet") == b"first"


@pytest.mark.parametrize("root, says", [("gs://", "no bucket named (gs://bucket/prefix)"),
                                        ("s3:///log", "no bucket named (s3://bucket/prefix)"),
                                        ("ftp://host/log", "only local folders, file://, s3:// and gs://")])
def test_a_log_uri_the_stores_cannot_take_is_refused_in_one_line(root, says):
    from poimen.errors import PoimenError

    with pytest.raises(PoimenError) as err:
        open_store(root)
    assert str(err.value).startswith(f"event log root {root}: ") and says in str(err.value)
    assert "\n" not in str(err.value)
