"""The card's nine tests (M3.7.8): a symptom projection makes an answer written in prose findable from an error.

The memories reach the index the real way: the gated loop over L0 sources with
a scripted gate, ``project_log`` with a scripted projection model, then
``build_projections``. a3/a4 use the real all-MiniLM-L6-v2 embedder: with a
bag-of-words fake, strings that share no word would all tie at zero and the
rank comparison would mean nothing.
"""

from __future__ import annotations

import asyncio
import shutil

import duckdb
import numpy as np
import pytest
from index_helpers import make_log
from symptom_fixtures import (CASES, FAILURES, OTHERS, SYMPTOM_MODEL, client, content_words,
                              make_loop_log)
from typer.testing import CliRunner

from poimen.cli.app import app
from poimen.domain import EventKind, sha256_text
from poimen.embedding.embedders import HashEmbedder, SentenceTransformerEmbedder
from poimen.index import MemoryIndex, build_projections, default_db, write_manifest
from poimen.index.rebuild import rebuild
from poimen.log.segments import file_sha256
from poimen.log.store import EventLog
from poimen.llm.prompts import load, render
from poimen.write.symptoms import project_log, projections


def project(log_root, llm=None) -> dict:
    log = EventLog(log_root)
    with log.writer():
        return asyncio.run(project_log(log, llm or client(), concurrency=3))


@pytest.fixture(scope="module")
def minilm():
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="module")
def built(tmp_path_factory, minilm):
    """(log, db, stats, first project_log counts): loop log + projections, built with MiniLM."""
    root = tmp_path_factory.mktemp("symptoms")
    log = make_loop_log(root)
    counts = project(log)
    db = default_db(log)
    stats = build_projections(log, db, minilm)
    write_manifest(log, stats)
    return log, db, stats, counts


