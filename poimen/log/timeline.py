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


def run_record(run) -> dict:
    """A sealed run of ``poimen.log.runs`` as ``mem log show --json`` prints it: full ids, counts, model."""
    return {"run_id": run.run_id, "status": "sealed", "level": run.level, "kind": run.kind, "query_id": run.query_id,
            "stream_id": run.stream_id, "chunks_seen": run.chunks_seen, "chunks_used": run.chunks_used,
            "final_memory_sha": run.final_memory_sha, "model_id": run.model_id}


def run_header(run_id: str, events: Sequence[Event], sealed: bool) -> dict:
    """What a run was asked and with what: the first record of ``mem log show --run ID --json``."""
    from poimen.log.payloads import RunStart

    start = RunStart.from_event(events[0])
    return {"record": "run", "run_id": run_id, "status": "sealed" if sealed else "unfinished",
            "level": events[0].level, "query_id": start.query_id, "query_text": start.query_text,
            "stream_id": start.stream_id, "model_id": events[0].model_id,
            "prompt_template_sha": start.prompt_template_sha or "", "constrain": start.constrain or "",
            "grammar_sha": start.grammar_sha or ""}


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
