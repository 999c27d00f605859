"""A log on an object store with conditional puts: the protocol, written once for S3 and GCS.

The commit is optimistic. Read the index and its version, append the line, put it back only if still at that
version (S3 ``If-Match: <etag>``, GCS ``ifGenerationMatch=<generation>``; only if absent when there is no index
yet); a 412 means another writer committed first, so re-read and retry. Objects cannot be appended, so a journal is
one object per turn, put only if absent: two writers of one run collide on the same turn and the loser stops
(``RunBusy``).

Nothing can keep other machines out, so an exclusive session is optimistic: it records the index's version when it
begins, and its index commits (and segment replacements) are conditional on nothing else having moved since;
otherwise ``SessionConflict``.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from abc import abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from poimen.errors import LogConflict, PoimenError, RunBusy, SessionConflict
from poimen.log.storage.base import INDEX, JOURNAL, LogStore, Update

RETIRE_BATCH = 1000  # journal turns deleted in one request at most (S3's DeleteObjects limit)
COMMIT_ATTEMPTS = 64  # a loser re-reads and retries; 64 lost races in a row means something else is wrong


class ObjectStore(LogStore):
    """A log under ``<scheme>://bucket/prefix`` on an object store with conditional puts.

    Every object has a *version* the store names in each answer: S3's ETag, GCS's generation. The protocol needs two
    conditional puts of the store: "only if absent" (segments, journal turns, the first index) and "only if still at
    this version" (each later index commit). A subclass supplies those and a few plain requests; the protocol (the
    optimistic commit, the journal as one object per turn, the claim by put-if-absent) is written once, here."""

    exclusive_turns = True
    scheme: str

    def __init__(self, uri: str):
        self.uri = uri.rstrip("/")
        self.bucket, _, prefix = self.uri[len(self.scheme) + 3:].partition("/")
        if not self.bucket:
            raise PoimenError(f"event log root {uri}: no bucket named ({self.scheme}://bucket/prefix)")
        self.prefix = f"{prefix}/" if prefix else ""
        # The bytes and version of each object this writer committed to, as it last read or put them: a commit starts
        # from them (a stale start costs a 412 and a re-read), not from a GET (every request is a round trip).
        self._committed: dict[str, tuple[bytes, str]] = {}
        self._exclusive: _Session | None = None  # the open exclusive session, if any
        # Turns of journals whose runs this writer sealed, deleted together (``journal_retire``): one delete request
        # per seal was a sixth of an L1 run's requests.
        self._retired: list[str] = []
        self._retired_lock = threading.Lock()

    # -- what each object store supplies ------------------------------------------------
    @abstractmethod
    def _get(self, name: str) -> tuple[bytes, str] | None:
        """The object's bytes and their version, read in one request (so the two belong together), or None."""

    @abstractmethod
    def _put_if(self, name: str, data: bytes, version: str | None) -> str | None:
        """Put only if the object is still at ``version`` (None: only if it does not exist); its new version, or None
        on a lost race."""

    @abstractmethod
    def _list(self, prefix: str, delimiter: bool) -> list[str]:
        """Full keys under ``prefix`` (``delimiter``: the common prefixes one level down, ending in ``/``)."""

    @abstractmethod
    def _delete_keys(self, keys: list[str]) -> None:
        """Delete these full keys (absent ones are no error), in as few requests as the store allows."""

    # -- the protocol ----------------------------------------------------------------
    def where(self, name: str) -> str:
        return f"{self.uri}/{name}"

    def _key(self, name: str) -> str:
        return self.prefix + name

    def read(self, name: str) -> bytes | None:
        session = self._exclusive
        if session is not None and name == INDEX and not session.lost:
            # The index as the session began (and its own commits left it): a newer one would make its commit fail
            # anyway, so the session reads its own copy instead of a GET each time.
            return session.index[0] if session.index[1] is not None else None
        got = self._get(name)
        if got and name in self._committed:
            self._committed[name] = got  # the newest this writer has seen: its next commit starts from it
        if got and self._exclusive is not None:
            self._exclusive.seen[name] = got[1]  # a replacement in this session is conditional on what it read
        return got[0] if got else None

    def put_if_absent(self, name: str, data: bytes) -> bool:
        return self._put_if(name, data, None) is not None

    def names(self, folder: str, suffix: str) -> list[str]:
        keys = (k[len(self._key(folder)) + 1:] for k in self._list(f"{folder}/", False))
        return sorted(k for k in keys if "/" not in k and k.endswith(suffix))

    def commit(self, name: str, update: Update) -> bytes | None:
        """Optimistic: append to the object as this writer last saw it, put it only if still at that version; on a
        412 (another writer committed since, or the first try started from stale bytes), re-read and retry. A writer
        that is the only committer of the moment makes one request per commit instead of a GET and a PUT.

        In an exclusive session the index commit is not retried: it is conditional on the version the session began
        from (or its own last commit left), and a loss is ``SessionConflict``: what the session read is stale."""
        if self._exclusive is not None and name == INDEX:
            return self._exclusive.commit(self, update)
        known = self._committed.get(name)
        for attempt in range(COMMIT_ATTEMPTS):
            if known is None:
                got = self._get(name)
                known = got if got else (b"", None)
            raw, version = known
            line = update(raw)
            if not line:  # nothing to commit (already there: stale bytes are a prefix of the object, which only grows)
                return None
            new_version = self._put_if(name, raw + line, version)
            if new_version:
                self._committed[name] = (raw + line, new_version)
                return line
            known = None
            if attempt:  # the first loss may be our own stale start; later ones are races: back off
                time.sleep(random.uniform(0, 0.01 * attempt))
        raise LogConflict(f"{self.where(name)}: lost {COMMIT_ATTEMPTS} commit races in a row")

    def journal_ids(self) -> list[str]:
        return sorted(p[len(self._key(JOURNAL)) + 1:].rstrip("/") for p in self._list(f"{JOURNAL}/", True))

    def journal_read(self, run_id: str) -> bytes | None:
        turns = self.names(f"{JOURNAL}/{run_id}", ".jsonl")
        if not turns:
            return None
        return b"".join(self.read(f"{JOURNAL}/{run_id}/{t}") or b"" for t in turns)

    def journal_append(self, run_id: str, line_no: int, line: bytes) -> None:
        if not self.put_if_absent(self._turn(run_id, line_no), line):
            raise RunBusy(run_id, self.uri)

    def _turn(self, run_id: str, line_no: int) -> str:
        return f"{JOURNAL}/{run_id}/{line_no:08d}.jsonl"

    def journal_cut(self, run_id: str, good: int) -> None:
        raise PoimenError(f"{self.where(JOURNAL)}/{run_id}: a journal object is never torn")

    def journal_drop(self, run_id: str, lines: int | None = None) -> None:
        """Delete the journal's turns: the first ``lines``, which the run's writer read or put itself (no other
        writer can have added one: each turn is put only if absent, and a writer that loses one stops), else
        every turn a listing shows."""
        if lines is not None:
            keys = [self._key(self._turn(run_id, n)) for n in range(lines)]
        else:
            keys = self._list(f"{JOURNAL}/{run_id}/", False)
        if keys:
            self._delete_keys(keys)

    def journal_retire(self, run_id: str, lines: int) -> None:
        with self._retired_lock:
            self._retired += [self._key(self._turn(run_id, n)) for n in range(lines)]
            full = len(self._retired) >= RETIRE_BATCH
        if full:
            self._flush_retired()

    def _flush_retired(self) -> None:
        with self._retired_lock:
            keys, self._retired = self._retired, []
        if keys:
            self._delete_keys(keys)

    def claim(self, run_id: str, wait: bool = False):
        # No lease to wait on: two writers of one run collide on a turn's put-if-absent instead, and the loser
        # cannot tell a live winner from a dead one, so it stops (RunBusy) and a later --resume finishes the run.
        return nullcontext()

    @contextmanager
    def session(self, shared: bool) -> Iterator[None]:
        """Shared: nothing to hold (runs are claimed by their turns' puts). Exclusive: an optimistic session that
        starts from the index as it is now (one GET: its bytes and version)."""
        if shared:
            try:
                yield
            finally:
                self._flush_retired()
            return
        if self._exclusive is not None:
            raise PoimenError(f"{self.uri}: an exclusive session is already open on this log in this writer")
        self._exclusive = _Session(self._get(INDEX) or (b"", None))
        try:
            yield
        finally:
            self._exclusive = None
            self._flush_retired()

    def replace(self, name: str, data: bytes) -> None:
        """Put only if the object is still at the version this exclusive session read (S3 ``If-Match``, GCS
        ``ifGenerationMatch``): a segment that changed since the plan read it makes the session redo its plan."""
        session = self._exclusive
        if session is None or name not in session.seen:
            raise PoimenError(f"{self.where(name)}: a sealed object is replaced only in an exclusive session that "
                              "read it first")
        version = self._put_if(name, data, session.seen[name])
        if version is None:
            raise SessionConflict(f"{self.where(name)}: changed since this exclusive session read it")
        session.seen[name] = version

    def confirm_session(self) -> None:
        session = self._exclusive
        if session is None:
            raise PoimenError(f"{self.uri}: no exclusive session is open")
        got = self._get(INDEX)
        if (got[1] if got else None) != session.index[1]:
            raise session.conflict(self)


@dataclass
class _Session:
    """An exclusive session on an object store: the index as it began (bytes, version; line count and tail hash for
    the one-line error), moved on only by its own commits, and the version of every object it read."""

    index: tuple[bytes, str | None]
    seen: dict[str, str] = field(default_factory=dict)
    lost: bool = False  # another writer committed since: from now on the index is read from the store

    def __post_init__(self) -> None:
        raw = self.index[0]
        self.lines = raw.count(b"\n")
        self.tail = hashlib.sha256(raw[raw.rstrip(b"\n").rfind(b"\n") + 1:]).hexdigest()[:12]

    def conflict(self, store: "ObjectStore") -> SessionConflict:
        self.lost = True
        return SessionConflict(f"{store.where(INDEX)}: another writer committed since this exclusive session began "
                               f"(at {self.lines} lines, tail {self.tail}); what it read is stale")

    def commit(self, store: "ObjectStore", update: Update) -> bytes | None:
        """Append after the index as this session knows it, put only if the store still has that version."""
        raw, version = self.index
        line = update(raw)
        if not line:
            return None
        new_version = store._put_if(INDEX, raw + line, version)
        if new_version is None:
            raise self.conflict(store)
        self.index = store._committed[INDEX] = (raw + line, new_version)
        return line