@pytest.fixture(scope="module")
def con(built):
    c = duckdb.connect(str(built[1]), read_only=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def index(built, minilm):
    return MemoryIndex.open(built[1], minilm)


def sha(case) -> str:
    return sha256_text(case.memory)


def rank(results: list[tuple[str, float]], target: str) -> int:
    return next((n for n, (s, _) in enumerate(results, start=1) if s == target), len(results) + 1)


def symptom_vectors(con) -> dict[str, tuple]:
    return {s: (lvl, np.asarray(v)) for s, lvl, v in
            con.execute("SELECT sha, level, vector FROM memory_vector WHERE kind = 'symptom'").fetchall()}


def test_fixture_has_no_vocabulary_overlap():
    """The false pass the card warns about: a query that reuses the memory's words never exercises the projection.

    Tokeniser: ``symptom_fixtures.content_words`` — identifiers split at camelCase and punctuation, then
    ``poimen.text.content_terms`` (stop-words removed, a light stemmer, words cut to four letters).
    """
    for case in FAILURES:
        shared = content_words(case.memory) & content_words(case.raw_error)
        assert not shared, (case.name, shared)
        assert case.raw_error.strip() not in case.evidence  # another occurrence, not the evidence pasted back


def test_a1_projection_generated(built, con):
    assert built[3] == {"memories": 8, "generated": 8, "skipped": 0, "empty": 3}
    vectors = symptom_vectors(con)
    for case in FAILURES:
        assert sha(case) in vectors, case.name
        assert vectors[sha(case)][0] == "L1"
    texts = dict(con.execute("SELECT memory_sha, text FROM symptom").fetchall())
    assert all(texts[sha(c)] == c.symptoms for c in FAILURES)


def test_a2_no_projection_for_non_failure(built, con, index):
    vectors = symptom_vectors(con)
    for case in OTHERS:
        assert sha(case) not in vectors, case.name
        # The empty answer is recorded (it is the model's answer), but writes no vector ...
        assert con.execute("SELECT text FROM symptom WHERE memory_sha = ?", [sha(case)]).fetchall() == [("",)]
        # ... and the memory is still found by its text.
        assert index.search(case.memory, k=1)[0].sha == sha(case)
    assert len(vectors) == len(FAILURES)


def test_a3_retrieval_by_symptom(index):
    for case in FAILURES:
        top = index.search_kind(case.raw_error, "symptom", k=5)
        assert top[0][0] == sha(case), case.name


def test_a4_beats_text_vector(index):
    ranks = {}
    for case in FAILURES:
        by_symptom = rank(index.search_kind(case.raw_error, "symptom", k=len(index)), sha(case))
        by_text = rank(index.search_kind(case.raw_error, "text", k=len(index)), sha(case))
        ranks[case.name] = (by_symptom, by_text)
    print("symptom rank, text rank:", ranks)
    for name, (by_symptom, by_text) in ranks.items():
        assert by_symptom < by_text, (name, ranks)


def test_a5_deterministic(tmp_path):
    """Generate twice from the same log: projections, their log segments and the built table are byte-identical."""
    template = make_loop_log(tmp_path / "src")
    runs, tables = [], []
    for n in (1, 2):
        log = tmp_path / f"copy{n}"
        shutil.copytree(template, log)
        llm = client()
        project(log, llm)
        runs.append((projections(EventLog(log)), sorted(llm.prompts), (log / "index.jsonl").read_bytes()))
        stats = build_projections(log, default_db(log), HashEmbedder(64))
        tables.append((stats.content_hash["symptom"], stats.parquet_sha256["symptom"],
                       stats.content_hash["memory_vector"]))
    assert runs[0] == runs[1]
    assert tables[0] == tables[1]
    # The prompt is pinned: every request renders the same template bytes.
    assert {p[0] for p in runs[0][1]} == {load("symptom").system}


def test_a6_rebuild_stable(built, minilm, tmp_path):
    log, db, stats, _ = built
    copy = tmp_path / "log"
    shutil.copytree(log, copy)
    (copy / "index.duckdb").unlink()  # drop everything the build wrote
    for parquet in (copy / "projections").iterdir():
        parquet.unlink()
    report = rebuild(copy, default_db(copy), minilm)
    assert report.ok, str(report)
    with duckdb.connect(str(db), read_only=True) as a, duckdb.connect(str(default_db(copy)), read_only=True) as b:
        sql_sym = "SELECT memory_sha, level, text, model_id, prompt_sha FROM symptom ORDER BY ALL"
        assert a.execute(sql_sym).fetchall() == b.execute(sql_sym).fetchall()
        old, new = symptom_vectors(a), symptom_vectors(b)
        assert old.keys() == new.keys() and len(old) == len(FAILURES)
        assert all(np.array_equal(old[s][1], new[s][1]) for s in old)
    for table in ("symptom", "memory_vector", "failure_signature"):
        assert file_sha256(copy / "projections" / f"{table}.parquet") == stats.parquet_sha256[table]


def test_a7_signature_linked(con):
    rows = con.execute("SELECT key, kind, tool, memory_sha, evidence_sha FROM failure_signature").fetchall()
    chunk_of = dict(con.execute("SELECT source, sha FROM evidence WHERE level = 'L0'").fetchall())
    by_memory: dict[str, list] = {}
    for key, kind, tool, memory, evidence in rows:
        by_memory.setdefault(memory, []).append((key, kind, tool, evidence))
    expected_tools = {"upload-413": "http", "export-oom": "java", "sync-refused": "python",
                      "checkout-crashloop": "kubernetes"}
    for case in FAILURES:
        found = by_memory.get(sha(case), [])
        assert found, case.name
        assert all(tool for _, _, tool, _ in found)
        assert {e for *_, e in found} == {chunk_of[f"{case.name}.log"]}  # its own L0 chunk, nothing else
        if case.name in expected_tools:
            assert expected_tools[case.name] in {tool for _, _, tool, _ in found}, (case.name, found)
    assert "k8s:CrashLoopBackOff" in {k for k, *_ in by_memory[sha(FAILURES[3])]}
    assert "http:413" in {k for k, *_ in by_memory[sha(FAILURES[0])]}
    # A row points at a memory, or at an L0 stream chunk that is its own evidence. A chunk the gate
    # rejected is never a memory's evidence, but is still found by its own signature (the L0 stream run).
    levels = dict(con.execute("SELECT sha, level FROM memory").fetchall())
    chunks = {m: found for m, found in by_memory.items() if m not in levels}
    assert chunks.keys() <= set(chunk_of.values()) and all({e for *_, e in f} == {m} for m, f in chunks.items())
    rejected = {c for (c,) in con.execute("SELECT chunk_sha FROM gate WHERE source = 'cdn-noise.log' AND NOT \"update\"")
                .fetchall()}
    assert rejected == {chunk_of["cdn-noise.log"]}
    assert not rejected & {e for m, found in by_memory.items() if m in levels for *_, e in found}
    assert {k for k, *_ in by_memory[chunk_of["cdn-noise.log"]]} == {"http:502"}
    assert not {sha(c) for c in OTHERS} & by_memory.keys()


def test_a7_l2_signatures_reach_l0_through_l1(tmp_path):
    """An L2 memory gets the signatures of the L0 chunks behind the L1 memories it read."""
    log = make_log(tmp_path / "t")
    db = default_db(log)
    build_projections(log, db, HashEmbedder(64))
    with duckdb.connect(str(db), read_only=True) as c:
        (l2,) = c.execute("SELECT final_memory_sha FROM run WHERE level = 'L2' AND current").fetchone()
        keys = {k for (k,) in c.execute("SELECT key FROM failure_signature WHERE memory_sha = ?", [l2]).fetchall()}
        l0 = {s for (s,) in c.execute("SELECT DISTINCT f.evidence_sha FROM failure_signature f WHERE memory_sha = ?",
                                      [l2]).fetchall()}
        levels = {lvl for (lvl,) in c.execute(f"SELECT level FROM evidence WHERE sha IN ({','.join('?' * len(l0))})",
                                                list(l0)).fetchall()}
    assert {"http:413", "k8s:OOMKilled"} <= keys and levels == {"L0"}


def test_a8_l0_and_r_skipped(built, con):
    vectors = symptom_vectors(con)
    evidence = dict(con.execute("SELECT sha, level FROM evidence").fetchall())
    assert {"L0", "R"} <= set(evidence.values())
    assert not set(vectors) & set(evidence)
    assert {lvl for lvl, _ in vectors.values()} == {"L1"}
    assert {lvl for (lvl,) in con.execute("SELECT DISTINCT level FROM symptom").fetchall()} == {"L1"}
    # Nothing in the log asked for one: every symptom event names an L1/L2 memory.
    memories = {s for (s,) in con.execute("SELECT sha FROM memory").fetchall()}
    events = [e for e in EventLog(built[0]).events() if e.kind == EventKind.SYMPTOM]
    assert len(events) == len(CASES) and all(e.sha in memories for e in events)


def test_a9_model_id_recorded(built):
    events = [e for e in EventLog(built[0]).events() if e.kind == EventKind.SYMPTOM]
    assert events
    memory_text = {sha(c): c.memory for c in CASES}
    for e in events:
        assert e.model_id == SYMPTOM_MODEL
        assert e.prompt_sha == render("symptom", memory=memory_text[e.sha]).sha
        assert e.attributes["template_sha"] == load("symptom").sha
        assert e.parents == (e.sha,)


def test_mem_symptoms_show(built):
    log = built[0]
    case = FAILURES[0]
    result = CliRunner().invoke(app, ["symptoms", "show", sha(case)[:10], "--log", str(log)])
    assert result.exit_code == 0, result.output
    assert SYMPTOM_MODEL in result.output and load("symptom").sha[:12] in result.output
    assert "413 Request Entity Too Large" in result.output
    empty = CliRunner().invoke(app, ["symptoms", "show", sha(OTHERS[0])[:10], "--log", str(log)])
    assert empty.exit_code == 0 and "explains no failure" in empty.output
    missing = CliRunner().invoke(app, ["symptoms", "show", "ffff0000", "--log", str(log)])
    assert missing.exit_code == 1 and "no symptom projection" in missing.output
