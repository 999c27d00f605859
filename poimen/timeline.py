"""Readable views of the log: run listings and turn-by-turn gate timelines (CLI and Dagster metadata)."""

from __future__ import annotations

from collections.abc import Sequence

from poimen.domain import EventKind
from poimen.log.events import Event
from poimen.log.payloads import Gate, ParseFailed, payload
from poimen.log.store import EventLog


def resolve_run(log: EventLog, prefix: str) -> str:
    """A run id from a unique prefix of a sealed or journaled run."""
    from poimen.errors import PoimenError

    ids = set(log.sealed_run_ids()) | {p.stem for p in log.journals()}
    hits = sorted(i for i in ids if i.startswith(prefix))
    if len(hits) != 1:
        raise PoimenError(f"--run {prefix}: {'no run' if not hits else f'{len(hits)} runs'} match")
    return hits[0]


def turn_rows(events: Sequence[Event]) -> list[dict]:
    """One row per turn: where the chunk came from, the gate, the exit flag, memory size, and what else happened."""
    rows: dict[int, dict] = {}
    for e in events:
        if e.kind not in (EventKind.GATE, EventKind.PARSE_FAILED, EventKind.BUDGET_EXCEEDED):
            continue
        a = payload(e)
        row = rows.setdefault(e.turn, {"turn": e.turn, "chunk": "", "gate": "", "exit": "", "memory_tokens": "", "note": ""})
        if isinstance(a, Gate):
            row.update(chunk=a.label, gate="open" if e.update else "closed",
                       exit="end" if e.exit else "continue", memory_tokens=a.memory_tokens)
            if a.attempts > 1:
                row["note"] = f"{a.attempts} calls"
            if a.acted_on_exit:
                row["note"] = (row["note"] + "; stopped by exit gate").strip("; ")
        elif isinstance(a, ParseFailed):
            row.update(chunk=a.label, gate="parse_failed", exit="-",
                       note=f"{a.attempts} unparseable replies: {(a.reasons or ('',))[-1]}")
        else:
            row["note"] = (row["note"] + f"; over budget ({a.candidate_tokens} > {a.budget} tokens), retained").strip("; ")
    return [rows[t] for t in sorted(rows)]


def markdown_table(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0].keys())
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(c, "")).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines)
