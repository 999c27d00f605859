"""Materialization metadata read back from the log: counts, acceptance, memory sizes, model and prompt ids, timelines.

Plain functions over the event log (no Dagster here), so the asset checks and
the tests call exactly what the assets report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from poimen.domain import EventKind, sha256_json
from poimen.log.events import Event
from poimen.log.payloads import RunStart
from poimen.log.runs import Acceptance, Run, acceptance
from poimen.log.store import EventLog
from poimen.write.loop import RunOutcome
from poimen.log.timeline import markdown_table, turn_rows
from poimen.text.tokens import count_tokens

TIMELINE_ROWS = 400  # past this a UI table stops being readable; the log keeps everything


@dataclass
class RunStats:
    """What a set of sealed runs holds, in the terms the issue asks every materialization to report."""

    runs: int = 0
    events: int = 0
    acceptance: Acceptance = Acceptance(0, 0)  # gates opened over chunks seen (``poimen.log.runs.acceptance``)
    memories: int = 0
    memory_tokens: list[int] = field(default_factory=list)
    model_ids: set[str] = field(default_factory=set)
    prompt_shas: set[str] = field(default_factory=set)
    content_hash: str = ""

    def as_metadata(self) -> dict:
        tokens = self.memory_tokens or [0]
        return {
            "runs": self.runs,
            "rows": self.events,
            "chunks": self.acceptance.seen,
            "gates_opened": self.acceptance.opened,
            "acceptance_rate": round(self.acceptance.rate, 4),
            "memory_tokens_max": max(tokens),
            "memory_tokens_mean": round(sum(tokens) / len(tokens), 1),
            "model_id": ", ".join(sorted(self.model_ids)) or "-",
            "prompt_shas": ", ".join(sorted(self.prompt_shas)) or "-",
            "content_hash": self.content_hash,
        }


def sealed_events(log: EventLog, run_ids: Iterable[str]) -> dict[str, list[Event]]:
    sealed = set(log.sealed_run_ids())
    return {r: log.run_events(r) for r in run_ids if r in sealed}


def run_stats(runs: dict[str, list[Event]]) -> RunStats:
    """Acceptance as the log's read model computes it (``poimen.log.runs.acceptance``: gates opened over chunks
    seen, from each run's run_end); memory tokens are those of each run's final memory."""
    stats = RunStats(runs=len(runs), acceptance=acceptance(Run(n, r, tuple(ev)) for n, (r, ev) in enumerate(runs.items())))
    for events in runs.values():
        stats.events += len(events)
        for e in events:
            if e.model_id:
                stats.model_ids.add(e.model_id)
            if e.kind == EventKind.RUN_START:
                stats.prompt_shas.add(RunStart.from_event(e).prompt_template_sha or "")
            elif e.kind == EventKind.MEMORY:
                stats.memories += 1
        end = events[-1] if events else None
        if end is not None and end.kind == EventKind.RUN_END and end.text:
            stats.memory_tokens.append(count_tokens(end.text))
    stats.prompt_shas.discard("")
    stats.content_hash = sha256_json(sorted([r, ev[-1].hash if ev else ""] for r, ev in runs.items()))
    return stats


# What a build records on each of its runs that shapes the log: a change between builds is said, never an error
# (the rebuild replays each run with its own).
SETTINGS = ("chunk_tokens", "memory_budget", "model")


def recorded_settings(events: Sequence[Event]) -> dict:
    """The settings one sealed loop run records: its chunk bound (L1), memory budget and model."""
    start = RunStart.from_event(events[0])
    found = {"chunk_tokens": start.chunk_tokens, "memory_budget": start.memory_budget or None,
             "model": next((e.model_id for e in events if e.model_id), None)}
    return {k: v for k, v in found.items() if v is not None}


def build_settings(runs: dict[str, list[Event]]) -> dict:
    """A build's settings: each setting's most common value over its runs (a run found sealed from an earlier
    build at other settings, the same chunks cut at another bound, records that build's)."""
    seen = [recorded_settings(events) for events in runs.values() if events and events[0].kind == EventKind.RUN_START]
    return {k: Counter(s[k] for s in seen if k in s).most_common(1)[0][0] for k in SETTINGS if any(k in s for s in seen)}


def last_build_settings(log: EventLog, level: str, exclude: Iterable[str]) -> dict:
    """The settings of the latest loop run of ``level`` in the log that is not one of ``exclude`` (this build's)."""
    skip = set(exclude)
    for entry in reversed(log.index()):
        if entry["run_id"] in skip:
            continue
        events = log.run_events(entry["run_id"])
        if events and events[0].kind == EventKind.RUN_START and events[0].level == level and \
                RunStart.from_event(events[0]).run_kind == "loop":
            return recorded_settings(events)
    return {}


def settings_change(before: dict, now: dict) -> str:
    """``"chunk_tokens 5000 -> 800; ..."`` for each setting both record and that differs; "" when none does."""
    return "; ".join(f"{k} {before[k]} -> {now[k]}" for k in SETTINGS if k in before and k in now and before[k] != now[k])


def outcome_counts(outcomes: Sequence[RunOutcome]) -> dict[str, int]:
    """Runs sealed by this materialization versus runs found already sealed (same run id) and skipped."""
    return {"runs_new": sum(o.status == "sealed" for o in outcomes),
            "runs_skipped": sum(o.status == "skipped" for o in outcomes)}


def gate_timeline(runs: dict[str, list[Event]], limit: int = TIMELINE_ROWS) -> str:
    """One markdown table per run, headed by its question and stream, turn by turn: chunk, gate, exit, memory size,
    the sha of the memory the turn wrote, notes; then the final memory's sha and token count.

    Never the text: Dagster's run storage keeps materialization metadata for good, out of reach of `mem forget`,
    so the text stays in the log, behind its sha (``SHOWN_BY``)."""
    parts, shown = [], 0
    ordered = sorted(runs.items(), key=lambda kv: _title(kv[1]))
    for run_id, events in ordered:
        rows = _with_memory_shas(turn_rows(events), events)
        if shown + len(rows) > limit:
            parts.append(f"_{len(ordered) - len(parts)} more runs not shown; `mem log show --run <id>` prints any run._")
            break
        shown += len(rows)
        parts.append(f"**{_title(events)}** — run `{run_id[:16]}`\n\n"
                     + markdown_table(rows, ["turn", "chunk", "gate", "exit", "memory_tokens", "memory", "note"])
                     + f"\n\n{_final(events)}")
    return "\n\n".join(parts + ([SHOWN_BY] if parts else [])) or "(no runs)"


SHA_SHOWN = 12  # hex digits of a memory's sha in a timeline row
SHOWN_BY = (f"_Memories are named by their sha ({SHA_SHOWN} hex digits): `mem show <sha>`, or the `/show/<sha>` page "
            "of `mem serve --http`, prints the text; Dagster's storage holds none of it, so `mem forget` reaches it all._")


def _with_memory_shas(rows: list[dict], events: list[Event]) -> list[dict]:
    written = {e.turn: e.sha for e in events if e.kind == EventKind.MEMORY}
    return [dict(r, memory=f"`{written[r['turn']][:SHA_SHOWN]}`" if r["turn"] in written else "",
                 note=_unquoted(r["note"])) for r in rows]


def _unquoted(note: str) -> str:
    """A note without what a parser reason quotes of the reply (``got 'the reply…'``): it is text the log holds."""
    cut = min((i for i in (note.find("'"), note.find('"')) if i >= 0), default=-1)
    return note if cut < 0 else note[:cut].rstrip(" :,") + " (reply quoted in the log)"


def _final(events: list[Event]) -> str:
    end = events[-1] if events else None
    if end is None or end.kind != EventKind.RUN_END or not end.text:
        return "_final memory: empty (no gate opened)_"
    return f"_final memory ({count_tokens(end.text)} tokens):_ `{end.sha[:SHA_SHOWN]}`"


def _title(events: list[Event]) -> str:
    a = RunStart.from_event(events[0]) if events and events[0].kind == EventKind.RUN_START else RunStart("?", "?")
    return f"{a.query_id}: “{a.query_text}” × {a.stream_id or '?'}"


def incident_counts(outcomes: Sequence[RunOutcome]) -> dict[str, tuple[int, int]]:
    """Per source: (incidents carded, of which a card was kept)."""
    out: dict[str, tuple[int, int]] = {}
    for o in outcomes:
        n, cards = out.get(o.stream_id, (0, 0))
        out[o.stream_id] = (n + 1, cards + bool(o.final_memory_sha))
    return out


def card_preview(log: EventLog, outcomes: Sequence[RunOutcome], limit: int = TIMELINE_ROWS) -> str:
    """A table of the cards: the card's sha, its source and chunk, how many lines it keeps of each role. Shas and
    counts only, never a line or a title (both are the source's words): ``mem show SHA`` prints the card."""
    from poimen.log.payloads import Evidence, Memory

    rows = []
    for o in sorted((o for o in outcomes if o.final_memory_sha), key=lambda o: (o.stream_id, o.run_id)):
        events = log.run_events(o.run_id)
        card = next((e for e in events if e.kind == EventKind.MEMORY and e.sha == o.final_memory_sha), None)
        if card is None:
            continue
        roles = Counter(Memory.from_event(card).roles or ())
        chunks = sorted({Evidence.from_event(e).position for e in events if e.kind == EventKind.EVIDENCE})
        rows.append(f"| `{card.sha[:12]}` | {o.stream_id} | {', '.join(map(str, chunks))} | {roles['symptom']} | "
                    f"{roles['cause']} | {roles['action']} | {roles['verification']} |")
    if not rows:
        return "no cards"
    more = f"\n\n_{len(rows) - limit} more cards; `mem sql \"SELECT * FROM incident\"` lists them all._" \
        if len(rows) > limit else ""
    return ("| card | source | chunks | symptom | cause | fix | verified |\n|---|---|---|---|---|---|---|\n"
            + "\n".join(rows[:limit]) + more)

