"""``Memory``: typed memory for one agent or user, the one class an agent (or its host) talks to.

    mem = Memory("dana", root="/tmp/poimen")
    mem.remember("Hi, I'm Dana and I prefer email contact.").store   # 'semantic'
    mem.replace("user_profile", "prefers email", "prefers phone")
    print(mem.compose("refund for ORD-3300").text)

Every write becomes an event in the event log before it is visible; every read
comes from the store projection of that log and names the store and sha of
what it returns. A ``Memory`` sees its own namespace only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from poimen.agent import projection as proj
from poimen.agent.archive import Archive, ArchiveHit, NoArchive, as_hit
from poimen.agent.ports import Block, Item, Remembered
from poimen.agent.profile import merge_profile, profile_facts
from poimen.agent.router import RouteDecision, Router
from poimen.agent.stores import (CORE_BLOCKS, MemoryRefused, StoreWrite, appended, check_block, check_namespace,
                                 replaced)
from poimen.agent.writer import append_write, writer_lock
from poimen.llm.client import ModelClient
from poimen.log.events import Event
from poimen.log.store import EventLog
from poimen.settings import default_root, model_name, namespace as default_namespace


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def model_client(model: str | None) -> ModelClient | None:
    """The router's client: none (rules) unless a non-offline model is named here or in ``POIMEN_MODEL``."""
    chosen = model_name(model)
    if chosen.startswith("poimen/"):
        return None
    from poimen.llm.client import ModelConfig, client_for

    return client_for(ModelConfig(chosen))


