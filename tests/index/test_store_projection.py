"""The typed stores are projections of the log like every other table: `mem rebuild --from-log` restores them."""

from __future__ import annotations

import duckdb

from typed_helpers import fill, memory

from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections
from poimen.index.rebuild import rebuild


def test_rebuild_from_the_log_restores_the_typed_stores_byte_identically(tmp_path):
    a, b = memory(tmp_path, "dana"), memory(tmp_path, "agent-7")
    fill(a)
    b.remember("Always confirm the order id before quoting a refund.")
    db = tmp_path / "index.duckdb"
    stats = build_projections(tmp_path, db, HashEmbedder())
    assert stats.rows["store_block"] >= 2 and stats.rows["store_item"] >= 4
    parquet = {t: (tmp_path / "projections" / f"{t}.parquet").read_bytes() for t in ("store_block", "store_item")}
    con = duckdb.connect(str(db), read_only=True)
    profile = con.execute("SELECT text FROM store_block WHERE namespace = ? AND block = 'user_profile'", ["dana"]).fetchone()
    assert profile == (a.blocks()["user_profile"].text,)
    assert con.execute("SELECT DISTINCT namespace FROM store_item ORDER BY 1").fetchall() == [("agent-7",), ("dana",)]
    con.close()

    db.unlink()
    report = rebuild(tmp_path, db, HashEmbedder())
    assert report.ok, str(report)
    for table, data in parquet.items():
        assert (tmp_path / "projections" / f"{table}.parquet").read_bytes() == data
