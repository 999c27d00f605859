"""What the log has forgotten, read back from its ``forget`` events: the one rule every reader shares.

A forget run (run id ``forget-…``) holds one ``forget`` event. Read together they say:

- ``shas``: content no build may take in again (the runner and the chunk store skip these chunks);
- ``streams``: sources forgotten whole, which no build reads again (a file left in place, or re-chunked);
- ``runs``: runs retired: ``read_runs`` leaves them out, so they are not current, projections do not
  read them, and the next build re-derives what they held without the forgotten text;
- ``segments``: the file sha256s a rewritten segment may now have (``verify`` accepts them);
- ``witnesses``: hashes of tombstoned scheme-1 rows, by (run id, seq).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poimen.domain import EventKind
from poimen.log.payloads import Forget
from poimen.log.segments import FORGET_PREFIX
from poimen.log.store import EventLog


@dataclass(frozen=True)
class Forgotten:
    shas: frozenset[str] = frozenset()
    streams: frozenset[str] = frozenset()
    runs: frozenset[str] = frozenset()
    segments: dict[str, frozenset[str]] = field(default_factory=dict)
    witnesses: dict[tuple[str, int], str] = field(default_factory=dict)
    records: tuple[Forget, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.records)


def forgotten(log: EventLog, entries: list[dict] | None = None) -> Forgotten:
    """Every forget event of the sealed log, folded (``entries``: an index already read)."""
    records = []
    for entry in log.index() if entries is None else entries:
        if entry["run_id"].startswith(FORGET_PREFIX):
            records.extend(Forget.from_event(e) for e in log.run_events(entry["run_id"]) if e.kind == EventKind.FORGET)
    return fold(records)


def fold(records: list[Forget]) -> Forgotten:
    shas: set[str] = set()
    streams: set[str] = set()
    runs: set[str] = set()
    segments: dict[str, set[str]] = {}
    witnesses: dict[tuple[str, int], str] = {}
    for r in records:
        shas.update(r.shas)
        streams.update(r.streams)
        runs.update(r.runs)
        for run_id, (_before, after) in r.segments.items():
            segments.setdefault(run_id, set()).add(after)
        for run_id, by_seq in r.witnesses.items():
            witnesses.update({(run_id, int(seq)): h for seq, h in by_seq.items()})
    return Forgotten(frozenset(shas), frozenset(streams), frozenset(runs), {k: frozenset(v) for k, v in segments.items()}, witnesses,
                     tuple(records))
