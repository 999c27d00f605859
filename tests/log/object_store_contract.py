"""The object-store contract: every test here runs on each object store backend (``test_log_s3.py`` on a real S3
API, moto's server on 127.0.0.1 with s3fs as the client; ``test_log_gcs.py`` on a real GCS JSON API,
gcp-storage-emulator on 127.0.0.1 with generation preconditions, gcsfs as the client). The protocol is one
(``ObjectStore``), the conditional puts are each store's own, so the tests are one class and each backend's module
subclasses it with its server (as eventsourcing runs one recorder test case against each storage).

The same runs are written to a local folder and to the object store; every sealed segment must be byte-identical,
since the storage changes where bytes go, never which bytes. Concurrent writers are real processes
(forked ``mem run``), each committing to one ``index.jsonl`` through conditional puts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import poimen.agent.facade as facade
import poimen.forget as forget_module
from poimen.agent.facade import Memory
from poimen.agent.projection import dump, replay
from poimen.cli.app import app
from poimen.write.core import RunRequest, run_loops
from poimen.errors import LogConflict, PoimenError
from poimen.log.forgotten import FORGET_PREFIX
from poimen.log.storage import open_store
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.testing.crash import run_mem, start_mem
from poimen.testing.local_server import LocalServer

ROOT = Path(__file__).resolve().parents[2]
QUERY = "What caused the upload failure, and how was it fixed?"
INCIDENT = """Uploads of files over 1 MB failed with 413 Request Entity Too Large after the ingress chart upgrade.
The new chart dropped the proxy-body-size annotation, so nginx fell back to client_max_body_size 1m.
Restoring proxy-body-size: 64m on the ingress fixed it; the upload error rate went back to zero."""


def sources(folder: Path, n: int) -> list[Path]:
    """``n`` small distinct incident notes (different streams, so different runs)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"incident-{i:02d}.md"
        path.write_text(f"# Incident {i}\n\nService shard-{i} was affected.\n\n{INCIDENT}\n")
        out.append(path)
    return out


def build(root: str | Path, files: list[Path], resume: bool = False, query: str = QUERY) -> None:
    result = run_loops(RunRequest(root=root, sources=files, query=query, chunk_tokens=64, resume=resume,
                                  sources_root=files[0].parent))
    assert result.ok, [o.error for o in result.outcomes]


def segments(log: EventLog) -> dict[str, str]:
    """run id -> sha256 of its sealed segment, from the index (each run must appear once)."""
    entries = log.index()
    assert len({e["run_id"] for e in entries}) == len(entries), "a run is in the index twice"
    return {e["run_id"]: e["file_sha256"] for e in entries}


