"""Pipeline memories into typed stores: the batch path feeding the online one.

A sealed L1 or L2 run ends with its final memory. The standing query that ran
names the store its memories feed (``queries.yaml``: ``store``, recorded on
the run's ``run_start``). ``import_pipeline`` copies each final memory into
that store of one namespace as an ``import`` write whose ``parents`` hold the
final memory's sha and whose ``source_run_id`` names the run:

- ``semantic``   → a semantic fact (not the ``user_profile`` block: pipeline
                   memories are about the world, not the user)
- ``episodic``   → an episodic event
- ``procedural`` → a rule
- ``working``    → the ``task_state`` block (replaced; a standing query that
                   feeds working memory sets the current focus)

Per query, the L2 memory (a memory of memories) is taken when there is one,
else the latest L1 memory of each source. Importing is idempotent: a run
already imported into the namespace is skipped. Every accepted memory is also
in the archival tier through the lookup, whatever store it feeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from poimen.agent.stores import StoreWrite
from poimen.inputs.queries import load_queries
from poimen.log import payloads
from poimen.log.runs import final_runs, read_runs

if TYPE_CHECKING:
    from poimen.agent.facade import Memory


@dataclass(frozen=True)
class Imported:
    run_id: str
    query_id: str
    level: str
    store: str
    sha: str
    skipped: bool


def import_pipeline(memory: "Memory", queries: str | Path | None = None) -> list[Imported]:
    """Copy the final pipeline memories into ``memory``'s typed stores (see the module docstring)."""
    stores = {q.id: q.store for q in load_queries(queries)} if queries else {}
    done = {i.source for s in ("semantic", "episodic", "procedural") for i in memory.items(s) if i.source}
    done |= {r for r in _imported_blocks(memory)}
    out = []
    for run in final_runs(read_runs(memory.log)):
        store = stores.get(run.query_id) or run.store or "semantic"
        if run.run_id in done:
            out.append(Imported(run.run_id, run.query_id, run.level, store, run.final_memory_sha, True))
            continue
        if store == "working":
            current = memory.blocks()["task_state"]
            memory._write(lambda con, run=run, current=current: StoreWrite(
                memory.namespace, "working", "import", run.final_memory, memory.clock(), block="task_state",
                parents=((current.sha,) if current.version else ()) + (run.final_memory_sha,),
                detail={"source_run_id": run.run_id, "query_id": run.query_id, "level": run.level}))
        else:
            memory.add(store, run.final_memory, source=run.run_id, parents=(run.final_memory_sha,))
        out.append(Imported(run.run_id, run.query_id, run.level, store, run.final_memory_sha, False))
    return out


def _imported_blocks(memory: "Memory") -> set[str]:
    """Runs already imported into ``task_state`` (block writes keep their source only on the event)."""
    found = set()
    for entry in memory.log.index():
        if entry["run_id"].startswith("sw-"):
            for e in memory.log.run_events(entry["run_id"]):
                if e.kind != payloads.StoreWrite.KIND:
                    continue
                a = payloads.StoreWrite.from_event(e)
                if a.namespace == memory.namespace and a.block and a.source_run_id:
                    found.add(a.source_run_id)
    return found
