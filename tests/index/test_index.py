"""The projections: every table filled from a real log, parents linked, only final memories embedded."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from index_helpers import built

import poimen.index as index
from poimen.domain import sha256_text
from poimen.embedding.embedders import HashEmbedder
from poimen.index import PROJECTIONS, Projection, build_projections
from poimen.index.schema import fixed
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.write.reference import ingest_reference
from poimen.relevance import headline


@pytest.fixture
def db(db):
    """Here, a read-only connection to the conftest's index."""
    con = duckdb.connect(str(db), read_only=True)
    yield con
    con.close()


def q(con, sql, *params):
    return con.execute(sql, list(params)).fetchall()


def test_every_table_has_rows(db):
    counts = {t: q(db, f'SELECT count(*) FROM "{t}"')[0][0] for t in index.TABLES}
    assert counts["symptom"] == 0  # no symptom events in this log: project_log was never run
    assert counts["failure_signature"] > 0  # the incident log's 413 and the notes' OOMKilled
    assert all(counts[t] > 0 for t in ("evidence", "memory", "edge", "run", "gate", "memory_vector")), counts
    assert index.TABLES[:6] == ("evidence", "memory", "edge", "run", "gate", "memory_vector")
    assert q(db, "SELECT DISTINCT level FROM run ORDER BY 1") == [("L0",), ("L1",), ("L2",), ("R",)]  # L0: stream runs
    assert q(db, "SELECT DISTINCT level FROM evidence ORDER BY 1") == [("L0",), ("R",)]
    (vtype,) = q(db, "SELECT typeof(vector) FROM memory_vector LIMIT 1")[0]
    assert vtype == "FLOAT[64]"


def test_parents_linked(db):
    # Every memory has an evidence edge; L1 evidence is an L0 chunk, L2 evidence an L1 memory;
    # 'previous' points at an earlier memory of the same run.
    assert q(db, "SELECT count(*) FROM memory m WHERE NOT EXISTS "
                 "(SELECT 1 FROM edge e WHERE e.child_sha = m.sha AND e.run_id = m.run_id AND e.kind = 'evidence')") == [(0,)]
    assert q(db, "SELECT count(*) FROM edge e JOIN run r USING (run_id) WHERE e.kind = 'evidence' AND r.level = 'L1' "
                 "AND e.parent_sha NOT IN (SELECT sha FROM evidence WHERE level = 'L0')") == [(0,)]
    assert q(db, "SELECT count(*) FROM edge e JOIN run r USING (run_id) WHERE e.kind = 'evidence' AND r.level = 'L2' "
                 "AND e.parent_sha NOT IN (SELECT sha FROM memory WHERE level = 'L1' AND final)") == [(0,)]
    assert q(db, "SELECT count(*) FROM edge e WHERE e.kind = 'previous' AND NOT EXISTS "
                 "(SELECT 1 FROM memory m WHERE m.sha = e.parent_sha AND m.run_id = e.run_id)") == [(0,)]
    assert q(db, "SELECT count(*) FROM edge WHERE kind = 'previous'")[0][0] > 0


def test_only_final_memories_stream_and_reference_chunks_get_text_vectors(db):
    vectors = {r[0] for r in q(db, "SELECT sha FROM memory_vector WHERE kind = 'text'")}
    finals = {r[0] for r in q(db, "SELECT final_memory_sha FROM run WHERE current AND level IN ('L1', 'L2')")}
    refs = {r[0] for r in q(db, "SELECT sha FROM evidence WHERE level = 'R'")}
    chunks = {r[0] for r in q(db, "SELECT sha FROM evidence WHERE level = 'L0'")}  # every chunk of both sources
    intermediate = {r[0] for r in q(db, "SELECT sha FROM memory WHERE NOT final")} - finals
    assert vectors == finals | refs | chunks
    assert q(db, "SELECT DISTINCT level FROM memory_vector WHERE sha IN (SELECT sha FROM evidence WHERE level = 'L0') "
                 "ORDER BY 1") == [("L0",)]
    assert intermediate and not intermediate & vectors
    assert q(db, "SELECT DISTINCT model_id FROM memory_vector") == [("poimen/hash-bow-64",)]
    assert q(db, "SELECT count(*) FROM memory_vector WHERE kind = 'text' AND text_sha <> sha") == [(0,)]