def mem_verify(root: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", "--log", root])
    return result.exit_code, " ".join(result.output.split())


def flip_a_byte_of(root: str, event, offset: int) -> tuple[int, str]:
    """Flip one byte of ``event``'s text in its sealed segment on the store, then run ``mem verify``."""
    log = EventLog(root)
    name = f"segments/{event.run_id}.parquet"
    raw = bytearray(log.store.read(name))
    raw[raw.find(event.text.encode()) + offset] ^= 0x01
    log.store.put(name, bytes(raw))
    return mem_verify(root)


def clean(root: str) -> EventLog:
    """The log verifies with nothing to note, every segment on the store is indexed, and no journal is left (a
    session that lost its commit dropped what it had put)."""
    log = EventLog(root)
    report = verify(root)
    assert report.ok and not report.notes, (report.problems, report.notes)
    assert set(log.store.names("segments", ".parquet")) == {e["file"][len("segments/"):] for e in log.index()}
    assert not log.journals()
    return log


OTHER_WRITER = """
import sys
from poimen.agent.facade import Memory
Memory("dana", root=sys.argv[1]).append("user_profile", sys.argv[2])
"""


def another_process_appends(root: str, text: str) -> None:
    """A writer of its own (another process, its own session and replica), reaching the server as the tests do."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", OTHER_WRITER, root, text], env=env, check=True, timeout=120)


def unique(i: int) -> bytes:
    return f"Service shard-{i} was affected".encode()


def store_bytes(log: EventLog) -> bytes:
    """Every segment and journal turn on the store, as one byte string (where forgotten text could hide)."""
    names = [f"segments/{n}" for n in log.store.names("segments", ".parquet")]
    names += [f"journal/{r}/{t}" for r in log.store.journal_ids() for t in log.store.names(f"journal/{r}", ".jsonl")]
    return b"".join(log.store.read(n) or b"" for n in names)


class ObjectStoreContract:
    """What the event log must do on an object store; a backend's test module subclasses this with its server."""

    server_type: type[LocalServer]

    @pytest.fixture(scope="class")
    @classmethod
    def cloud(cls):
        """A local server of this backend, reached through the environment as writer processes reach it."""
        with cls.server_type() as server:
            saved = {k: os.environ.get(k) for k in server.env}
            os.environ.update(server.env)
            try:
                yield server
            finally:
                for k, v in saved.items():
                    os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)

    def test_the_log_round_trips_through_s3_byte_for_byte(self, cloud, tmp_path):
        files = sources(tmp_path / "src", 2)
        local, remote = EventLog(tmp_path / "local"), EventLog(cloud.uri("round-trip"))
        build(local.root, files)
        build(remote.root, files)
        assert segments(remote) == segments(local) and len(segments(local)) == 4  # 2 L0 streams + 2 L1 runs
        # Runs in flight at once commit in whichever order they finish, so compare the events run by run.
        assert {r: remote.run_events(r) for r in segments(remote)} == {r: local.run_events(r) for r in segments(local)}
        assert not remote.journals() and verify(remote.root).ok
        build(remote.root, files)  # sealed runs are skipped: nothing is committed twice
        assert segments(remote) == segments(local)

    def test_mem_verify_reads_s3_and_names_a_flipped_byte(self, cloud, tmp_path):
        root = cloud.uri("tamper")
        build(root, sources(tmp_path / "src", 1))
        code, out = mem_verify(root)
        assert code == 0 and "2 sealed runs" in out, out
        memory = next(e for e in EventLog(root).events() if e.kind == "memory")
        code, out = flip_a_byte_of(root, memory, 5)
        assert code == 1 and f"run {memory.run_id[:16]} seq" in out, out
        assert "altered" in out or "sha does not match" in out, out

    def test_a_commit_that_loses_the_race_re_reads_and_appends_after_the_winner(self, cloud):
        """The protocol itself, made deterministic: another writer commits between our read and our conditional put."""
        store = open_store(cloud.uri("race"))
        seen: list[bytes] = []

        def loser(raw: bytes) -> bytes:
            seen.append(raw)
            if len(seen) == 1:
                store.commit("index.jsonl", lambda raw: b"winner\n")
            return b"loser\n"

        store.commit("index.jsonl", loser)
        assert seen == [b"", b"winner\n"]  # the first put (only if absent) lost; the retry read the winner's line
        assert store.read("index.jsonl") == b"winner\nloser\n"

    @pytest.mark.slow
    def test_eight_concurrent_writer_processes_commit_every_run_exactly_once(self, cloud, tmp_path):
        """Eight `mem run` processes, one source each, all committing to one index on S3 at once."""
        files = sources(tmp_path / "src", 8)
        root = cloud.uri("eight")
        writers = [start_mem(["run", "--log", root, "--query", QUERY, "--chunk-tokens", "64", str(f)],
                             tmp_path / f"writer-{i}.out", cloud.env) for i, f in enumerate(files)]
        codes = [w.wait(300) for w in writers]
        assert codes == [0] * 8, [w.output()[-500:] for w in writers]
        build(tmp_path / "local", files)  # the same runs, one writer, a local folder
        remote, local = segments(EventLog(root)), segments(EventLog(tmp_path / "local"))
        assert remote == local and len(remote) == 16  # no run lost, none twice, every event byte-identical
        report = verify(root)
        assert report.ok and report.sealed_runs == 16 and not report.notes, report.problems
        assert mem_verify(root)[0] == 0

    @pytest.mark.slow
    def test_a_writer_killed_between_segment_put_and_commit_leaves_a_verifiable_log_that_resumes(self, cloud, tmp_path):
        files = sources(tmp_path / "src", 2)
        root = cloud.uri("killed")
        argv = ["run", "--log", root, "--query", QUERY, "--chunk-tokens", "64", *map(str, files)]
        code, out = run_mem(argv, tmp_path / "killed.out", {**cloud.env, "POIMEN_TEST_KILL_AT": "after_segment_rename"})
        assert code == -9, out
        log = EventLog(root)
        report = verify(root)
        assert report.ok, report.problems
        assert any("killed while sealing" in note for note in report.notes), report.notes
        put_not_committed = set(log.store.names("segments", ".parquet")) - {e["file"][9:] for e in log.index()}
        # The segment is there, its index line is not: nobody reads it. A seal in another thread (the stream records are
        # sealed beside the loops) may have put its segment before the kill too; each such one is a noted, resumable seal.
        assert put_not_committed
        for name in put_not_committed:
            assert any(f"run {name[:16]} was killed while sealing" in note for note in report.notes), (name, report.notes)
        code, out = run_mem([*argv, "--resume"], tmp_path / "resume.out", cloud.env)
        assert code == 0, out
        build(tmp_path / "local", files)
        assert segments(log) == segments(EventLog(tmp_path / "local"))
        report = verify(root)
        assert report.ok and not report.notes and not log.journals(), (report.problems, report.notes)

    def test_a_batch_of_runs_drops_its_sealed_journals_together_and_leaves_none(self, cloud, tmp_path, monkeypatch):
        """Each seal dropped its journal with a delete request of its own: one request in six of an L1 run. The journals
        of the runs a writer seals go together when its session ends, and none is left behind."""
        from poimen.log.storage.object_store import ObjectStore

        calls: list[int] = []
        original = ObjectStore._flush_retired

        def counted(self):
            calls.append(len(self._retired))
            return original(self)

        monkeypatch.setattr(ObjectStore, "_flush_retired", counted)
        deletes: list[int] = []
        store_type = type(open_store(cloud.uri("probe")))
        inner = store_type._delete_keys
        monkeypatch.setattr(store_type, "_delete_keys", lambda self, keys: (deletes.append(len(keys)), inner(self, keys)))
        root = cloud.uri("batched")
        build(root, sources(tmp_path / "src", 6))
        log = EventLog(root)
        assert len(log.index()) == 12  # 6 loop runs and 6 stream records
        assert log.store.journal_ids() == []
        assert len(deletes) == 1 and deletes[0] == sum(calls)  # every sealed run's turns, in one delete
        assert verify(root).ok

    def test_put_if_absent_creates_once_and_never_overwrites(self, cloud):
        """The store's create condition (S3 If-None-Match: *, GCS ifGenerationMatch=0), which segments and journal turns
        rely on: a second create loses and leaves the first bytes."""
        store = open_store(cloud.uri("create-once"))
        assert store.put_if_absent("segments/a.parquet", b"first")
        assert not store.put_if_absent("segments/a.parquet", b"second")
        assert store.read("segments/a.parquet") == b"first"

    # -- whole-log writers: the exclusive session made optimistic ---------------------------------------------------

    def test_typed_memory_round_trips_on_an_object_store(self, cloud):
        root = cloud.uri("typed")
        mem = Memory("dana", root=root)
        assert mem.root == root and mem.db_path is None  # the URI as written, not a folder named "s3:"
        assert mem.remember("Hi, I'm Dana and I prefer email contact.").where == "user_profile"
        mem.append("user_profile", "likes tea")
        mem.replace("user_profile", "email", "phone")
        fact = mem.add("semantic", "Refunds over 500 EUR need a second approver.")
        assert mem.blocks()["user_profile"].text == "name: Dana; prefers phone; likes tea"
        assert [i.sha for i in mem.items("semantic")] == [fact.sha]
        log = clean(root)
        assert len(log.index()) == 4
        assert dump(replay(root), "dana") == mem.dump()  # a fresh replay of the log holds what the writer read back
        with pytest.raises(PoimenError, match=r"has no folder for the typed-store database") as err:
            mem.rebuild()
        assert "\n" not in str(err.value)

    def test_mem_remember_on_an_object_store_writes_there_and_makes_no_local_folder(self, cloud, tmp_path, monkeypatch):
        """`mem remember --log s3://bucket/prefix` was read as the local folder ``./s3:/bucket/prefix``, written
        there, and exited 0. The typed-memory commands take the log as a URI (``poimen.settings.log_root``): the
        write goes to the store, the read comes back from it, and no folder named ``s3:`` or ``gs:`` appears."""
        monkeypatch.chdir(tmp_path)
        root = cloud.uri("remember")
        runner = CliRunner()
        result = runner.invoke(app, ["remember", "--ns", "dana", "--log", root,
                                     "Hi, I'm Dana and I prefer email contact."])
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[0] == "semantic"
        shown = runner.invoke(app, ["blocks", "--ns", "dana", "--log", root, "--json"])
        assert shown.exit_code == 0 and "prefers email" in shown.output, shown.output
        assert Memory("dana", root=root).blocks()["user_profile"].text == "name: Dana; prefers email"
        assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())

    def test_a_typed_store_write_that_loses_its_commit_is_redone_after_the_winner(self, cloud, monkeypatch):
        """Deterministic: another process commits its edit of the same block between this write's read of the block and
        its commit. The loser's commit is conditional on the index it began from, so it fails; its segment and journal
        are dropped and the whole read-modify-write is redone from the winner's block. Without that condition the loser
        would append after the winner's index line a block built from the older version: the winner's edit lost."""
        root = cloud.uri("typed-race")
        mem = Memory("dana", root=root)
        mem.remember("Hi, I'm Dana and I prefer email contact.")
        real, calls = facade.append_write, []

        def interleaved(log, write):
            calls.append(write.text)
            if len(calls) == 1:
                another_process_appends(root, "works nights")
            return real(log, write)

        monkeypatch.setattr(facade, "append_write", interleaved)
        mem.append("user_profile", "likes tea")
        assert calls == ["name: Dana; prefers email; likes tea", "name: Dana; prefers email; works nights; likes tea"]
        assert mem.blocks()["user_profile"].text == "name: Dana; prefers email; works nights; likes tea"
        log = clean(root)
        writes = [e for entry in log.index() for e in log.run_events(entry["run_id"])]
        assert [w.text for w in writes] == ["name: Dana; prefers email", "name: Dana; prefers email; works nights",
                                            "name: Dana; prefers email; works nights; likes tea"]
        assert [w.parents for w in writes[1:]] == [(writes[0].sha,), (writes[1].sha,)]  # each edit follows the last
        assert dump(replay(root), "dana") == mem.dump()

    def test_a_whole_log_write_that_keeps_losing_gives_up_in_one_line_naming_the_log(self, cloud, monkeypatch):
        root = cloud.uri("typed-busy")
        mem, other = Memory("dana", root=root), Memory("ops", root=root)
        real = facade.append_write

        def always_beaten(log, write):
            if write.namespace == "dana":
                other.add("semantic", f"fact {len(EventLog(root).index())}")  # another writer commits first, every time
            return real(log, write)

        monkeypatch.setattr(facade, "append_write", always_beaten)
        monkeypatch.setattr("poimen.log.store.SESSION_ATTEMPTS", 3)
        with pytest.raises(LogConflict) as err:
            mem.add("semantic", "never written")
        assert str(err.value).startswith(f"{root}: a whole-log write lost") and "\n" not in str(err.value)
        log = clean(root)
        assert len(log.index()) == 3 and not mem.items("semantic")  # the three winners, nothing of the loser

    def test_a_segment_is_replaced_only_at_the_version_its_exclusive_session_read(self, cloud):
        """The forget's rewrite condition (S3 If-Match, GCS ifGenerationMatch on the segment): bytes put by another writer
        after this session read the segment are not overwritten, and the session is told to redo its plan. Outside an
        exclusive session, or of a segment it never read, a replacement is refused in one line."""
        from poimen.errors import SessionConflict

        name = "segments/r.parquet"
        store, other = open_store(cloud.uri("replace")), open_store(cloud.uri("replace"))
        store.put(name, b"sealed")
        with pytest.raises(PoimenError, match="only in an exclusive session that read it first"):
            store.replace(name, b"tombstoned")
        with store.session(shared=False):
            with pytest.raises(PoimenError, match="only in an exclusive session that read it first"):
                store.replace(name, b"tombstoned")
            assert store.read(name) == b"sealed"
            store.replace(name, b"tombstoned")  # still at the version read: replaced
            store.replace(name, b"tombstoned twice")  # its own replacement moved the version it holds
            other.put(name, b"another writer's")
            with pytest.raises(SessionConflict) as err:
                store.replace(name, b"stale")
        assert "changed since this exclusive session read it" in str(err.value) and "\n" not in str(err.value)
        assert other.read(name) == b"another writer's"

    def test_mem_forget_on_an_object_store_removes_the_text_and_the_log_still_verifies(self, cloud, tmp_path):
        root = cloud.uri("forget")
        build(root, sources(tmp_path / "src", 2))
        log = EventLog(root)
        assert unique(0) in store_bytes(log) and unique(1) in store_bytes(log)
        result = CliRunner().invoke(app, ["forget", "--log", root, "--source", "incident-00.md", "--reason", "test"])
        assert result.exit_code == 0, result.output
        assert "no --work-dir given" in result.output and "other machines' work dirs" in result.output, result.output
        assert unique(0) not in store_bytes(log) and unique(1) in store_bytes(log)
        assert mem_verify(root)[0] == 0
        clean(root)
        again = CliRunner().invoke(app, ["forget", "--log", root, "--source", "incident-00.md"])
        assert again.exit_code == 0 and "already forgotten" in again.output, again.output

        # Tamper detection still reads a rewritten segment: flip a byte of its tombstoned text.
        forgot = next(e for e in log.events() if e.kind == "evidence" and "[forgotten" in e.text)
        code, out = flip_a_byte_of(root, forgot, 3)
        assert code == 1 and f"run {forgot.run_id[:16]}" in out, out

    @pytest.mark.parametrize("when", ["planned", "rewritten"])
    def test_a_run_sealed_during_mem_forget_is_forgotten_too_not_lost(self, cloud, tmp_path, monkeypatch, when):
        """Deterministic: another writer seals a new run that read the source being forgotten, either between the
        forget's plan and its forget event (whose commit, conditional on the index it planned from, then fails) or after
        the forget's rewrites (whose closing check of the index then fails). Either way the forget plans again: the new
        run is kept (indexed, every event there), its copy of the text tombstoned, and a forget event follows it."""
        root = cloud.uri(f"forget-race-{when}")
        files = sources(tmp_path / "src", 2)
        build(root, files)
        # A run in flight on another machine: it read incident-00 before the forget began and seals during it. (Its
        # events are made beforehand in a local log, byte for byte what a writer to the store makes, and sealed as they
        # stand: a run started after the forget would not read the forgotten chunks at all.)
        early = EventLog(tmp_path / "in-flight")
        build(early.root, files[:1], query="Which service was affected?")
        in_flight = set(early.sealed_run_ids()) - set(EventLog(root).sealed_run_ids())
        plans, sealed = [], []

        def seal_a_new_run_once():
            if not sealed:
                with EventLog(root).writer(shared=True) as other:
                    for run_id in sorted(in_flight):
                        other.carry(run_id, early.run_events(run_id))
                sealed.append(in_flight)

        def planning(real):
            def plan(log, target):
                plans.append(real(log, target))
                if when == "planned":
                    seal_a_new_run_once()
                return plans[-1]
            return plan

        def rewriting(real):
            def rewrite(*args):
                run_id = real(*args)
                seal_a_new_run_once()
                return run_id
            return rewrite

        monkeypatch.setattr(forget_module, "make_plan", planning(forget_module.make_plan))
        if when == "rewritten":
            monkeypatch.setattr(forget_module, "_record_and_rewrite", rewriting(forget_module._record_and_rewrite))
        report = forget_module.forget(root, forget_module.Target(source="incident-00.md"), by="test")
        assert len(plans) == 2 and sealed, "the forget did not plan again"
        (new_run,) = in_flight
        assert new_run in plans[1].retire - plans[0].retire
        log = clean(root)
        entries = [e["run_id"] for e in log.index()]
        forget_runs = [r for r in entries if r.startswith(FORGET_PREFIX)]
        assert forget_runs[-1] == report.forget_run and entries.index(new_run) < entries.index(report.forget_run)
        assert len(forget_runs) == (1 if when == "planned" else 2)  # a forget event that lost its commit left nothing
        assert len(log.run_events(new_run)) > 2  # kept whole: every event, its text tombstoned
        assert unique(0) not in store_bytes(log) and unique(1) in store_bytes(log)

    def test_a_local_server_stops_on_sigterm_even_when_its_parent_ignores_sigterm(self):
        import signal

        before = signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited across exec, as one offline pytest run had it
        try:
            with self.server_type() as s:
                pass
        finally:
            signal.signal(signal.SIGTERM, before)
        assert s.process.returncode == -signal.SIGTERM  # stopped by terminate, not killed after its 10 s grace

    def test_a_local_server_closes_the_pipe_it_said_its_url_on(self):
        with self.server_type() as s:
            assert not s.process.stdout.closed
        assert s.process.stdout.closed  # an open pipe per server was a ResourceWarning (an unclosed descriptor)

    def test_a_run_in_flight_when_a_forget_commits_is_dropped_not_sealed(self, cloud, tmp_path):
        """The forget fence. Another machine's writer began its session and journaled a turn of a run over incident-00;
        then a forget of incident-00 committed (dropping that journal); then the writer seals. An object store has no
        lease the forget could hold it off with, so the run's own commit checks for forgets committed since its session
        began: the run is dropped (``RunForgotten``), no segment or journal of it is left, the forgotten text is nowhere
        on the store, and the log verifies. A run over the other source, sealed in the same session, is sealed."""
        from poimen.errors import RunForgotten
        from poimen.forget.rematerialize import as_draft

        root = cloud.uri("forget-fence")
        files = sources(tmp_path / "src", 1)
        files.append(tmp_path / "src" / "incident-01.md")  # no text in common with incident-00 (the fence goes by sha)
        files[1].write_text("# Incident 1\n\nService shard-1 was affected.\n\nThe nightly backup job ran out of disk on "
                            "the replica; rotating the WAL archive freed 40 GB and the job finished.\n")
        build(root, files)
        early = EventLog(tmp_path / "in-flight")  # the runs the other machine is making, byte for byte
        build(early.root, files, query="Which service was affected?")
        in_flight = {json.loads(e.attrs)["stream_id"]: e.run_id for e in early.events()
                     if e.kind == "run_start" and json.loads(e.attrs).get("kind", "loop") == "loop"}
        log = EventLog(root)
        with log.writer(shared=True):
            journals = {}
            for source, run_id in in_flight.items():
                events = early.run_events(run_id)
                drafts = [as_draft(e) for e in events]
                first = sum(d.kind == "run_start" or d.turn == 1 for d in drafts)  # run_start and the first turn
                journals[source] = (log.open_run(run_id), drafts[first:])
                journals[source][0].append(drafts[:first])
            report = forget_module.forget(root, forget_module.Target(source="incident-00.md"), by="test")
            dropped, kept = journals["incident-00.md"], journals["incident-01.md"]
            with pytest.raises(RunForgotten, match=report.forget_run[:16]):
                dropped[0].seal(dropped[1])
            kept[0].seal(kept[1])
        sealed = set(log.sealed_run_ids())
        assert in_flight["incident-00.md"] not in sealed and in_flight["incident-01.md"] in sealed
        assert not log.store.exists(f"segments/{in_flight['incident-00.md']}.parquet")
        assert in_flight["incident-00.md"] not in log.store.journal_ids()
        assert unique(0) not in store_bytes(log) and unique(1) in store_bytes(log)
        assert mem_verify(root)[0] == 0
