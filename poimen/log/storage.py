"""Where a log's files live: a local folder or an object store, behind one small interface.

The log needs five things of its storage: whole-object reads, atomic whole-object
puts (a reader sees the old bytes or the new, never half), put-if-absent, a
listing, and one *commit*: an append to ``index.jsonl`` that concurrent writers
of different runs can all make without losing each other's lines.

- ``LocalStore`` (a folder, or ``file://``): puts are temp-file, fsync, rename;
  put-if-absent is ``O_EXCL``; the commit is an exclusive ``flock`` on
  ``index.jsonl`` held while the writer reads the tail and appends its line.
  Journals are one file per run, appended with fsync and claimed by a
  non-blocking ``flock`` on that file (one writer per run).
- ``ObjectStore``, an object store with conditional puts: ``S3Store``
  (``s3://``, through s3fs; the version of an object is its ETag) and
  ``GCSStore`` (``gs://``, through gcsfs; its generation). The commit is
  optimistic. Read the index and its version, append the line, put it back
  only if still at that version (S3 ``If-Match: <etag>``, GCS
  ``ifGenerationMatch=<generation>``; only if absent when there is no index
  yet); a 412 means another writer committed first, so re-read and retry.
  Objects cannot be appended, so a journal is one object per turn, put only if
  absent: two writers of one run collide on the same turn and the loser stops
  (``RunBusy``).

Whole-log writers (typed-store writes, ``mem forget``) read the log and append
after what they read, so they need no other commit between their read and
theirs: an *exclusive session*. Locally it is ``LOCK`` held exclusive: no
other writer gets in. On an object store nothing can keep other machines out,
so the session is optimistic: it records the index's version when it begins,
and its index commits (and segment replacements) are conditional on nothing
else having moved since; otherwise ``SessionConflict``, and
``EventLog.exclusive`` redoes the caller's whole read-modify-write.

Names are ``/``-separated and relative to the root. ``docs/scale.md`` has the
protocol and its failure cases.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from poimen.errors import LogConflict, LogLocked, PoimenError, RunBusy, SessionConflict

JOURNAL = "journal"
INDEX = "index.jsonl"
RETIRE_BATCH = 1000  # journal turns deleted in one request at most (S3's DeleteObjects limit)
COMMIT_ATTEMPTS = 64  # a loser re-reads and retries; 64 lost races in a row means something else is wrong

Update = Callable[[bytes], "bytes | None"]  # current object bytes -> bytes to append (None: nothing to commit)


class LogStore(ABC):
    """The storage of one event log."""

    uri: str
    # Each turn of a journal is put only if absent (one object per turn). A writer that starts a run whose journal
    # it did not see, one begun since its session listed the journals, then fails on its first put (RunBusy) rather
    # than write over it, so the writer need not read the journal of a run its listing did not show.
    exclusive_turns: bool = False

    @abstractmethod
    def where(self, name: str) -> Path | str: ...

    @abstractmethod
    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None if it does not exist."""

    @abstractmethod
    def exists(self, name: str) -> bool: ...

    @abstractmethod
    def put(self, name: str, data: bytes) -> None:
        """Replace the object whole: readers see the old bytes or the new ones."""

    @abstractmethod
    def replace(self, name: str, data: bytes) -> None:
        """Replace a sealed object on purpose (``mem forget`` rewriting a segment with its text tombstoned), inside
        an exclusive session that read it: ``SessionConflict`` if it changed since that read."""

    def stamp(self, name: str) -> object | None:
        """A token that changes whenever the object does, got without reading it (None: no such token short of a
        request, so a caller that would skip a read on an unchanged token reads instead)."""
        return None

    @abstractmethod
    def confirm_session(self) -> None:
        """In an exclusive session: ``SessionConflict`` unless the index is still where the session (and its own
        commits) left it. A writer that must not end with another writer's commit after its plan checks here."""

    @abstractmethod
    def put_if_absent(self, name: str, data: bytes) -> bool:
        """Create the object; False (and nothing written) if it already exists."""

    @abstractmethod
    def names(self, folder: str, suffix: str) -> list[str]:
        """Names (without the folder) of the objects directly in ``folder`` that end in ``suffix``, sorted."""

    @abstractmethod
    def delete(self, name: str) -> None: ...

    @abstractmethod
    def commit(self, name: str, update: Update) -> bytes | None:
        """Append ``update(current)`` to ``name`` as the one committer of that moment; returns what was appended."""

    @abstractmethod
    def exists_root(self) -> bool: ...

    # -- journals: a live run's whole turns, in order ---------------------------------
    @abstractmethod
    def journal_ids(self) -> list[str]: ...

    @abstractmethod
    def journal_read(self, run_id: str) -> bytes | None: ...

    @abstractmethod
    def journal_append(self, run_id: str, line_no: int, line: bytes) -> None: ...

    @abstractmethod
    def journal_cut(self, run_id: str, good: int) -> None:
        """Cut a torn last line (only a local journal can have one: each object-store turn is put whole)."""

    def journal_retire(self, run_id: str, lines: int) -> None:
        """Drop the journal of a run this writer has just sealed. It may go later, within the writer's session: a
        sealed run's leftover journal is only noted by ``verify`` and dropped by the next writer's session."""
        self.journal_drop(run_id, lines)

    @abstractmethod
    def journal_drop(self, run_id: str, lines: int | None = None) -> None:
        """Remove a journal; ``lines``: its writer's count of whole turns in it (None: whatever is there)."""

    @abstractmethod
    def claim(self, run_id: str, wait: bool = False):
        """A context manager that makes this process the one writer of ``run_id``: ``RunBusy`` if another writer
        has it, or (``wait``, where the store can tell a live writer) once that writer lets go."""

    @abstractmethod
    def session(self, shared: bool):
        """A writer session: many shared ones at once (writers of different runs), or one exclusive one, whose
        index commits and replacements follow no other writer's commit made since it began."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _durable_temp(path: Path, data: bytes) -> Path:
    """``data`` written and fsynced under a temp name beside ``path``, ready to be renamed or linked into place (a
    name must never reach the disk before its bytes do)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def _flock(fh, mode: int) -> bool:
    try:
        fcntl.flock(fh.fileno(), mode)
        return True
    except BlockingIOError:
        return False


