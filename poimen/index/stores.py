"""The typed stores as projections: one pure fold of ``store_write`` events, declared once.

``store_block`` holds each namespace's current core blocks, ``store_item`` its
facts, events and rules. ``fold_write`` turns one write (and the version its
block had) into the row it puts in one of the two tables; the index build folds
the whole log with it, and the agent's in-process replica
(``poimen.agent.projection``) applies it write by write to DuckDB tables created
from these same schemas, so the two can never disagree on what a store holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from poimen.domain import EventKind
from poimen.index.schema import Projection, Rows, fixed
from poimen.log.events import Event
from poimen.log.payloads import StoreWrite

if TYPE_CHECKING:
    from poimen.index.schema import BuildContext

S, I = pa.string(), pa.int64()
BLOCK_FIELDS = (("namespace", S), ("block", S), ("store", S), ("text", S), ("sha", S), ("version", I), ("ts", S),
                ("event_hash", S))
ITEM_FIELDS = (("namespace", S), ("store", S), ("pos", I), ("sha", S), ("text", S), ("ts", S), ("source", S),
               ("event_hash", S))


def fold_write(event: Event, pos: int, prior_version: int) -> tuple[str, dict]:
    """(table, row) for one store write at index position ``pos``; a block write bumps its block's version."""
    a = StoreWrite.from_event(event)
    if a.block:
        return "store_block", {"namespace": a.namespace, "block": a.block, "store": a.store, "text": event.text,
                               "sha": event.sha, "version": prior_version + 1, "ts": a.ts, "event_hash": event.hash}
    return "store_item", {"namespace": a.namespace, "store": a.store, "pos": pos, "sha": event.sha, "text": event.text,
                          "ts": a.ts, "source": a.source_run_id or "", "event_hash": event.hash}


def fold(writes: Iterable[tuple[int, Event]]) -> dict[str, Rows]:
    """Every store write, in log order, folded into the rows of both tables."""
    blocks: dict[tuple[str, str], dict] = {}
    items: Rows = []
    for pos, event in writes:
        if event.kind != EventKind.STORE_WRITE:
            continue
        a = StoreWrite.from_event(event)
        prior = blocks.get((a.namespace, a.block), {}).get("version", 0)
        table, row = fold_write(event, pos, prior)
        if table == "store_block":
            blocks[(a.namespace, a.block)] = row
        else:
            items.append(row)
    return {"store_block": list(blocks.values()), "store_item": items}


def _writes(ctx: "BuildContext") -> dict[str, Rows]:
    return fold((run.n, e) for run in ctx.runs for e in run.events)


# The kinds the loop and the sources write: the fold skips them. Listed, not "all but store_write", so that a
# kind added later (one that might change a store) is read by these tables until someone says otherwise.
LOOP_EVENTS = frozenset(str(k) for k in (EventKind.RUN_START, EventKind.GATE, EventKind.EVIDENCE, EventKind.MEMORY,
                                        EventKind.BUDGET_EXCEEDED, EventKind.PARSE_FAILED, EventKind.RUN_END,
                                        EventKind.SYMPTOM))

STORE_PROJECTIONS = (
    Projection("store_block", fixed(*BLOCK_FIELDS), ("namespace", "block"),
               lambda ctx: _writes(ctx)["store_block"], "typed memory: current core blocks per namespace",
               ignores=LOOP_EVENTS),
    Projection("store_item", fixed(*ITEM_FIELDS), ("namespace", "store", "pos"),
               lambda ctx: _writes(ctx)["store_item"], "typed memory: facts, events and rules per namespace",
               ignores=LOOP_EVENTS),
)
