"""The full build on Dagster's multiprocess executor with 4 shards equals the in-process build, byte for byte.

Both builds run the example corpus with the offline engine and the hash embedder. Compared: every sealed segment
(by run id: the sha256 of its bytes, which the index records), and every projection's content hash (the index
manifest). The index's commit order is not compared: shards commit in whatever order they finish, so each index is
checked on its own (``verify``: its chain) and the two are compared as sets of (run id, segment sha256).

Three things record the commit order on purpose, and are compared without it: a typed-store write's run id names the
index head it was written after (so its segment, whose rows carry the run id and the write's wall-clock time,
differs in those bytes: its events are compared without run id, hashes and time), the `run` table's
`log_position`, and `store_item`'s `pos`, `event_hash` and `ts`. Every other projection must match by content hash.
"""

import json
import os
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.definitions import default_resources, make_definitions
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.testing.s3_server import LocalS3
from pipelines.scaled import SHARDS, execution_config, full_build_job
from resources import EventLogResource, duckdb_resource

REPO = Path(__file__).resolve().parents[2]
MULTIPROCESS = execution_config(max_concurrent=2)  # two step processes at a time (two cores)


def point_at(monkeypatch, tmp_path: Path, name: str) -> Path:
    """Every resource of the default code location reads its folder from the environment when a step runs."""
    home = tmp_path / name
    monkeypatch.setenv("POIMEN_HOME", str(home / "log"))
    monkeypatch.setenv("POIMEN_DB", str(home / "index.duckdb"))
    return home / "log"


# Where commit order (or the wall clock of a typed-store write, `ts`) is recorded.
ORDER_COLUMNS = {"run": ["log_position"], "store_item": ["pos", "event_hash", "ts"]}
STORE_WRITE = "sw-"  # typed-store write runs: their id hashes the index head they follow


def order_free(event) -> str:
    """A typed-store write without its run id, its chain hashes and its wall-clock time."""
    row = {k: v for k, v in event.to_row().items() if k not in ("run_id", "prev_hash", "hash")}
    row["attrs"] = {k: v for k, v in json.loads(row["attrs"]).items() if k != "ts"}
    return json.dumps(row, sort_keys=True)


def built(log_root: Path | str, db: Path, work: Path | None = None) -> tuple[dict, dict, list, dict]:
    """(segment sha256 by run id, projection content hashes, store writes without order, order-free table rows);
    ``work``: where the manifest is, when not beside the log (a log on an object store)."""
    report = verify(log_root)
    assert report.ok and not report.notes, (report.problems, report.notes)
    log = EventLog(log_root)
    entries = log.index()
    segments = {e["run_id"]: e["file_sha256"] for e in entries if not e["run_id"].startswith(STORE_WRITE)}
    assert len({e["run_id"] for e in entries}) == len(entries), "a run is in the index twice"
    writes = sorted(order_free(ev) for e in entries if e["run_id"].startswith(STORE_WRITE)
                    for ev in log.run_events(e["run_id"]))
    tables = json.loads(((work or log_root) / "manifest.json").read_text())["tables"]
    hashes = {t: v["content_hash"] for t, v in tables.items() if t not in ORDER_COLUMNS}
    with duckdb.connect(str(db), read_only=True) as con:
        rows = {t: con.execute(f"SELECT * EXCLUDE ({', '.join(cols)}) FROM {t} ORDER BY ALL").fetchall()
                for t, cols in ORDER_COLUMNS.items()}  # table and column names are constants above, not input
    return segments, hashes, writes, rows


def step_spans(instance: dg.DagsterInstance, run_id: str, prefix: str) -> list[tuple[float, float, int]]:
    """(start, end, pid) of every step whose key starts with ``prefix``."""
    starts, ends, pids = {}, {}, {}
    for record in instance.get_records_for_run(run_id, limit=100_000).records:
        entry = record.event_log_entry
        step = entry.step_key or ""
        if entry.dagster_event and step.startswith(prefix):
            kind = entry.dagster_event.event_type_value
            if kind == "STEP_START":
                starts[step], pids[step] = entry.timestamp, entry.dagster_event.pid
            elif kind == "STEP_SUCCESS":
                ends[step] = entry.timestamp
    return [(starts[s], ends[s], pids[s]) for s in starts]


@pytest.mark.slow
def test_multiprocess_build_with_four_shards_matches_the_in_process_build(tmp_path, monkeypatch):
    sources = tmp_path / "sources"
    shutil.copytree(REPO / "examples" / "sources", sources)
    monkeypatch.setenv("POIMEN_SOURCES", str(sources))
    monkeypatch.setenv("POIMEN_CHUNK_TOKENS", "800")
    # The scaled executor puts the repository on PYTHONPATH for its fork server (tests/test_code_location.py); set here
    # as it is, so that the test leaves it as it found it.
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    (tmp_path / "dagster").mkdir()

    one = point_at(monkeypatch, tmp_path, "in-process")
    result = make_definitions().resolve_job_def("full_build").execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success

    sharded = point_at(monkeypatch, tmp_path, "multiprocess")
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        run = dg.execute_job(dg.reconstructable(full_build_job), instance=instance,
                             run_config=MULTIPROCESS)
        assert run.success
        spans = step_spans(instance, run.run_id, "l1_memories.l1_memories_shard_")
    assert len(spans) == SHARDS and len({pid for _, _, pid in spans}) == SHARDS  # a process of its own each
    spans.sort()
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:])), f"no two shards ran at once: {spans}"

    segments, tables, writes, rows = built(sharded, tmp_path / "multiprocess" / "index.duckdb")
    assert (segments, tables, writes, rows) == built(one, tmp_path / "in-process" / "index.duckdb")
    assert len(segments) > 8 and writes and rows["run"] and {"memory", "evidence", "gate"} <= set(tables)