class LocalStore(LogStore):
    def __init__(self, root: Path):
        self.root = Path(root)
        self.uri = str(self.root)

    def where(self, name: str) -> Path:
        return self.root / name

    def exists_root(self) -> bool:
        return self.root.exists()

    def read(self, name: str) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def put(self, name: str, data: bytes) -> None:
        path = self.root / name
        _durable_temp(path, data).replace(path)
        _fsync_dir(path.parent)

    def replace(self, name: str, data: bytes) -> None:
        self.put(name, data)  # the exclusive writer session (LOCK) keeps other writers out meanwhile

    def confirm_session(self) -> None:
        """Nothing to check: the exclusive ``LOCK`` kept every other writer out of the whole session."""

    def stamp(self, name: str) -> tuple[int, int]:
        try:
            st = (self.root / name).stat()
        except FileNotFoundError:
            return (0, 0)
        return (st.st_size, st.st_mtime_ns)

    def put_if_absent(self, name: str, data: bytes) -> bool:
        path = self.root / name
        tmp = _durable_temp(path, data)  # its bytes on disk before its name: an index line may name it next
        try:
            os.link(tmp, path)  # O_EXCL semantics with whole content: the name appears only with all its bytes
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        _fsync_dir(path.parent)
        return True

    def names(self, folder: str, suffix: str) -> list[str]:
        d = self.root / folder
        return sorted(p.name for p in d.glob(f"*{suffix}") if not p.name.startswith(".")) if d.exists() else []

    def delete(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def commit(self, name: str, update: Update) -> bytes | None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # blocking: a commit is one short append
            try:
                fh.seek(0)
                raw = fh.read()
                if raw and not raw.endswith(b"\n"):  # a committer died mid-line; we hold the lock, so it is dead
                    raw = raw[: raw.rfind(b"\n") + 1]
                    fh.truncate(len(raw))
                    os.fsync(fh.fileno())
                line = update(raw)
                if line:
                    fh.write(line)
                    fh.flush()
                    os.fsync(fh.fileno())
                return line
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _journal(self, run_id: str) -> Path:
        return self.root / JOURNAL / f"{run_id}.jsonl"

    def journal_ids(self) -> list[str]:
        return [n[: -len(".jsonl")] for n in self.names(JOURNAL, ".jsonl")]

    def journal_read(self, run_id: str) -> bytes | None:
        return self.read(f"{JOURNAL}/{run_id}.jsonl")

    def journal_append(self, run_id: str, line_no: int, line: bytes) -> None:
        with self._journal(run_id).open("ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def journal_cut(self, run_id: str, good: int) -> None:
        with self._journal(run_id).open("r+b") as fh:
            fh.truncate(good)
            os.fsync(fh.fileno())

    def journal_drop(self, run_id: str, lines: int | None = None) -> None:
        self._journal(run_id).unlink(missing_ok=True)  # one file: the claim's flock keeps other writers out

    @contextmanager
    def claim(self, run_id: str, wait: bool = False) -> Iterator[None]:
        path = self._journal(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as fh:  # creates it: an empty journal is a run that has not finished a turn yet
            if not _flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)):
                raise RunBusy(run_id, str(self.root))
            yield

    @contextmanager
    def session(self, shared: bool) -> Iterator[None]:
        """``LOCK``: shared by writers of runs (each run claimed on its own), exclusive for whole-log writers."""
        self.root.mkdir(parents=True, exist_ok=True)
        for sub in (JOURNAL, "segments"):
            (self.root / sub).mkdir(exist_ok=True)
        with (self.root / "LOCK").open("a+") as fh:
            if not _flock(fh, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB):
                fh.seek(0)
                holder = fh.read().strip() or "unknown"
                raise LogLocked(f"{self.root}: another writer holds the log lock (pid {holder}); wait for it or stop it")
            fh.seek(0)
            fh.truncate()  # shared holders overwrite each other: the error names the latest of them
            fh.write(str(os.getpid()))
            fh.flush()
            yield


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


class S3Store(ObjectStore):
    """A log under ``s3://bucket/prefix`` through s3fs (credentials and endpoint: the usual AWS or fsspec settings).
    Versions are ETags: ``If-None-Match: *`` creates, ``If-Match: <etag>`` replaces."""

    scheme = "s3"

    def __init__(self, uri: str, **storage_options):
        import s3fs

        super().__init__(uri)
        # fsspec hands out one cached filesystem per set of arguments, and its client reads the endpoint from the
        # environment once: name the endpoint in the arguments, so a process whose environment names another
        # server (a test's, the bench's) gets a filesystem for that one.
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint and "endpoint_url" not in storage_options:
            storage_options = {**storage_options, "endpoint_url": endpoint}
        self.fs = s3fs.S3FileSystem(**storage_options)

    def _call(self, method: str, **kwargs):
        return self.fs.call_s3(method, Bucket=self.bucket, **kwargs)

    def _get(self, name: str) -> tuple[bytes, str] | None:
        from fsspec.asyn import sync

        async def get():
            try:
                resp = await self.fs._call_s3("get_object", Bucket=self.bucket, Key=self._key(name))
            except FileNotFoundError:
                return None
            async with resp["Body"] as body:
                return await body.read(), resp["ETag"]

        return sync(self.fs.loop, get)

    def exists_root(self) -> bool:
        return bool(self._call("list_objects_v2", Prefix=self.prefix, MaxKeys=1).get("KeyCount"))

    def exists(self, name: str) -> bool:
        try:
            self._call("head_object", Key=self._key(name))
        except FileNotFoundError:
            return False
        return True

    def put(self, name: str, data: bytes) -> None:
        self._call("put_object", Key=self._key(name), Body=data)

    def _put_if(self, name: str, data: bytes, version: str | None) -> str | None:
        condition = {"IfMatch": version} if version else {"IfNoneMatch": "*"}
        try:
            return self._call("put_object", Key=self._key(name), Body=data, **condition)["ETag"]
        except Exception as exc:  # s3fs maps a 412 to FileExistsError or wraps it in OSError
            if precondition_failed(exc):
                return None
            raise

    def _list(self, prefix: str, delimiter: bool) -> list[str]:
        out, token = [], {}
        while True:
            resp = self._call("list_objects_v2", Prefix=self._key(prefix), **({"Delimiter": "/"} if delimiter else {}),
                              **token)
            out += [p["Prefix"] for p in resp.get("CommonPrefixes", [])] if delimiter else \
                [o["Key"] for o in resp.get("Contents", [])]
            if not resp.get("IsTruncated"):
                return out
            token = {"ContinuationToken": resp["NextContinuationToken"]}

    def delete(self, name: str) -> None:
        self._call("delete_object", Key=self._key(name))

    def _delete_keys(self, keys: list[str]) -> None:
        for i in range(0, len(keys), 1000):
            self._call("delete_objects", Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]], "Quiet": True})


