"""Lookup: fused text + keyword hits with provenance L2 → L1 → L0, safe inputs, and the read-only SQL."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.embedding.embedders import HashEmbedder
from poimen.errors import PoimenError
from poimen.index import MemoryIndex
from poimen.index.lookup import lookup
from poimen.index.sql import run_sql


def counts(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in ("memory", "evidence", "run")}


def test_l2_hit_carries_provenance_down_to_l0(db):
    hits = lookup(db, "payments-worker OOMKilled exit code 137", k=5, embedder=HashEmbedder(64))
    l2 = next(h for h in hits if h.level == "L2")
    assert l2.kind == "memory" and l2.query_id == "root-causes" and l2.run_id
    assert len(l2.via) == 2  # the two L1 memories the L2 run read
    with duckdb.connect(str(db), read_only=True) as con:
        l1_finals = {r[0] for r in con.execute("SELECT final_memory_sha FROM run WHERE level = 'L1'").fetchall()}
        l0 = {r[0]: (r[1], r[2]) for r in con.execute("SELECT sha, source, position FROM evidence WHERE level = 'L0'").fetchall()}
        accepted = {r[0] for r in con.execute("SELECT DISTINCT parent_sha FROM edge e JOIN run r USING (run_id) "
                                              "WHERE e.kind = 'evidence' AND r.level = 'L1'").fetchall()}
    assert set(l2.via) == l1_finals
    assert {p.source for p in l2.evidence} == {"incident.log", "worker-notes.md"}
    assert all(l0[p.sha] == (p.source, p.position) for p in l2.evidence)
    # every chunk a gate accepted in both L1 runs, and none it rejected (those are L0 stream chunks only)
    assert {p.sha for p in l2.evidence} == accepted and accepted < l0.keys()


def test_l1_hit_evidence_and_tiers(db):
    hits = lookup(db, "OOMKilled batch size", k=10, embedder=HashEmbedder(64))
    l1 = next(h for h in hits if h.level == "L1" and "OOMKilled" in h.text)
    assert {p.source for p in l1.evidence} == {"worker-notes.md"} and l1.via == ()
    # "OOMKilled" is a Kubernetes reason: the memory whose evidence shows it is an exact tier-1 hit.
    assert hits[0].tier == "signature" and hits[0].signature_keys == ("k8s:OOMKilled",)
    rest = [h for h in hits if h.tier != "signature"]
    assert rest and all(h.tier in ("text", "keyword", "text+keyword") for h in rest)
    assert [h.score for h in rest] == sorted((h.score for h in rest), reverse=True)
    assert len({h.sha for h in hits}) == len(hits)


def test_reference_hit_is_its_own_evidence(db):
    hits = lookup(db, "kubectl annotate ingress proxy-body-size", k=3, embedder=HashEmbedder(64))
    ref = next(h for h in hits if h.kind == "reference")
    assert ref.level == "R" and ref.query_id == "" and ref.run_id
    assert [(p.sha, p.source) for p in ref.evidence] == [(ref.sha, "runbook-ingress.md")]


def test_explain_names_ranks_scores_and_fusion(db):
    (hit,) = lookup(db, "413 Request Entity Too Large", k=1, embedder=HashEmbedder(64), explain=True)
    # a tier-1 tie between a memory and the L0 chunk it explains goes to the memory, whatever its text rank
    assert hit.kind == "memory" and "http:413 in 1/2 streams" in hit.why
    assert "text vectors rank " in hit.why and "cosine" in hit.why and "keyword rank" in hit.why
    assert "bm25" in hit.why and "413" in hit.why and "fused 1/(60+" in hit.why


@pytest.mark.parametrize("text", [
    "'; DROP TABLE memory; --",
    "\" OR 1=1 --",
    "x' UNION SELECT sha, level FROM evidence --",
    "%_\\ ; ATTACH 'evil.db'",
    "\x00 OOMKilled",
])
def test_injection_strings_are_only_text(db, text):
    before = counts(db)
    hits = lookup(db, text, k=5, embedder=HashEmbedder(64))
    assert isinstance(hits, list)
    assert counts(db) == before


def test_empty_query_and_wrong_embedder(db, tmp_path):
    assert lookup(db, "   ", embedder=HashEmbedder(64)) == []
    with pytest.raises(PoimenError, match="index vectors are from poimen/hash-bow-64"):
        MemoryIndex.open(db, HashEmbedder(32))
    with pytest.raises(PoimenError, match="no index here"):
        lookup(tmp_path / "missing.duckdb", "x")
    assert lookup(db, "OOMKilled", k=1)[0].sha  # embedder=None: the one the index recorded


def test_search_vector_is_exact_brute_force(db):
    idx = MemoryIndex.open(db, HashEmbedder(64))
    rng = np.random.default_rng(0)
    idx.matrix = rng.standard_normal((500, 64)).astype(np.float32)
    idx.matrix /= np.linalg.norm(idx.matrix, axis=1, keepdims=True)
    idx.shas = [f"s{i}" for i in range(500)]
    q = idx.matrix[7] + 0.1 * rng.standard_normal(64).astype(np.float32)
    got = idx.search_vector(q, 10)
    want = np.argsort(-(idx.matrix @ q), kind="stable")[:10]
    assert [i for i, _ in got] == list(want) and got[0][0] == 7


def test_cli_lookup_prints_provenance_and_json(db):
    runner = CliRunner()
    res = runner.invoke(app, ["lookup", "--db", str(db), "-k", "3", "--explain", "OOMKilled exit code 137"])
    assert res.exit_code == 0, res.output
    assert "evidence worker-notes.md#" in res.output and "why:" in res.output and "query root-causes" in res.output
    res = runner.invoke(app, ["lookup", "--db", str(db), "-k", "2", "--json", "413"])
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert len(rows) == 2 and {"sha", "level", "evidence", "why", "tier"} <= set(rows[0])


def test_mem_sql_reads_and_refuses_writes(db):
    runner = CliRunner()
    res = runner.invoke(app, ["sql", "--db", str(db), "--csv", "SELECT level, count(*) AS n FROM run GROUP BY 1 ORDER BY 1"])
    assert res.exit_code == 0 and res.output.splitlines() == ["level,n", "L0,2", "L1,2", "L2,1", "R,1"]  # L0: each source's stream run
    res = runner.invoke(app, ["sql", "--db", str(db), "--csv"], input="SELECT count(*) AS n FROM memory_vector\n")
    assert res.exit_code == 0 and res.output.splitlines()[0] == "n"
    before = counts(db)
    for stmt in ("DROP TABLE memory", "INSERT INTO run SELECT * FROM run", "DELETE FROM evidence",
                 "SELECT 1; DROP TABLE run", f"COPY run TO '{db.parent / 'leak.csv'}'", "CREATE TABLE t AS SELECT 1"):
        res = runner.invoke(app, ["sql", "--db", str(db), stmt])
        assert res.exit_code == 1 and "refused" in res.output, (stmt, res.output)
    assert counts(db) == before and not (db.parent / "leak.csv").exists()
    # Even past the statement check, the connection itself is read-only.
    with pytest.raises(duckdb.Error):
        with duckdb.connect(str(db), read_only=True) as con:
            con.execute("DROP TABLE memory")
    assert run_sql(db, "PRAGMA table_info('run')")[0][0]


def test_mem_sql_reads_no_file_but_the_index_unless_allowed(db, tmp_path):
    """``read_text(<any path>)`` would let ad hoc SQL read any file on the machine; only --allow-files permits it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-live-do-not-leak")
    runner = CliRunner()
    for stmt in (f"SELECT content FROM read_text('{secret}')", f"SELECT * FROM read_csv('{secret}')",
                 f"SELECT * FROM read_parquet('{db.parent / 'projections' / 'run.parquet'}')"):
        res = runner.invoke(app, ["sql", "--db", str(db), stmt])
        assert res.exit_code == 1 and "sk-live" not in res.output and "disabled" in res.output, (stmt, res.output)
    res = runner.invoke(app, ["sql", "--db", str(db), "--csv", "--allow-files", f"SELECT content FROM read_text('{secret}')"])
    assert res.exit_code == 0 and "sk-live-do-not-leak" in res.output