def example_corpus(tmp_path: Path, monkeypatch) -> None:
    sources = tmp_path / "sources"
    shutil.copytree(REPO / "examples" / "sources", sources)
    monkeypatch.setenv("POIMEN_SOURCES", str(sources))
    monkeypatch.setenv("POIMEN_CHUNK_TOKENS", "800")


@pytest.mark.slow
def test_the_pipeline_with_its_log_on_s3_seals_the_same_segments_as_with_a_local_log(tmp_path, monkeypatch):
    """The Dagster build of the example corpus, once on a local log and once with the log on the local S3 server and
    its chunk files, projections and manifest in a local work folder: the same sealed segments, byte for byte (by run
    id: their sha256, which each index records), and the same projections."""
    example_corpus(tmp_path, monkeypatch)
    local = point_at(monkeypatch, tmp_path, "local")
    assert make_definitions().resolve_job_def("full_build").execute_in_process(
        instance=dg.DagsterInstance.ephemeral()).success

    point_at(monkeypatch, tmp_path, "remote")  # the embedding cache's home; the log and work folder are named below
    work = tmp_path / "remote" / "work"
    with LocalS3() as s3:
        for k, v in s3.env.items():
            monkeypatch.setenv(k, v)
        resources = {**default_resources(), "event_log": EventLogResource(root=s3.uri("pipeline"), work_dir=str(work)),
                     "duckdb": duckdb_resource(work / "index.duckdb")}
        result = make_definitions(resources).resolve_job_def("full_build").execute_in_process(
            instance=dg.DagsterInstance.ephemeral())
        assert result.success
        remote = built(s3.uri("pipeline"), work / "index.duckdb", work)
        assert not EventLog(s3.uri("pipeline")).store.exists("manifest.json")  # derivatives stay in the work folder
        forget_in_the_log_and_the_work_dir(s3.uri("pipeline"), work, tmp_path / "sources" / "adr-007-queue-choice.md")
    assert remote == built(local, tmp_path / "local" / "index.duckdb")
    segments, tables, writes, rows = remote
    assert writes and rows["store_item"]  # the typed-store step wrote through its optimistic session
    assert len(segments) > 8 and rows["run"] and {"memory", "evidence", "gate", "symptom"} <= set(tables)
    assert (work / "chunks").is_dir() and (work / "projections").is_dir()


def forget_in_the_log_and_the_work_dir(root: str, work: Path, source: Path) -> None:
    """`mem forget` on a log on an object store, given this machine's work folder: the source's lines are gone from
    every segment on the store and every file of the work folder (chunk files, index, projections' Parquet), and the
    log verifies."""
    from poimen.forget import Target, forget

    others = "".join(p.read_text() for p in source.parent.iterdir() if p != source)
    needles = {line.strip().encode() for line in source.read_text().splitlines()
               if len(line.strip()) >= 40 and line.strip() not in others}

    def holding() -> set[str]:
        store = EventLog(root).store
        found = {f"segments/{n}": store.read(f"segments/{n}") for n in store.names("segments", ".parquet")}
        found |= {p.relative_to(work).as_posix(): p.read_bytes() for p in work.rglob("*") if p.is_file()}
        return {name for name, data in found.items() if any(n in data for n in needles)}

    before = holding()
    assert needles and {"chunks", "segments", "projections"} <= {n.split("/")[0] for n in before}, before
    report = forget(root, Target(source=source.name), by="test", work_dir=work)
    assert report.chunk_files and report.index_rebuilt and report.shared_store, str(report)
    assert holding() == set()
    assert verify(root).ok


def test_a_pipeline_log_on_an_object_store_without_a_work_dir_is_refused_in_one_line():
    """The chunk files, projections and manifest need a local folder; a log URI alone names none."""
    from poimen.errors import PoimenError

    resource = EventLogResource(root="gs://team/log")
    assert resource.log_root == "gs://team/log"
    with pytest.raises(PoimenError, match=r"^event log root gs://team/log: .*needs a local work_dir") as err:
        resource.path
    assert "\n" not in str(err.value)
    assert EventLogResource(root="gs://team/log", work_dir="/tmp/w").path == Path("/tmp/w")
    assert EventLogResource(root="file:///tmp/l").path == Path("/tmp/l") == EventLogResource(root="/tmp/l").log_root


def test_the_l1_checks_run_as_one_step_over_one_read_of_the_log():
    """On the multiprocess executor every step is a process that opens the instance and reads the log: the two L1
    checks share one (a multi-asset check)."""
    job = make_definitions(executor="multiprocess", shards=SHARDS).resolve_job_def("full_build")
    steps = set(job.graph.node_names())
    assert "l1_checks" in steps
    assert not {"l1_memories_l1_acceptance_rate", "l1_memories_l1_memory_budget"} & steps
    from assets.checks import l1_checks

    assert {k.name for k in l1_checks.check_keys} == {"l1_acceptance_rate", "l1_memory_budget"}
