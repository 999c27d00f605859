"""Rebuild: full build, then rebuild — every stored hash matches and the Parquet is byte-identical;
a changed embedder model id is reported as a difference naming the rows."""

from __future__ import annotations

import json

import duckdb
from index_helpers import built
from typer.testing import CliRunner

import poimen.index as index
from poimen.cli.app import app
from poimen.embedding.embedders import HashEmbedder
from poimen.index.rebuild import rebuild
from poimen.write.reference import ingest_reference


class RenamedHashEmbedder(HashEmbedder):
    """The same vectors under another model id: only the id differs, and that must not go unnoticed."""

    def __init__(self, dim: int, model_id: str):
        super().__init__(dim)
        self.model_id = model_id


def parquet_bytes(log):
    return {t: (log / "projections" / f"{t}.parquet").read_bytes() for t in index.TABLES}


def test_rebuild_matches_and_parquet_is_byte_identical(tmp_path, template):
    log, db = built(tmp_path, template)
    manifest = json.loads((log / "manifest.json").read_text())
    before = parquet_bytes(log)
    report = rebuild(log, db, HashEmbedder(64))
    assert report.ok, str(report)
    assert set(report.tables) == set(index.TABLES)
    assert all(stored == new for stored, new in report.tables.values())
    assert report.differing_rows == []
    assert parquet_bytes(log) == before
    assert {t: m["content_hash"] for t, m in manifest["tables"].items()} == {t: n for t, (_, n) in report.tables.items()}
    assert (log / "manifest.rows.jsonl").exists()
    assert "rebuild matches the manifest" in str(report)


def test_model_id_change_is_a_difference_naming_the_rows(tmp_path, template):
    log, db = built(tmp_path, template)
    report = rebuild(log, db, RenamedHashEmbedder(64, "poimen/other-model"))
    assert not report.ok
    vector_rows = [(key, what) for table, key, what in report.differing_rows if table == "memory_vector"]
    with duckdb.connect(str(db), read_only=True) as con:
        shas = {r[0] for r in con.execute("SELECT sha FROM memory_vector").fetchall()}
    assert {key.split("|")[0] for key, _ in vector_rows} == shas  # every vector row is named
    assert all(what == "changed: model_id" for _, what in vector_rows)  # same vectors: only the id moved
    assert {t for t, _, _ in report.differing_rows} == {"memory_vector", "unit_vector"}  # every vector names its model
    text = str(report)
    assert "DIFF memory_vector" in text and "changed: model_id" in text and "poimen/other-model" in text
    # The manifest is kept, so the difference is reported again until someone accepts it.
    assert not rebuild(log, db, RenamedHashEmbedder(64, "poimen/other-model")).ok
    accepted = rebuild(log, db, RenamedHashEmbedder(64, "poimen/other-model"), accept=True)
    assert accepted.manifest_written
    assert rebuild(log, db, RenamedHashEmbedder(64, "poimen/other-model")).ok


def test_a_different_embedding_changes_the_vectors(tmp_path, template):
    log, db = built(tmp_path, template)
    report = rebuild(log, db, HashEmbedder(32))
    whats = {what for table, _, what in report.differing_rows if table == "memory_vector"}
    assert not report.ok and whats == {"changed: model_id, vector"}


def test_first_rebuild_records_the_manifest(tmp_path, template):
    import shutil

    shutil.copytree(template, tmp_path / "log")
    report = rebuild(tmp_path / "log", tmp_path / "index.duckdb", HashEmbedder(64))
    assert report.ok and report.manifest_written and (tmp_path / "log" / "manifest.json").exists()
    assert rebuild(tmp_path / "log", tmp_path / "index.duckdb", HashEmbedder(64)).ok


def test_log_growth_is_new_rows_not_drift_and_extends_the_manifest(tmp_path, template):
    log, db = built(tmp_path, template)
    doc = tmp_path / "extra.md"
    doc.write_text("# Extra\n\nA new runbook section about disk pressure.\n")
    ingest_reference(log, [doc])
    report = rebuild(log, db, HashEmbedder(64))
    assert report.ok and report.grew and report.new_runs == 1 and report.manifest_written
    assert {what for _, _, what in report.differing_rows} == {"new row (not in the manifest)"}
    assert f"{report.new_rows} new rows from 1 new run" in str(report)
    manifest = json.loads((log / "manifest.json").read_text())
    assert manifest["log_head"]["sealed_runs"] == len((log / "index.jsonl").read_text().splitlines())
    again = rebuild(log, db, HashEmbedder(64))
    assert again.ok and not again.grew and "rebuild matches the manifest" in str(again)


def test_cli_rebuild_reports_and_exits_1_on_difference(tmp_path, template):
    import shutil

    shutil.copytree(template, tmp_path / "log")
    runner = CliRunner()
    args = ["rebuild", "--from-log", "--log", str(tmp_path / "log"), "--db", str(tmp_path / "i.duckdb")]
    first = runner.invoke(app, args + ["--embedder", "poimen/hash-bow-64"])
    assert first.exit_code == 0, first.output
    assert "first one" in first.output
    same = runner.invoke(app, args, env={"POIMEN_EMBEDDER": ""})  # the manifest's embedder is used by default
    assert same.exit_code == 0 and "rebuild matches the manifest" in same.output
    other = runner.invoke(app, args + ["--embedder", "poimen/hash-bow-32"])
    assert other.exit_code == 1
    assert "memory_vector:" in other.output and "changed: model_id, vector" in other.output
    missing = runner.invoke(app, ["rebuild", "--from-log", "--log", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "no event log" in missing.output
