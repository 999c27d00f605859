"""``mem forget``: remove the text of everything that came from a source, a namespace or a sha, and keep verifying.

Order, in one exclusive session of the log, so that a crash at any point leaves a log
that verifies and a forget that can simply be run again:

1. plan (``plan.make_plan``): the events to tombstone, the runs to retire, the journals to drop;
2. append the ``forget`` run: what was removed (shas, runs, each segment's file sha before and after), when,
   by whom and why — never the text;
3. rewrite each segment (temp file, fsync, rename: ``LogStore.replace``, the one replacement of a sealed segment)
   with its events' text tombstoned; hashes stay;
4. drop the journals of unfinished runs that read the text; check that no other writer committed since the
   plan (``EventLog.confirm_exclusive``); rewrite the chunk files;
5. rebuild the DuckDB index into a new file and rename it over the old (deleted rows leave no freed pages
   behind), record its manifest, and rebuild the typed-store database beside the log likewise;
6. delete cached model replies and embedding vectors of the removed text.

A crash after 2 leaves segments the forget event already vouches for, old or new; ``mem verify`` notes an
unfinished forget, and running the same ``mem forget`` again finishes it.

Locally the session is ``LOCK`` held exclusive: no other writer gets in. On ``s3://`` or ``gs://`` it is optimistic
(``EventLog.exclusive``): the forget event commits only if the index has not moved since the plan, each segment is
replaced only if still at the version the plan read, and the index must still be where the forget left it after
the rewrites; otherwise the whole forget is planned again (a run sealed meanwhile is in the new plan, and its text
is tombstoned too). The derivatives (chunk files, index, caches) are scrubbed in the local folder this command is
given (``work_dir``; a local log's own folder); other machines' copies are theirs to scrub (docs/scale.md).
"""

from __future__ import annotations

import getpass
import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from poimen.domain import EventKind, sha256_json, sha256_text
from poimen.forget.plan import NothingToForget, Plan, Target, make_plan, pending
from poimen.forget.scrub import (derived_texts, kept_strings, scrub_chunk_files, scrub_embedding_cache,
                                 scrub_reply_cache, scrubbed)
from poimen.llm.client import reply_cache
from poimen.log.events import EventDraft
from poimen.log.forgotten import FORGET_PREFIX, forgotten
from poimen.log.journal import run_scheme
from poimen.log.payloads import Forget
from poimen.log.segments import parquet_bytes
from poimen.log.storage.base import INDEX
from poimen.log.store import EventLog

__all__ = ["ForgetReport", "NothingToForget", "Target", "forget"]


@dataclass
class ForgetReport:
    target: str
    forget_run: str = ""  # empty when nothing was left to remove (the target was forgotten before)
    events: int = 0
    segments: int = 0
    retired: int = 0
    journals: int = 0
    chunk_files: list[str] = field(default_factory=list)
    replies: int = 0
    vectors: int = 0
    index_rebuilt: bool = False
    stores_rebuilt: bool = False
    work: str = ""  # the local folder whose derivatives were scrubbed ("": none given)
    shared_store: bool = False  # the log is on an object store: other machines keep derivatives of their own
    dry_run: bool = False
    would_retire: tuple[str, ...] = ()  # a dry run's runs to retire
    streams: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # runs of the same stream name that another file on disk holds: left alone

    def __str__(self) -> str:
        kept = (f"\nleft alone: {len(self.kept)} runs of that stream name read another file or an unknown one "
                f"({', '.join(r[:12] for r in self.kept)}); forget one by --sha") if self.kept else ""
        if self.dry_run:
            return (f"dry run, nothing changed: forgetting {self.target} would tombstone {self.events} events in "
                    f"{self.segments} segments, retire {len(self.would_retire)} runs "
                    f"({', '.join(r[:12] for r in self.would_retire) or 'none'}) and drop {self.journals} journals"
                    + (f"; streams {', '.join(self.streams)}" if self.streams else "") + kept)
        if not self.forget_run:
            head = f"{self.target}: already forgotten; nothing left in the log"
        else:
            head = (f"forgot {self.target}: {self.events} events tombstoned in {self.segments} segments, "
                    f"{self.retired} runs retired, {self.journals} journals dropped (forget run {self.forget_run[:23]})")
        tail = [f"{len(self.chunk_files)} chunk files rewritten", f"{self.replies} cached replies and "
                f"{self.vectors} cached vectors deleted"]
        if self.index_rebuilt:
            tail.append("index rebuilt and its manifest recorded")
        if self.stores_rebuilt:
            tail.append("typed-store database rebuilt")
        if not self.work:
            tail = ["no --work-dir given: no chunk files, index or caches scrubbed here"]
        lines = [head, "; ".join(tail)]
        if self.shared_store:
            lines.append("other machines' work dirs still hold derivatives of the text: run this same forget there "
                         "with their --work-dir (it scrubs their chunk files and index) and delete their cache/")
        return "\n".join(lines) + kept


