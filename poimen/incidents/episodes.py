"""Cut a stream's records into episodes: the stretches of a stream that are about one thing.

Structure comes first, because a format that groups records says what belongs together better than any cue:

- a Markdown or postmortem *section* is one episode, and its part-headings fold into the section above them: a
  postmortem's "Timeline", "Root cause" and "Resolution" are parts of one incident, so ``# Checkout outage /
  ## Resolution`` belongs to ``# Checkout outage``, while two ``## INC-…`` sections of one file stay apart
  (the part-heading list is ``PART_HEADINGS``: the sections of the Google SRE and PagerDuty postmortem templates);
- a *thread* (Slack ``thread_ts``, a ticket with its comments, an issue with its replies) is one episode however
  long it runs: the fix in a reply hours after the alert is the point of keeping it;
- everything else is a *flow*: log lines, shell commands with their output and ``#`` notes, chat messages that
  start no thread. A flow (one per ``thread``, so two shell sessions never mix) is cut where the time between
  consecutive records exceeds ``GAP_SECONDS``, and where the topic shifts: the specific names (services, hosts,
  tickets, config keys) of the ``WINDOW`` records before a point and of the ``WINDOW`` after it are disjoint.
  Failure signatures and versions are left out of that test, since each error line of one burst has its own
  template. A record without a time is placed by its order alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from poimen.incidents.entities import Entity, entities
from poimen.incidents.times import record_seconds
from poimen.inputs.records import Record

GAP_SECONDS = 30 * 60
WINDOW = 3
TOPIC_WEIGHT = 0.5
_FLOW_KINDS = frozenset({"log", "command", "output", "note"})
_THREAD_KINDS = frozenset({"reply", "ticket", "comment"})
PART_HEADINGS = (
    "summary", "overview", "executive summary", "description", "background", "impact", "customer impact",
    "user impact", "timeline", "detection", "investigation", "diagnosis", "analysis", "root cause",
    "root causes", "cause", "causes", "contributing factors", "trigger", "what happened", "symptoms",
    "resolution", "remediation", "mitigation", "fix", "the fix", "recovery", "workaround", "action items",
    "follow-up", "follow-ups", "follow up", "next steps", "lessons learned", "what went well",
    "what went wrong", "where we got lucky", "status", "notes", "references", "supporting information",
    "details", "discussion", "outcome",
)
_HEADING_NOISE = re.compile(r"^[\s\d.)#:*_-]+|[\s:*_.-]+$")


@dataclass(frozen=True)
class Line:
    """One non-blank line of a record, stripped: what a role is given to and a card copies verbatim.

    ``offset`` is the line's index among its record's text lines, so a caller that knows how the record's text
    maps onto its file lines can place it exactly; ``record.line_start``-``line_end`` always bound it.
    """

    text: str
    record: Record
    stream: str
    offset: int


def record_lines(record: Record, stream: str = "") -> tuple[Line, ...]:
    """The non-blank lines of ``record``, stripped, in order."""
    return tuple(Line(text.strip(), record, stream, i)
                 for i, text in enumerate(record.text.split("\n")) if text.strip())


@dataclass(frozen=True)
class Episode:
    """Records of one stream that are about one thing, in stream order; ``key`` says what grouped them."""

    stream: str
    key: str  # "section:<path>" | "thread:<id>" | "flow:<thread>:<n>"
    records: tuple[Record, ...]

    @functools.cached_property
    def entities(self) -> frozenset[Entity]:
        return frozenset(e for r in self.records for e in entities(r.text))

    @property
    def lines(self) -> tuple[Line, ...]:
        return tuple(line for r in self.records for line in record_lines(r, self.stream))

    @functools.cached_property
    def times(self) -> tuple[float, ...]:
        return tuple(sorted(t for r in self.records if (t := record_seconds(r.time, r.text)) is not None))

    @property
    def start(self) -> float | None:
        return self.times[0] if self.times else None

    @property
    def end(self) -> float | None:
        return self.times[-1] if self.times else None


def is_part_heading(heading: str) -> bool:
    """Whether ``heading`` names a part of one incident's write-up rather than an incident of its own."""
    name = _HEADING_NOISE.sub("", heading.lower()).strip()
    return any(name == part or name.startswith(part + " ") or name.startswith(part + ":")
               for part in PART_HEADINGS)


def section_path(headings: Sequence[str]) -> str:
    """The headings a record stands under, with the trailing part-headings folded into the section above."""
    path = list(headings)
    while path and is_part_heading(path[-1]):
        path.pop()
    return " / ".join(path)


def _structure(records: Sequence[Record]) -> list[tuple[str, list[Record]]]:
    """Records grouped by structure, in order of first appearance; flows still to be cut have a ``flow`` key."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        if record.headings:
            key = "section:" + section_path(record.headings)
        elif record.thread and record.kind not in _FLOW_KINDS:
            key = "thread:" + record.thread
        else:
            key = "flow:" + record.thread
        groups.setdefault(key, []).append(record)
    out: list[tuple[str, list[Record]]] = []
    loose: dict[str, list[Record]] = {}
    for key, group in groups.items():
        # A message that started no thread is part of the channel's flow, not an episode of its own.
        if key.startswith("thread:") and len(group) == 1 and group[0].kind not in _THREAD_KINDS:
            key = "flow:"
        if key.startswith("flow:"):
            if key not in loose:
                loose[key] = []
                out.append((key, loose[key]))
            loose[key].extend(group)
        else:
            out.append((key, group))
    order = {id(r): i for i, r in enumerate(records)}
    for _, group in out:
        group.sort(key=lambda r: order[id(r)])
    return out


def _names(record: Record) -> frozenset[tuple[str, str]]:
    return frozenset((e.kind, e.value) for e in entities(record.text)
                     if e.kind not in ("signature", "version") and e.weight >= TOPIC_WEIGHT)


def _cut(flow: Sequence[Record], gap_seconds: float, window: int) -> list[list[Record]]:
    names = [_names(r) for r in flow]
    times = [record_seconds(r.time, r.text) for r in flow]
    pieces: list[list[Record]] = []
    start = 0
    last_time: float | None = None
    for i, record in enumerate(flow):
        if i > start:
            gap = times[i] is not None and last_time is not None and times[i] - last_time > gap_seconds
            left = frozenset().union(*names[max(start, i - window):i])
            right = frozenset().union(*names[i:i + window])
            if gap or (left and right and not left & right):
                pieces.append(list(flow[start:i]))
                start = i
        if times[i] is not None:
            last_time = times[i]
    pieces.append(list(flow[start:]))
    return pieces


def episodes(records: Sequence[Record], stream: str = "", *, gap_seconds: float = GAP_SECONDS,
             window: int = WINDOW) -> list[Episode]:
    """The episodes of one stream's records, in order of their first record."""
    out: list[Episode] = []
    for key, group in _structure(records):
        if key.startswith("flow:"):
            for n, piece in enumerate(_cut(group, gap_seconds, window)):
                out.append(Episode(stream, f"{key}:{n}", tuple(piece)))
        else:
            out.append(Episode(stream, key, tuple(group)))
    order = {id(r): i for i, r in enumerate(records)}
    out.sort(key=lambda ep: order[id(ep.records[0])])
    return out
