"""`mem forget`: the text of a source or a namespace leaves the log, the index and the caches; `mem verify` still
passes; a rebuild matches; and everything else is byte-identical before and after ("nothing lost")."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from forget_helpers import DANA, ERIK, PAYROLL, QUERIES, CachedHash, make_world
from poimen.agent.projection import dump, replay
from poimen.cli.app import app
from poimen.write.core import RunRequest, run_loops
from poimen.domain import canonical_json
from poimen.embedding.embedders import HashEmbedder
from poimen.forget import NothingToForget, Target, forget
from poimen.index import build_projections, default_db
from poimen.index.rebuild import rebuild
from poimen.llm.client import ScriptedClient
from poimen.log.events import genesis, is_forgotten
from poimen.log.forgotten import forgotten
from poimen.log.runs import current, read_runs
from poimen.log.segments import parquet_bytes
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.testing.gate import scripted_gate
from forget_helpers import keep_lines

REBUILT = {"index.duckdb", "manifest.json", "manifest.rows.jsonl"}  # rebuilt by a forget; checked by content


def grams(texts, n: int = 20) -> set[bytes]:
    """Every n-character substring of the texts that stays on one line, as UTF-8 bytes."""
    return {t[i:i + n].encode() for t in texts for i in range(len(t) - n + 1) if "\n" not in t[i:i + n]}


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "LOCK"}


def holding(snapshot: dict[str, bytes], needles: set[bytes]) -> set[str]:
    return {name for name, data in snapshot.items() if any(g in data for g in needles)}


def table_rows(db_bytes: bytes, tmp: Path) -> dict[str, set[str]]:
    """Each table of an index file (given as bytes) as a set of canonical JSON rows."""
    path = tmp / f"copy-{hashlib.sha256(db_bytes).hexdigest()[:8]}.duckdb"
    path.write_bytes(db_bytes)
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        out = {}
        for name in names:
            cur = con.execute(f'SELECT * FROM "{name}"')  # names come from the catalog, not input
            cols = [d[0] for d in cur.description]
            out[name] = {canonical_json({c: (list(map(float, v)) if hasattr(v, "__len__") and not isinstance(v, str)
                                             else v) for c, v in zip(cols, r)}) for r in cur.fetchall()}
        return out
    finally:
        con.close()


def unchanged_except(before: dict[str, bytes], after: dict[str, bytes], allowed: set[str]) -> None:
    """Every file outside ``allowed`` (and the rebuilt index files) is byte-identical; none appeared or vanished."""
    for name in sorted(set(before) | set(after)):
        if name in allowed or name in REBUILT or name.startswith("projections/"):
            continue
        assert before.get(name) == after.get(name), f"{name} changed"


def check_rewritten_segments(before: dict[str, bytes], root: Path, record) -> None:
    """A rewritten segment holds the same events with the same hashes; only text and textual attrs differ."""
    from poimen.log.segments import read_parquet

    for run_id, (old_sha, new_sha) in record.segments.items():
        name = f"segments/{run_id}.parquet"
        assert hashlib.sha256(before[name]).hexdigest() == old_sha
        path = root / name
        tmp = root.parent / "before-segment.parquet"
        tmp.write_bytes(before[name])
        old_events, new_events = read_parquet(tmp), read_parquet(path)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == new_sha
        assert [e.hash for e in old_events] == [e.hash for e in new_events]
        for a, b in zip(old_events, new_events):
            same = {k: v for k, v in a.to_row().items() if k not in ("text", "attrs")}
            assert same == {k: v for k, v in b.to_row().items() if k not in ("text", "attrs")}
            assert a == b or is_forgotten(b.text) or not a.text


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("world")
    root, texts = make_world(tmp)
    return tmp, root, texts


@pytest.fixture
def copy(world, tmp_path):
    tmp, root, texts = world
    shutil.copytree(tmp, tmp_path / "w")
    return tmp_path / "w", tmp_path / "w" / "log", texts


def test_forget_source_leaves_no_trace_of_its_text_and_nothing_else_changes(copy, tmp_path):
    tmp, root, texts = copy
    needles = grams([PAYROLL])
    before = files(root)
    held = holding(before, needles)
    # The scan can see what it looks for: every kind of store holds the source's text before.
    for where in ("segments/", "journal/", "chunks/", "cache/llm/", "projections/"):
        assert any(n.startswith(where) for n in held), where
    assert {"index.duckdb", "projections/stores.duckdb"} <= held
    assert verify(root).ok

    report = forget(root, Target(source="payroll.md"), reason="holds salaries", by="test")
    after = files(root)
    assert holding(after, needles) == set(), holding(after, needles)
    assert verify(root).ok, verify(root).first
    assert rebuild(root, default_db(root), HashEmbedder(64)).ok
    assert report.index_rebuilt and report.stores_rebuilt and report.journals == 1

    log = EventLog(root)
    record = forgotten(log).records[0]
    assert record.target == "source:payroll.md" and record.reason == "holds salaries" and record.by == "test"
    forget_segment = f"segments/{report.forget_run}.parquet"
    assert not any(g in after[forget_segment] for g in needles)  # the forget event names shas, not text
    check_rewritten_segments(before, root, record)
    deleted_replies = {n for n in before if n.startswith("cache/llm/")} - set(after)
    assert deleted_replies == {n for n in held if n.startswith("cache/llm/")}
    journal = "journal/" + "f" * 64 + ".jsonl"
    segments = {f"segments/{r}.parquet" for r in record.segments}
    allowed = segments | deleted_replies | {journal, "chunks/payroll.md.parquet", "index.jsonl", forget_segment}
    allowed |= {n for n in before if n.startswith("cache/embeddings/")}
    unchanged_except(before, after, allowed)
    assert after["index.jsonl"].startswith(before["index.jsonl"])  # appended to, never rewritten

    # Cached vectors: none of a text holding the source's words is left; every one the index still embeds is.
    still = {}
    build_projections(root, tmp_path / "scratch.duckdb", CachedHash(tmp_path / "scratch", still),
                      out_dir=tmp_path / "scratch-projections")
    for name in before:
        if name.startswith("cache/embeddings/"):
            sha = Path(name).stem
            if any(g in texts[sha].encode() for g in needles):
                assert name not in after, texts[sha]
            elif sha in still:
                assert after.get(name) == before[name]

    # Index rows: every row of another source, namespace or run is there as it was.
    retired, gone = forgotten(log).runs, forgotten(log).shas
    old, new = table_rows(before["index.duckdb"], tmp_path), table_rows(after["index.duckdb"], tmp_path)
    for table, rows in old.items():
        if table == "index_head":  # what log state the index reflects: one run on, the forget's own
            assert [json.loads(r)["sealed_runs"] + 1 for r in rows] == [json.loads(r)["sealed_runs"] for r in new[table]]
            continue
        others = {r for r in rows if not any(g in r.encode() for g in needles)
                  and not any(x in r for x in retired | gone)}
        assert others <= new[table], (table, sorted(others - new[table])[:2])
    assert any("worker.md" in r for r in new["evidence"]) and not any("payroll.md" in r for r in new["evidence"])
    people = {r for t in ("store_block", "store_item") for r in old[t] if '"erik"' in r or '"dana"' in r}
    assert len(people) == 4 and people <= new["store_block"] | new["store_item"]

    # The next build re-derives what read the source without it: a new L2 run over the remaining memory.
    client = ScriptedClient([scripted_gate(keep_lines)], repeat_last=True)
    (tmp / "queries.yaml").write_text(QUERIES)
    result = run_loops(RunRequest(root=root, level="L2", queries=tmp / "queries.yaml"), client)
    assert result.ok and [o.status for o in result.outcomes] == ["sealed"]
    l2 = current(read_runs(log))[("L2", "failures", "L1-memories:failures")]
    assert "OOMKilled" in l2.final_memory and l2.run_id not in retired
    # A source left in place is not read again: its chunks are forgotten.
    again = run_loops(RunRequest(root=root, sources=[tmp / "sources" / "payroll.md"], queries=tmp / "queries.yaml"),
                      client)
    assert again.outcomes == []
    assert not holding(files(root), needles) and verify(root).ok


def test_forget_namespace_leaves_other_namespaces_byte_identical(copy, tmp_path):
    tmp, root, _ = copy
    before = files(root)
    others = {ns: dump(replay(root), ns) for ns in ("erik", "ops")}
    report = forget(root, Target(namespace="dana"), reason="asked to be forgotten", by="test")
    after = files(root)
    needles = grams(DANA)
    assert holding(before, needles) and not holding(after, needles)
    assert verify(root).ok and rebuild(root, default_db(root), HashEmbedder(64)).ok
    record = forgotten(EventLog(root)).records[0]
    assert record.target == "ns:dana" and len(record.runs) == len(DANA) and report.journals == 0
    assert all(r.startswith("sw-") for r in record.segments)
    forget_segment = f"segments/{report.forget_run}.parquet"
    unchanged_except(before, after, {f"segments/{r}.parquet" for r in record.segments} | {"index.jsonl", forget_segment})
    assert {ns: dump(replay(root), ns) for ns in ("erik", "ops")} == others
    assert set(dump(replay(root), "dana").values()) == {b""}
    erik = {r for t, rows in table_rows(before["index.duckdb"], tmp_path).items() for r in rows if '"erik"' in r}
    assert erik and erik <= {r for rows in table_rows(after["index.duckdb"], tmp_path).values() for r in rows}
    assert holding(after, grams(ERIK))  # the other namespace's words are all still there


def test_a_log_in_the_old_hash_scheme_still_verifies_and_forgets_with_witnesses(tmp_path):
    root, _ = make_world(tmp_path, scheme=1)
    log = EventLog(root)
    first = log.run_events(log.index()[0]["run_id"])
    # Scheme 1 is the hash the log always used: sha256(prev ‖ canonical row with its text).
    assert first[0].prev_hash == genesis(first[0].run_id, 1)
    row = {k: v for k, v in first[0].to_row().items() if k not in ("hash", "prev_hash")}
    assert first[0].hash == hashlib.sha256((first[0].prev_hash + "\n" + canonical_json(row)).encode()).hexdigest()
    assert verify(root).ok

    forget(root, Target(source="payroll.md"), by="test")
    assert verify(root).ok, verify(root).first
    assert not holding(files(root), grams([PAYROLL]))
    record = forgotten(log).records[0]
    assert record.witnesses and set(record.witnesses) <= set(record.segments)

    # A witness covers the tombstoned row: changing anything else in it is still caught.
    run_id, seqs = next(iter(record.witnesses.items()))
    events = log.run_events(run_id)
    seq = int(next(iter(seqs)))
    from dataclasses import replace

    events[seq] = replace(events[seq], turn=events[seq].turn + 1)
    (root / "segments" / f"{run_id}.parquet").write_bytes(parquet_bytes(events))
    report = verify(root)
    assert not report.ok and "altered" in str(report.first) and report.first.seq == seq


def test_a_tombstone_that_names_another_sha_breaks_the_chain(copy):
    _, root, _ = copy
    forget(root, Target(source="payroll.md"), by="test")
    log = EventLog(root)
    run_id = next(iter(forgotten(log).segments))
    events = log.run_events(run_id)
    seq = next(i for i, e in enumerate(events) if is_forgotten(e.text))
    from dataclasses import replace

    events[seq] = replace(events[seq], text="[forgotten:" + "0" * 64 + "]")
    (root / "segments" / f"{run_id}.parquet").write_bytes(parquet_bytes(events))
    report = verify(root)
    assert not report.ok and report.first.seq == seq


def test_a_forget_killed_before_rewriting_verifies_and_running_it_again_finishes(copy, monkeypatch):
    _, root, _ = copy

    def killed(self, run_id, data):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(EventLog, "rewrite_segment", killed)
    with pytest.raises(KeyboardInterrupt):
        forget(root, Target(source="payroll.md"), by="test")
    monkeypatch.undo()
    report = verify(root)
    assert report.ok and any("forget was interrupted" in n for n in report.notes)
    forget(root, Target(source="payroll.md"), by="test")
    report = verify(root)
    assert report.ok and not any("interrupted" in n for n in report.notes)
    assert not holding(files(root), grams([PAYROLL]))
    again = forget(root, Target(source="payroll.md"), by="test")
    assert not again.forget_run and "already forgotten" in str(again)


@pytest.mark.parametrize("args, says", [
    ([], "exactly one of"),
    (["--ns", "dana", "--source", "payroll.md"], "exactly one of"),
    (["--source", "nowhere.md"], "--source nowhere.md: no stream"),
    (["--ns", "nobody"], "--ns nobody: no store write"),
    (["--sha", "abcdef"], "--sha abcdef:"),
])
def test_a_bad_target_is_one_line_and_changes_nothing(copy, args, says):
    _, root, _ = copy
    before = files(root)
    result = CliRunner().invoke(app, ["forget", "--log", str(root), *args])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output
    assert files(root) == before


def test_forget_one_chunk_keeps_the_rest_of_its_source(copy):
    tmp, root, _ = copy
    log = EventLog(root)
    chunk = next(e for r in read_runs(log) for e in r.events
                 if e.kind == "evidence" and e.level == "L0" and "500 Internal" in e.text)
    result = CliRunner().invoke(app, ["forget", "--log", str(root), "--sha", chunk.sha[:12], "--reason", "test"])
    assert result.exit_code == 0, result.output
    assert verify(root).ok
    kept = [e for r in read_runs(log) for e in r.events if e.kind == "evidence" and e.level == "L0"]
    assert chunk.sha not in {e.sha for e in kept}
    assert {"payroll.md", "worker.md"} <= {json.loads(e.attrs)["source"] for e in kept}
    assert not holding(files(root), grams([chunk.text]))


def test_the_full_rebuild_agrees_with_the_forgotten_state(copy):
    from poimen.forget.rematerialize import Inputs, rematerialize

    tmp, root, _ = copy
    inputs = Inputs(sorted((tmp / "sources").iterdir()), tmp / "sources", 24, [tmp / "runbook.md"], None)
    forget(root, Target(source="payroll.md"), by="test")
    report = rematerialize(root, tmp / "scratch", inputs, HashEmbedder(64))
    assert report.ok, report.first_difference
    assert report.chunks_compared == 3  # the forgotten source, still on disk, is not chunked again
    assert report.carried >= len(forgotten(EventLog(root)).segments)
