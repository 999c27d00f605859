"""The forget fence, as the runner sees it: a run (and a stream record) whose commit finds a forget naming what it
read is reported ``forgotten``, counts as finished (nothing to resume), and leaves nothing in the log. The race
itself, a forget on another machine committing mid-run, is tested on S3 and GCS in object_store_contract.py."""

from __future__ import annotations

from pathlib import Path

from poimen.write.core import RunRequest, run_loops
from poimen.log import store as store_module
from poimen.log.store import EventLog
from poimen.log.verify import verify

NOTES = {
    "payroll.md": "The payroll export failed with 403 after the service account key rotated; re-issuing the key fixed it.",
    "backup.md": "The nightly backup ran out of disk on the replica; rotating the WAL archive freed 40 GB.",
}


def test_a_run_a_forget_overtook_is_reported_forgotten_and_leaves_nothing(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in NOTES.items():
        (src / name).write_text(f"# {name}\n\n{text}\n")
    fence = store_module._ForgetFence("forget-" + "0" * 64, frozenset(), frozenset(), frozenset({"payroll.md"}))
    # As if a forget of payroll.md had committed on another machine after this writer session began.
    monkeypatch.setattr(EventLog, "_forgets_since", lambda self, raw: [fence])
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=sorted(src.iterdir()), query="What failed, and what fixed it?",
                                  sources_root=src))
    status = {o.stream_id: o.status for o in result.outcomes}
    assert status == {"backup.md": "sealed", "payroll.md": "forgotten"}, status
    assert result.ok  # a forgotten run is finished: nothing to resume, nothing to fail the build on
    forgotten_run = next(o for o in result.outcomes if o.stream_id == "payroll.md")
    assert "was dropped, not sealed" in forgotten_run.error
    log = EventLog(root)
    assert b"payroll export" not in b"".join(Path(p).read_bytes() for p in (root / "segments").iterdir())
    assert not list((root / "journal").iterdir())  # neither the run's journal nor the stream record's is left
    assert "backup.md" in str([e.attrs for e in log.events() if e.kind == "run_start"])
    assert verify(root).ok