def test_titled_docs_and_only_they_get_a_headline_vector_of_their_title(db):
    docs = dict(q(db, "SELECT v.sha, COALESCE(e.text, m.text) FROM memory_vector v LEFT JOIN evidence e USING (sha) "
                      "LEFT JOIN (SELECT DISTINCT sha, text FROM memory) m USING (sha) WHERE v.kind = 'text'"))
    titled = {sha: headline(text) for sha, text in docs.items() if headline(text)}
    rows = dict(q(db, "SELECT sha, text_sha FROM memory_vector WHERE kind = 'headline'"))
    assert titled and len(titled) < len(docs)  # the runbooks' '# Title' chunks are titled, log chunks are not
    assert rows == {sha: sha256_text(title) for sha, title in titled.items()}


def test_run_and_gate_agree_with_the_log(db, tmp_path):
    for run_id, seen, used, rate in q(db, "SELECT run_id, chunks_seen, chunks_used, acceptance_rate FROM run "
                                          "WHERE level IN ('L1', 'L2')"):
        gates = q(db, "SELECT count(*), count(*) FILTER (WHERE \"update\") FROM gate WHERE run_id = ?", run_id)[0]
        assert gates == (seen, used)
        assert rate == pytest.approx(used / seen)
    assert q(db, "SELECT DISTINCT acceptance_rate FROM run WHERE level IN ('R', 'L0')") == [(None,)]  # no gate
    events = [e for e in EventLog(tmp_path / "log").events() if e.kind == "gate"]
    assert q(db, "SELECT count(*) FROM gate")[0][0] == len(events)


def test_parquet_projection_equals_the_duckdb_table(db, tmp_path):
    for t in index.TABLES:
        parquet = pq.read_table(tmp_path / "log" / "projections" / f"{t}.parquet")
        table = db.sql(f'SELECT * FROM "{t}"').to_arrow_table()  # rows were inserted in key order
        assert parquet.num_rows == table.num_rows
        assert parquet.column_names == table.column_names
        assert parquet.column("sha" if "sha" in parquet.column_names else parquet.column_names[0]).to_pylist() == \
            table.column("sha" if "sha" in table.column_names else table.column_names[0]).to_pylist()


def test_adding_a_projection_is_one_entry_in_the_list(tmp_path, template, monkeypatch):
    def rows(ctx):
        return [{"run_id": r.run_id, "events": len(r.events)} for r in ctx.runs]

    extra = Projection("run_size", fixed(("run_id", pa.string()), ("events", pa.int64())), ("run_id",), rows)
    monkeypatch.setattr(index.project, "PROJECTIONS", PROJECTIONS + [extra])
    assert index.TABLES[-1] == "run_size"
    log, db = built(tmp_path, template)
    with duckdb.connect(str(db), read_only=True) as con:
        assert q(con, "SELECT count(*) FROM run_size")[0][0] == len(EventLog(log).index())
    assert (log / "projections" / "run_size.parquet").exists()


def test_reference_ingest_is_idempotent_and_verifies(tmp_path, template):
    log, _ = built(tmp_path, template)
    doc = tmp_path / "runbook-workers.md"
    doc.write_text("# Workers\n\nIf pods are OOMKilled, lower the batch size and raise the memory limit.\n")
    before = len(EventLog(log).index())
    first = ingest_reference(log, [doc])
    again = ingest_reference(log, [doc])
    assert first == again and len(EventLog(log).index()) == before + 1
    assert verify(log).ok
    events = EventLog(log).run_events(first[0])
    assert [e.kind for e in events] == ["run_start", "evidence", "run_end"] and {e.level for e in events} == {"R"}
    doc.write_text("# Workers\n\nEdited: restart the worker after lowering the batch size.\n")
    (edited,) = ingest_reference(log, [doc])
    assert edited != first[0]
    stats = build_projections(log, tmp_path / "again.duckdb", HashEmbedder(64))
    with duckdb.connect(str(tmp_path / "again.duckdb"), read_only=True) as con:
        current = q(con, "SELECT run_id FROM run WHERE stream_id = 'runbook-workers.md' AND current")
        texts = [r[0] for r in q(con, "SELECT e.text FROM memory_vector v JOIN evidence e USING (sha) WHERE e.source = 'runbook-workers.md' "
                                          "AND v.kind = 'text'")]
    assert current == [(edited,)]
    assert len(texts) == 1 and "Edited" in texts[0]  # the superseded version is not searchable
    assert stats.rows["run"] == before + 2