class Memory:
    """Typed memory of one namespace: core blocks, recall, facts and rules, and an archival search.

    Args:
        namespace: the user or agent this memory belongs to; nothing outside it is read or written (default
            ``$POIMEN_NAMESPACE``, else ``default``: ``poimen.settings.namespace``, as every entry resolves it).
        root: the event log: a folder (default ``$POIMEN_HOME`` or ``./.poimen``), ``file://``, ``s3://bucket/prefix``
            or ``gs://bucket/prefix``.
        db_path: the DuckDB file ``rebuild`` writes the stores to (default ``<root>/projections/stores.duckdb``; a log
            on an object store has no folder to put it in, so ``rebuild`` needs it named); reads and writes use an
            in-process replica of the log, never this file.
        archive: the archival tier, anything with ``search(query, k)`` (default: none).
        model / client: the router's model; rules when neither is given (or the model is offline).
        clock: returns the time stamp for a write (default: UTC now, ISO 8601).
        wait: seconds a write waits for a busy log before refusing (default ``$POIMEN_STORE_WAIT`` or 10).
    """

    def __init__(self, namespace: str | None = None, root: str | Path | None = None, db_path: str | Path | None = None,
                 archive: Archive | None = None, model: str | None = None, client: ModelClient | None = None,
                 clock: Callable[[], str] | None = None, wait: float | None = None):
        self.namespace = check_namespace(default_namespace() if namespace is None else namespace)  # "": refused
        self.log = EventLog(root or default_root())
        self.root = self.log.root  # a folder, or the object store URI as written
        self.db_path = Path(db_path) if db_path else \
            proj.default_db(self.root) if isinstance(self.root, Path) else None
        self.projection = proj.StoreProjection.for_log(self.root)
        self.archive = archive or NoArchive()
        self.router = Router(client or model_client(model))
        self.clock = clock or utc_now
        self.wait = wait

    # -- plumbing ------------------------------------------------------------
    @contextmanager
    def _read(self) -> Iterator[Any]:
        with self.projection.session() as con:
            yield con

    def _write(self, build: Callable[[Any], StoreWrite]) -> tuple[StoreWrite, Event]:
        """Build the write from the current state and seal it, all in one exclusive session of the log (no lost
        update): on an object store, redone from a fresh read when another writer committed meanwhile."""
        def once(log: EventLog) -> tuple[StoreWrite, Event]:
            with self.projection.session(log) as con:
                write = build(con)
                event = append_write(log, write)
                self.projection.refresh(log)
            return write, event

        return self.log.exclusive(once, lambda: writer_lock(self.log, self.wait))

    def _block(self, con: Any, label: str) -> Block:
        store, text, sha, version, _ = proj.block_rows(con, self.namespace)[label]
        return Block(label, store, text, sha, version)

    def _block_write(self, con: Any, label: str, op: str, text: str, detail: dict, route: RouteDecision | None = None
                     ) -> StoreWrite:
        current = self._block(con, label)
        extra = route.attrs() if route else {}
        return StoreWrite(self.namespace, CORE_BLOCKS[label], op, text, self.clock(), block=label,
                          parents=(current.sha,) if current.version else (), detail={**detail, **extra},
                          model_id=route.model_id if route else "", prompt_sha=route.prompt_sha if route else "")

    # -- reading -------------------------------------------------------------
    def blocks(self) -> dict[str, Block]:
        """The core blocks (``user_profile``: semantic, ``task_state``: working), always in context."""
        with self._read() as con:
            return {label: self._block(con, label) for label in CORE_BLOCKS}

    def recall(self, n: int = 5, page: int = 0) -> list[Item]:
        """The ``n`` most recent episodic events, newest first; ``page`` 1 gives the ``n`` before those."""
        with self._read() as con:
            rows = proj.item_rows(con, self.namespace, "episodic", n, n * page)
        return [Item("episodic", *r[:3], source=r[4]) for r in rows]

    def items(self, store: str) -> list[Item]:
        """Every item of ``semantic`` (facts), ``episodic`` (events) or ``procedural`` (rules), newest first."""
        with self._read() as con:
            return [Item(store, *r[:3], source=r[4]) for r in proj.item_rows(con, self.namespace, store)]

    def search(self, query: str, k: int = 3) -> list[ArchiveHit]:
        """Archival search: the shared lookup over pipeline memories and reference docs, best first."""
        return [as_hit(h) for h in self.archive.search(query, k)][:k]

    def compose(self, query: str, budget: int = 1000):
        """The context block for ``query``: core blocks, then recent episodes, matching rules and facts and
        archival hits, most relevant first, within ``budget`` tokens; each line names its store and sha."""
        from poimen.agent.compose import compose

        return compose(self, query, budget)

    def dump(self) -> dict[str, bytes]:
        """This namespace's rows per store, as canonical JSON lines (what a rebuild must reproduce)."""
        with self._read() as con:
            return proj.dump(con, self.namespace)

    # -- writing -------------------------------------------------------------
    def remember(self, text: str) -> Remembered:
        """File ``text`` in exactly one store (the router decides) and say which.

        Self-introductions and preferences are normalised into ``user_profile`` (``name: Dana; prefers
        email``); other durable facts join the semantic facts; events go to episodic, how-to rules to
        procedural, the current focus replaces ``task_state``.
        """
        text = text.strip()
        if not text:
            raise MemoryRefused("nothing to remember: the text is empty")
        decision = self.router.route(text)
        detail = {"item": text}

        def build(con: Any) -> StoreWrite:
            if decision.store == "working":
                return self._block_write(con, "task_state", "set", text, detail, decision)
            facts = profile_facts(text) if decision.store == "semantic" else []
            if facts:
                merged = merge_profile(self._block(con, "user_profile").text, facts)
                return self._block_write(con, "user_profile", "merge", merged, {**detail, "facts": facts}, decision)
            return StoreWrite(self.namespace, decision.store, "add", text, self.clock(), detail=decision.attrs(),
                              model_id=decision.model_id, prompt_sha=decision.prompt_sha)

        write, event = self._write(build)
        where = write.block or {"semantic": "facts", "episodic": "events", "procedural": "rules"}[write.store]
        return Remembered(write.store, where, write.sha, write.text, decision, event.hash)

    def append(self, block: str, text: str) -> Block:
        """Add ``text`` to the end of a core block (joined with ``; ``), keeping what is there."""
        check_block(block)
        if not text.strip():
            raise MemoryRefused("memory_append: text is empty")

        def build(con: Any) -> StoreWrite:
            return self._block_write(con, block, "append", appended(self._block(con, block).text, text), {"appended": text})

        self._write(build)
        return self.blocks()[block]

    def replace(self, block: str, old: str, new: str) -> Block:
        """Replace ``old`` with ``new`` in a core block; ``old`` must occur exactly once, else nothing changes."""
        check_block(block)
        if not old:
            raise MemoryRefused("memory_replace: old text is empty")

        def build(con: Any) -> StoreWrite:
            current = self._block(con, block).text
            return self._block_write(con, block, "replace", replaced(block, current, old, new), {"old": old, "new": new})

        self._write(build)
        return self.blocks()[block]

    def add(self, store: str, text: str, source: str = "", parents: tuple[str, ...] = ()) -> Item:
        """Add one item to ``semantic``, ``episodic`` or ``procedural`` directly, with no routing."""
        if store not in ("semantic", "episodic", "procedural"):
            raise MemoryRefused(f"unknown item store {store!r}")
        detail = {"source_run_id": source} if source else {}
        op = "import" if source else "add"
        write, _ = self._write(lambda con: StoreWrite(self.namespace, store, op, text, self.clock(), parents=parents,
                                                      detail=detail))
        return Item(store, write.sha, write.text, write.ts, source)

    def rebuild(self) -> proj.RebuildReport:
        """Replay the stores from the log into the projection file ``db_path`` (every namespace) and report
        stores whose content differs from what the file held."""
        if self.db_path is None:
            raise MemoryRefused(f"{self.root}: a log on an object store has no folder for the typed-store database; "
                                "name one (Memory(..., db_path=...))")
        return proj.rebuild(self.root, self.db_path)

    # -- tools ---------------------------------------------------------------
    def call(self, name: str, arguments: Any) -> str:
        """Run one memory tool call and return its observation; a bad call returns ``[error] …``, never raises."""
        from poimen.agent.tools import call_tool

        return call_tool(self, name, arguments)
