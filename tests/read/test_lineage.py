"""``mem show``: memory → line → turn and gate → evidence chunk → unit → source file:line, as a tree and as JSON."""

from __future__ import annotations

import json
from collections import Counter

import duckdb
import pytest
from typer.testing import CliRunner

from lineage_helpers import build
from poimen.inputs.readers.jsonrecords import legacy_text
from poimen.cli.app import app
from poimen.inputs.source_lines import SourceFinder, SourceText, squash


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("lineage"))


def final_memory(db) -> tuple[str, str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT final_memory_sha, stream_id FROM run WHERE level = 'L1' AND chunks_used > 0 "
                           "AND stream_id = 'channel.jsonl'").fetchone()


def show(*args) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["show", *args])
    return res.exit_code, res.output


def file_text(path: str, first: int, last: int) -> str:
    """The file's lines first..last as the chunker reads them (a JSON-lines record as its text), squashed."""
    lines = open(path, encoding="utf-8").read().split("\n")[first - 1:last]
    return squash(" ".join(_record_text(x) if path.endswith(".jsonl") else x for x in lines))


def _record_text(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    text = legacy_text(record) if isinstance(record, dict) else None
    return line if text is None else text


def test_show_walks_memory_to_line_to_evidence_to_file_line(built):
    log, db, src = built
    sha, stream = final_memory(db)
    code, out = show(sha[:10], "--log", str(log), "--sources", str(src), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["kind"] == "memory" and data["sha"] == sha
    memory = data["memory"]
    lines = memory["lines"]
    assert [ln["text"] for ln in lines] == [x.strip() for x in memory["text"].split("\n") if x.strip()]
    for ln in lines:
        gate, chunk, unit = ln["gate"], ln["evidence"], ln["unit"]
        # the turn that produced the line: a gate of this memory's run that opened on the line's chunk
        assert gate["run_id"] == memory["run_id"] and gate["update"] and gate["kind"] == "gate"
        assert chunk["source"] == stream and ln["text"] in chunk["text"]
        # the unit: verbatim in the chunk at its span, and found in the source file at the lines named
        assert unit["span_start"] >= 0 and chunk["text"][unit["span_start"]:].startswith(ln["text"])
        where = unit["where"]
        assert where["path"] == str(src / stream) and where["first_line"] > 0
        assert squash(ln["text"]) in file_text(where["path"], where["first_line"], where["last_line"])
        # the chunk spans the unit's lines
        assert chunk["where"]["first_line"] <= where["first_line"] <= where["last_line"] <= chunk["where"]["last_line"]

    # the tree says the same things: each line's sha, its turn, its chunk, and file:line
    code, tree = show(sha[:10], "--log", str(log), "--sources", str(src))
    assert code == 0, tree
    guides = str.maketrans("", "", "│├└─")  # rich wraps at the terminal width, a long path too, under tree guides
    flat = "".join(tree.translate(guides).split())

    def shown(text: str) -> bool:
        return "".join(text.translate(guides).split()) in flat

    for ln in lines:
        where = ln["unit"]["where"]
        lines_label = (f"{where['first_line']}" if where["first_line"] == where["last_line"]
                       else f"{where['first_line']}-{where['last_line']}")
        assert shown(f"line {ln['line_no']} · {ln['sha'][:12]}")
        assert shown(f"turn {ln['gate']['turn']} of run {memory['run_id'][:12]}: gate yes")
        assert shown(f"evidence {ln['evidence']['sha'][:12]} · {stream}#{ln['evidence']['position']}")
        assert shown(f"source {where['path']}:{lines_label}")


def test_show_finds_the_files_a_run_read_from_elsewhere_without_sources(built, monkeypatch, tmp_path):
    # `mem run` over files outside the working directory notes their root beside the log; `mem show` looks there.
    log, db, src = built
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POIMEN_SOURCES", raising=False)
    sha, stream = final_memory(db)
    code, out = show(sha[:10], "--log", str(log), "--json")
    assert code == 0, out
    wheres = [ln["unit"]["where"] for ln in json.loads(out)["memory"]["lines"]]
    assert wheres and all(w["path"] == str(src.resolve() / stream) and w["first_line"] > 0 for w in wheres)
    # The hint is outside the log's hash chain: a root that is gone leaves lines unknown, never wrong.
    hint = log / "sources.roots"
    noted = hint.read_text()
    hint.write_text(str(tmp_path / "gone") + "\n")
    try:
        code, out = show(sha[:10], "--log", str(log), "--json")
    finally:
        hint.write_text(noted)
    assert code == 0 and all(ln["unit"]["where"]["first_line"] == 0 for ln in json.loads(out)["memory"]["lines"])


def test_show_a_line_an_evidence_chunk_and_up_the_chain(built):
    log, db, src = built
    sha, _ = final_memory(db)
    memory = json.loads(show(sha, "--log", str(log), "--sources", str(src), "--json")[1])["memory"]
    line = memory["lines"][0]
    code, out = show(line["sha"][:16], "--log", str(log), "--sources", str(src), "--kind", "line", "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "line" and data["line"]["evidence"]["sha"] == line["evidence"]["sha"]
    assert data["line"]["unit"]["where"] == line["unit"]["where"]
    assert sha in {r["sha"] for r in data["up"]}  # held by: back up to the memory
    code, out = show(line["evidence"]["sha"], "--log", str(log), "--sources", str(src), "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "evidence" and data["evidence"]["where"]["first_line"] > 0
    assert line["sha"] in {r["sha"] for r in data["up"] if r["kind"] == "line"}  # derived: the line it gave


def test_bad_sha_is_one_line_and_exit_1(built):
    log, db, _ = built
    with duckdb.connect(str(db), read_only=True) as con:
        shas = {s for (s,) in con.execute("SELECT sha FROM memory UNION SELECT sha FROM evidence UNION "
                                          "SELECT text_sha FROM unit WHERE kind = 'memory'").fetchall()}  # what show resolves
    common, n = Counter(s[0] for s in shas).most_common(1)[0]
    missing = next(c * 64 for c in "0123456789abcdef" if not any(s.startswith(c * 3) for s in shas))
    for bad, said in [("zz-not-hex", "not a sha"), (missing, "no memory, line, evidence or store write"),
                      (common, f"ambiguous prefix, {n} shas"), (next(iter(shas)), "unknown kind")]:
        extra = ["--kind", "nope"] if said == "unknown kind" else []
        code, out = show(bad, "--log", str(log), *extra)
        assert code == 1, out
        assert out.strip().count("\n") == 0 and said in out and repr(bad) in out, out
    code, out = show("abcd", "--log", str(log.parent / "nowhere"))
    assert code == 1 and out.strip().count("\n") == 0 and "no index here" in out


def test_source_text_finds_wrapped_prose_records_and_the_nth_repeat(tmp_path):
    md = tmp_path / "notes.md"
    md.write_text("# Title\n\nThe worker was OOMKilled\nafter the batch size went up.\n\nok\n\nok\n")
    text = SourceText(md)
    at = text.find("The worker was OOMKilled after the batch size went up.")
    assert at is not None and (text.line_at(at[0]), text.line_at(at[1] - 1)) == (3, 4)
    first, second = text.find("ok", 0), text.find("ok", 1)
    assert text.line_at(first[0]) == 6 and text.line_at(second[0]) == 8 and text.find("ok", 2) is None
    rec = tmp_path / "chat.jsonl"
    rec.write_text('{"ts": "t1", "user": "ana", "text": "hello"}\n\n{"ts": "t2", "user": "bo", "text": "fixed it"}\n')
    ref = SourceFinder([tmp_path]).locate("chat.jsonl", "[t2] bo: fixed it")
    assert (ref.first_line, ref.last_line, ref.path) == (3, 3, str(rec))
    gone = SourceFinder([tmp_path]).locate("elsewhere.log", "x")
    assert not gone.found and "source not found" in gone.label()