def _who(target: Target) -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER", "") or "unknown"
    return f"{user}/{target.namespace}" if target.namespace else user


def forget(root: str | Path, target: Target, reason: str = "", db_path: Path | None = None, by: str = "",
           now: datetime | None = None, work_dir: str | Path | None = None, dry_run: bool = False) -> ForgetReport:
    """Forget ``target`` in the log at ``root`` (see the module doc); ``db_path`` is the index (default in the work
    folder); ``work_dir``: the local folder of the derivatives (default: a local log's own folder; a log on an object
    store has none unless named, and then only the log is scrubbed, as the report says)."""
    log = EventLog(root)
    if not log.store.exists(INDEX):
        raise NothingToForget(f"{log.root}: no event log here")
    local = isinstance(log.root, Path)
    work = Path(work_dir).expanduser() if work_dir else log.root if local else None
    report = ForgetReport(str(target), work=str(work or ""), shared_store=not local)
    removed: list[str] = []  # every attempt's: a redone forget must still scrub the caches of what an earlier one did
    by = by or _who(target)
    if dry_run:  # the plan alone: nothing is written, locked or scrubbed
        plan = make_plan(log, target)
        todo = pending(plan, log)
        report.dry_run, report.would_retire = True, tuple(sorted(plan.retire))
        report.events, report.segments = sum(len(plan.scrub[r]) for r in todo), len(todo)
        report.journals, report.streams, report.kept = len(plan.journals), tuple(sorted(plan.streams)), tuple(sorted(plan.kept))
        return report

    def once(log: EventLog) -> None:
        plan = make_plan(log, target)
        report.kept = tuple(sorted(plan.kept))
        todo = pending(plan, log)
        if todo or plan.journals:
            report.forget_run = _record_and_rewrite(log, plan, todo, removed, reason, by, now)
            report.events += sum(len(plan.scrub[r]) for r in todo)
            report.segments += len(todo)
            report.journals += len(plan.journals)
        report.retired = len(plan.retire)
        log.confirm_exclusive()  # a run sealed since the plan may carry the text: plan again
        if work is not None:
            _scrub_derivatives(log, work, Path(db_path) if db_path else None, plan, removed, report)

    log.exclusive(once)
    return report


def _scrub_derivatives(log: EventLog, work: Path, db_path: Path | None, plan: Plan, removed: list[str],
                       report: ForgetReport) -> None:
    """Steps 4–6 in the local work folder: chunk files, the index and its Parquet copies, the typed-store database,
    cached replies and vectors."""
    from poimen.index import default_db

    report.chunk_files = scrub_chunk_files(work / "chunks", plan.shas | forgotten(log).shas)
    db = db_path or default_db(work)
    # The index's Parquet copies in the work folder hold text too, even when its database lives elsewhere.
    stale = db.exists() or any((work / "projections").glob("*.parquet"))
    keep = _rebuild_index(log.root, work, db, db.exists()) if stale else None
    report.index_rebuilt = keep is not None
    report.stores_rebuilt = _rebuild_stores(log.root, work)
    kept = kept_strings(e for entry in log.index() for e in log.run_events(entry["run_id"])) if removed else []
    report.replies = scrub_reply_cache(reply_cache(work), removed, kept)
    report.vectors = scrub_embedding_cache(work / "cache" / "embeddings", derived_texts(removed), keep or set())


