"""A Slack channel exported as day files (``<channel>/<YYYY-MM-DD>.json``): an incident whose thread goes on the next
morning, where the fix is posted, is one incident with the fix on its card; the fix's lineage reaches the second
file's line; a rebuild replays the card; forgetting either day file takes the card away."""

from __future__ import annotations

import json

import pytest

from poimen.embedding.embedders import default_embedder
from poimen.index import build_projections, default_db
from poimen.index.read import connect_read_only
from poimen.log.runs import INCIDENT_KIND, current, read_runs
from poimen.log.store import EventLog
from poimen.serve.service import ReadService
from poimen.write.core import RunRequest, run_loops
from poimen.write.incident_plan import channels

QUERY = "What failed, and how was it fixed?"
FIX = "set the queue's VisibilityTimeout to 900 and the worker now extends it while a render runs"
DAY1, DAY2 = "chan/2024-05-14.json", "chan/2024-05-15.json"
PARENT = "1715688000.000100"


def _msg(ts: int, who: str, text: str, thread: str | None = PARENT, **more) -> dict:
    out = {"type": "message", "user": who, "ts": f"{ts}.000100", "user_profile": {"real_name": who}, "text": text}
    if thread:
        out["thread_ts"] = thread
    return {**out, **more}


def _channel(tmp_path):
    t = 1715688000
    day1 = [
        _msg(t, "maria", "invoice-mailer is sending duplicates: customers got the same invoice 3 times",
             reply_count=4),
        _msg(t + 120, "maria", "renderer logs: `ReceiptHandleIsInvalid: The receipt handle has expired` on delete"),
        _msg(t + 600, "tom", "the queue's timeout is 60s and renders take 70s since 3.8.0, so messages come back"),
        _msg(t + 900, "tom", "turned invoice sending off for tonight, will do the real change tomorrow"),
        _msg(t + 3600, "ana", "lunch, back in 40", thread=None),
    ]
    day2 = [
        _msg(t + 86400, "ana", "morning all, coffee first", thread=None),
        _msg(t + 86400 + 300, "tom", FIX),
        _msg(t + 86400 + 3900, "maria", "confirmed, 0 duplicates for an hour, invoice sending back on"),
    ]
    for name, msgs in ((DAY1, day1), (DAY2, day2)):
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(msgs, indent=1))
    return [tmp_path / "src" / DAY1, tmp_path / "src" / DAY2]


def _build(tmp_path, sources):
    root = tmp_path / "log"
    for group in sources:
        result = run_loops(RunRequest(root=root, sources=group, query=QUERY, sources_root=tmp_path / "src",
                                      incidents=True))
        assert result.ok, result.source_errors
    db = default_db(root)
    build_projections(root, db, default_embedder())
    return root, db


def _cards(db) -> dict[str, list[tuple[str, str, str]]]:
    con = connect_read_only(db)
    rows = con.execute("SELECT i.memory_sha, i.stream_id, l.role, l.text, l.source FROM incident i "
                       "JOIN incident_line l USING (memory_sha) ORDER BY ALL").fetchall()
    con.close()
    out: dict[str, list[tuple[str, str, str]]] = {}
    for sha, stream, role, text, source in rows:
        out.setdefault(f"{sha}:{stream}", []).append((role, text, source))
    return out


@pytest.fixture
def channel(tmp_path):
    root, db = _build(tmp_path, [_channel(tmp_path)])
    return root, db, tmp_path


def test_the_day_files_of_one_channel_folder_are_cut_together():
    ids = ["chan/2024-05-15.json", "ops/notes.md", "chan/2024-05-14.json", "other/2024-05-14.json",
           "chan/2024-05-14.log", "chan/readme.json"]
    assert channels(ids) == [["chan/2024-05-14.json", "chan/2024-05-15.json"], ["chan/2024-05-14.log"],
                             ["chan/readme.json"], ["ops/notes.md"], ["other/2024-05-14.json"]]


def test_a_fix_posted_in_the_thread_the_next_morning_is_on_the_incident_card(channel):
    _, db, _ = channel
    cards = _cards(db)
    assert len(cards) == 1
    (key, lines), = cards.items()
    assert key.endswith(DAY1)  # the incident is where it started
    assert ("action", FIX, DAY2) in [(r, t.split(": ", 1)[-1], s) for r, t, s in lines]
    assert any(r == "symptom" and s == DAY1 for r, _, s in lines)


def test_read_one_day_at_a_time_the_fix_stays_apart(tmp_path):
    _, db = _build(tmp_path, [[p] for p in _channel(tmp_path)])
    assert not any(FIX in t for lines in _cards(db).values() for r, t, _ in lines if r == "action")


def test_the_fix_reaches_its_line_in_the_next_day_file(channel):
    root, db, _ = channel
    con = connect_read_only(db)
    sha, text = con.execute("SELECT memory_sha, text FROM incident_line WHERE source = ?", [DAY2]).fetchone()
    con.close()
    lines = [ln for ln in ReadService(root, db).show(sha).memory.lines if ln.text == text]
    assert lines and lines[0].unit is not None and lines[0].unit.where.found
    raw = (root.parent / "src" / DAY2).read_text().splitlines()
    assert FIX in "\n".join(raw[lines[0].unit.where.first_line - 1:lines[0].unit.where.last_line])


def test_the_card_read_with_the_next_day_rebuilds_byte_identically(channel):
    from poimen.forget.rematerialize import Inputs, rematerialize
    from poimen.index.build import write_manifest
    from poimen.inputs.chunk_store import CHUNK_DIR, chunk_path, write_chunks
    from poimen.inputs.chunking import DEFAULT_MAX_TOKENS

    root, _, tmp_path = channel
    runs = [r for r in read_runs(EventLog(root)) if r.kind == INCIDENT_KIND]
    assert {tuple(map(tuple, r.start.read_with or ())) for r in runs} == {((DAY2, _stream_sha(root, DAY2)),)}
    sources = [tmp_path / "src" / DAY1, tmp_path / "src" / DAY2]
    for path, sid in zip(sources, (DAY1, DAY2)):  # what the pipeline's chunks asset stores
        write_chunks(chunk_path(root / CHUNK_DIR, sid), path, tmp_path / "src", DEFAULT_MAX_TOKENS)
    write_manifest(root, build_projections(root, default_db(root), default_embedder()))
    inputs = Inputs(sources, tmp_path / "src", DEFAULT_MAX_TOKENS)
    report = rematerialize(root, tmp_path / "replica", inputs, default_embedder())
    assert report.ok, report.first_difference
    assert report.rederived.get("incident") == len(runs) and report.carried == 0


def _stream_sha(root, stream_id: str) -> str:
    return next(r.start.stream_sha for r in read_runs(EventLog(root)) if r.stream_id == stream_id and r.start)


@pytest.mark.parametrize("day", [DAY1, DAY2])
def test_forgetting_either_day_file_takes_the_card_away(channel, monkeypatch, day):
    from typer.testing import CliRunner

    from poimen.cli.app import app

    root, db, tmp_path = channel
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    res = CliRunner().invoke(app, ["forget", "--log", str(root), "--source", str(tmp_path / "src" / day),
                                   "--reason", "t"])
    assert res.exit_code == 0, res.output
    assert not any(FIX in t or s == day for lines in _cards(db).values() for _, t, s in lines)
    now = [r for r in current(read_runs(EventLog(root))).values() if r.kind == INCIDENT_KIND]
    assert not any(FIX in (r.final_memory or "") for r in now)