class GCSStore(ObjectStore):
    """A log under ``gs://bucket/prefix`` through gcsfs, speaking GCS's JSON API. Versions are generations:
    ``ifGenerationMatch=0`` creates, ``ifGenerationMatch=<generation>`` replaces, and a media download names the
    generation of the bytes it returns (``x-goog-generation``), so a read and its version come in one request.

    The endpoint is gcsfs's: ``STORAGE_EMULATOR_HOST`` or ``endpoint_url``; with an emulator and no ``token`` the
    client is anonymous, as Google's own clients are against one. gcsfs's plain ``GCSFileSystem`` is used, not its
    experimental zonal-bucket subclass, which probes each bucket over gRPC before the first request."""

    scheme = "gs"

    def __init__(self, uri: str, **storage_options):
        from gcsfs.core import GCSFileSystem

        super().__init__(uri)
        # gcsfs reads STORAGE_EMULATOR_HOST at each request, so a cached filesystem follows it; only the token
        # differs for an emulator
        if os.environ.get("STORAGE_EMULATOR_HOST") and "token" not in storage_options:
            storage_options = {**storage_options, "token": "anon"}
        self.fs = GCSFileSystem(**storage_options)

    def _call(self, method: str, path: str, *args, **kwargs):
        from fsspec.asyn import sync

        return sync(self.fs.loop, self.fs._call, method, path, *args, **kwargs)

    def _object(self, name: str) -> tuple[str, str]:
        return self.bucket, self._key(name)

    def _get(self, name: str) -> tuple[bytes, str] | None:
        try:
            headers, body = self._call("GET", self.fs.url(f"{self.bucket}/{self._key(name)}"))
        except FileNotFoundError:
            return None
        generation = headers.get("x-goog-generation")
        if not generation:
            raise PoimenError(f"{self.where(name)}: the server named no generation (x-goog-generation) for the "
                              "object it returned, so a commit could not be made conditional on it")
        return body, generation

    def exists_root(self) -> bool:
        return bool(self._call("GET", "b/{}/o", self.bucket, prefix=self.prefix, maxResults=1,
                               json_out=True).get("items"))

    def exists(self, name: str) -> bool:
        try:
            self._call("GET", "b/{}/o/{}", *self._object(name), json_out=True)
        except FileNotFoundError:
            return False
        return True

    def _upload(self, name: str, data: bytes, **condition) -> str:
        """One media upload (the whole object in one request); the new object's generation."""
        obj = self._call("POST", f"{self.fs._location}/upload/storage/v1/b/{quote(self.bucket, safe='')}/o",
                         uploadType="media", name=self._key(name), data=data, json_out=True,
                         headers={"Content-Type": "application/octet-stream"}, **condition)
        return str(obj["generation"])

    def put(self, name: str, data: bytes) -> None:
        self._upload(name, data)

    def _put_if(self, name: str, data: bytes, version: str | None) -> str | None:
        try:
            return self._upload(name, data, ifGenerationMatch=version or "0")
        except FileExistsError:  # gcsfs's name for a 412
            return None

    def _list(self, prefix: str, delimiter: bool) -> list[str]:
        out, token = [], None
        while True:
            resp = self._call("GET", "b/{}/o", self.bucket, prefix=self._key(prefix), pageToken=token,
                              delimiter="/" if delimiter else None, json_out=True)
            out += resp.get("prefixes", []) if delimiter else [o["name"] for o in resp.get("items", [])]
            token = resp.get("nextPageToken")
            if not token:
                return out

    def delete(self, name: str) -> None:
        self._delete_keys([self._key(name)])

    def _delete_keys(self, keys: list[str]) -> None:
        from fsspec.asyn import sync

        # gcsfs batches up to 100 deletes a request on GCS (an emulator gets one request each)
        results = sync(self.fs.loop, self.fs._delete_files, [f"{self.bucket}/{k}" for k in keys], 100)
        failed = [r for r in results if isinstance(r, Exception) and not isinstance(r, FileNotFoundError)]
        if failed:
            raise PoimenError(f"{self.uri}: deleting {len(failed)} of {len(keys)} objects failed: {failed[0]}")