def _record_and_rewrite(log: EventLog, plan: Plan, todo: dict, removed: list[str], reason: str, by: str,
                        now: datetime | None) -> str:
    """Steps 2–4: the forget event first (it vouches for the new segment bytes), then the rewrites."""
    new_bytes: dict[str, bytes] = {}
    segments: dict[str, list[str]] = {}
    witnesses: dict[str, dict[str, str]] = {}
    for run_id, events in todo.items():
        scheme = run_scheme(run_id, events)
        out = []
        for e in events:
            if e.seq not in plan.scrub[run_id]:
                out.append(e)
                continue
            s = scrubbed(e, removed)
            if scheme == 1 and s != e:
                witnesses.setdefault(run_id, {})[str(e.seq)] = s.expected_hash(1)
            elif s.expected_hash(2) != e.hash:  # the scheme-2 promise: a tombstone hashes as its text
                raise AssertionError(f"run {run_id[:16]} seq {e.seq}: tombstoning changed the event hash")
            out.append(s)
        new_bytes[run_id] = parquet_bytes(out)
        # read in this session: on an object store the rewrite is conditional on the version read here
        before = log.store.read(f"segments/{run_id}.parquet") or b""
        segments[run_id] = [hashlib.sha256(before).hexdigest(), hashlib.sha256(new_bytes[run_id]).hexdigest()]
    ts = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    record = Forget(target=str(plan.target), by=by, reason=reason, ts=ts, shas=tuple(sorted(plan.shas)),
                    runs=tuple(sorted(plan.retire)), streams=tuple(sorted(plan.streams)), segments=segments, witnesses=witnesses,
                    journals=tuple(sorted(plan.journals)))
    run_id = FORGET_PREFIX + sha256_json(record.to_attrs())
    summary = (f"forgot {plan.target}: {sum(len(plan.scrub[r]) for r in todo)} events in {len(todo)} runs"
               + (f" ({reason})" if reason else ""))
    log.append_run(run_id, [EventDraft(kind=EventKind.FORGET, level="forget", sha=sha256_json(record.to_attrs()),
                                       text=summary, attrs=record.to_attrs())])
    for rid, data in new_bytes.items():
        log.rewrite_segment(rid, data)
    for journal in plan.journals:
        log.store.journal_drop(journal)
    return run_id


class _Recording:
    """An embedder that notes the sha of every text the rebuild embeds (those vectors stay in the cache)."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.shas: set[str] = set()

    def embed(self, texts):
        self.shas.update(sha256_text(t) for t in texts)
        return self.inner.embed(texts)


def _rebuild_index(log_root: Path | str, work: Path, db: Path, replace_db: bool) -> set[str]:
    """Rebuild the index into a fresh file renamed over the old one (or dropped, with no database to replace), and
    record the manifest; returns the text shas it embedded. The manifest is re-recorded as ``--accept`` would: the
    forget event says why rows went away."""
    from poimen.embedding.embedders import DEFAULT_MODEL, embedder_for
    from poimen.index.build import PROJECTION_DIR, build_projections, read_manifest, write_manifest

    stored = read_manifest(work)
    model_id = (stored[0].get("model_ids", {}).get("embedder") if stored else None) or DEFAULT_MODEL
    embedder = _Recording(embedder_for(model_id, cache_dir=work / "cache" / "embeddings"))
    tmp = db.with_name(f".{db.name}.forget.tmp")
    for stale in (tmp, Path(f"{tmp}.wal")):
        stale.unlink(missing_ok=True)
    stats = build_projections(log_root, tmp, embedder, out_dir=work / PROJECTION_DIR)
    if replace_db:
        Path(f"{db}.wal").unlink(missing_ok=True)
        os.replace(tmp, db)
    else:
        tmp.unlink()
    write_manifest(work, stats)
    return embedder.shas


def _rebuild_stores(log_root: Path | str, work: Path) -> bool:
    """The typed-store database in the work folder (``mem``'s store rebuild), replayed into a fresh file."""
    from poimen.agent.projection import default_db, rebuild

    db = default_db(work)
    if not db.exists():
        return False
    tmp = db.with_name(f".{db.name}.forget.tmp")
    tmp.unlink(missing_ok=True)
    rebuild(log_root, tmp)
    Path(f"{db}.wal").unlink(missing_ok=True)
    os.replace(tmp, db)
    return True