def precondition_failed(exc: BaseException) -> bool:
    """True if ``exc`` (or what it wraps) is S3's answer to a failed condition: 412, or 409 for a concurrent one."""
    while exc is not None:
        if isinstance(exc, FileExistsError):
            return True
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        if code in ("PreconditionFailed", "ConditionalRequestConflict"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def local_folder(root: str | Path, needs: str) -> Path:
    """The folder of a local log root (a path or ``file://``); for an object store URI, one line saying that
    ``needs`` (what the caller keeps beside the log) wants a local folder."""
    text = str(root)
    if text.startswith("file://"):
        return Path(text[len("file://"):])
    if "://" in text:
        raise PoimenError(f"event log root {text}: {needs} needs a local folder, not an object store")
    return Path(text).expanduser()


def open_store(root: str | Path, **storage_options) -> LogStore:
    """The store for a log root: a path or ``file://`` folder, ``s3://bucket/prefix`` or ``gs://bucket/prefix``."""
    text = str(root)
    for store in (S3Store, GCSStore):
        if text.startswith(f"{store.scheme}://"):
            return store(text, **storage_options)
    if "://" in text and not text.startswith("file://"):
        raise PoimenError(f"event log root {text}: only local folders, file://, s3:// and gs:// are supported")
    return LocalStore(local_folder(text, "a local log"))
