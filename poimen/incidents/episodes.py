"""Cut a stream's records into episodes: the stretches of a stream that are about one thing.

Structure comes first, because a format that groups records says what belongs together better than any cue:

- a Markdown or postmortem *section* is one episode, and its part-headings fold into the section above them: a
  postmortem's "Timeline", "Root cause" and "Resolution" are parts of one incident, so ``# Checkout outage /
  ## Resolution`` belongs to ``# Checkout outage``, while two ``## INC-…`` sections of one file stay apart
  (the part-heading list is ``PART_HEADINGS``: the sections of the Google SRE and PagerDuty postmortem templates);
- a *thread* (Slack ``thread_ts``, a ticket with its comments, an issue with its replies) is one episode however
  long it runs: the fix in a reply hours after the alert is the point of keeping it;
- everything else is the stream's *flow*: log lines, shell commands with their output and ``#`` notes, ticket
  comments pasted under a log, chat messages that start no thread. ``flow.py`` cuts it where a new failure
  starts or time runs out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from poimen.incidents import shared
from poimen.incidents.converse import conversations
from poimen.incidents.cues import WRITE_UP_PARTS, names_part, names_problem
from poimen.incidents.entities import Entity, entities
from poimen.incidents.flow import GAP_SECONDS, QUIET_KINDS, RULE, cut, is_failure, names
from poimen.incidents.lines import Line, record_lines
from poimen.incidents.spoken import oldest_first
from poimen.incidents.times import paragraph_seconds, record_seconds
from poimen.inputs.records import Record

__all__ = ["Episode", "Line", "episodes", "is_part_heading", "names", "record_lines", "section_path"]

_FLOW_KINDS = frozenset({"log", "command", "output", "note"})
_THREAD_KINDS = frozenset({"reply", "ticket", "comment"})
_PAGE_KINDS = frozenset({"paragraph", "code", "table_row"})  # what a document's text is made of


@dataclass(frozen=True)
class Episode:
    """Records of one stream that are about one thing, in stream order; ``key`` says what grouped them."""

    stream: str
    key: str  # "section:<path>" | "thread:<id>" | "flow:<n>", and "#p<n>"/"#shared" for a write-up's problems
    records: tuple[Record, ...]
    # Only these lines of the records, as (record's first line, line's offset): one problem of a write-up whose
    # problems share its parts (``poimen.incidents.shared``); empty for all of them.
    keep: frozenset[tuple[int, int]] = frozenset()

    @functools.cached_property
    def entities(self) -> frozenset[Entity]:
        # Each thing once, at the most it weighs in any record. A service's quiet log lines (a start-up banner
        # printed at every restart, "Starting run sources=[…]") name what every stretch of its log names: they link
        # nothing.
        texts = [line.text for line in self.lines] if self.keep else \
            [r.text for r in self.records if r.kind not in QUIET_KINDS or is_failure(r)]
        best: dict[tuple[str, str], Entity] = {}
        for e in (e for text in texts for e in entities(text)):
            best[(e.kind, e.value)] = max(e, best.get((e.kind, e.value), e), key=lambda x: x.weight)
        return frozenset(best.values())

    @functools.cached_property
    def lines(self) -> tuple[Line, ...]:
        return tuple(line for r in self.records for line in record_lines(r, self.stream)
                     if not self.keep or (r.line_start, line.offset) in self.keep)

    @functools.cached_property
    def times(self) -> tuple[float, ...]:
        return tuple(sorted(t for r in self.records for t in _record_times(r)))

    @property
    def start(self) -> float | None:
        return self.times[0] if self.times else None

    @property
    def end(self) -> float | None:
        return self.times[-1] if self.times else None


def _record_times(record: Record) -> list[float]:
    """A record's times: its own (``record_seconds``), and a plain paragraph's dated lines (``paragraph_seconds``)."""
    own = record_seconds(record.time, record.text, record.kind)
    dated = paragraph_seconds(record.text) if record.kind == "paragraph" and not record.time else []
    return ([own] if own is not None else []) + dated


def is_part_heading(heading: str) -> bool:
    """Whether ``heading`` names a part of one incident's write-up rather than an incident of its own."""
    return names_part(heading)


def section_path(headings: Sequence[str], write_ups: frozenset[tuple[str, ...]] = frozenset()) -> str:
    """The headings a record stands under, cut at the first part-heading below the top: a write-up's "Resolution"
    and whatever stands under it ("Resolution / For the crash") are parts of the section above. A section in
    ``write_ups`` (one with its own cause or resolution part) is one incident's write-up: every section under it
    ("What the database said" beside "Root cause") is a part of it too."""
    path = list(headings)
    problem = next((i for i, h in enumerate(path) if i and names_problem(h)), None)
    if problem is not None:  # "SECOND PROBLEM: RESTART STAMPEDE" and its parts are a section of their own
        return " / ".join([h for h in path[:problem] if not is_part_heading(h)] + [path[problem]])
    cut = next((i for i, h in enumerate(path) if i and (is_part_heading(h) or tuple(path[:i]) in write_ups)), None)
    if cut is not None:
        path = path[:cut]
    while path and is_part_heading(path[-1]):
        path.pop()
    return " / ".join(path)


def write_ups(records: Sequence[Record]) -> frozenset[tuple[str, ...]]:
    """The sections that hold an incident's own cause or resolution part, as heading paths; and those whose parts
    are mostly a write-up's ("Description", "Activity log", "Notes" beside "Message" and "Extra properties": an
    alert tool's page of one alert; bench/incidents45), whose other parts are parts of it too. Not a page of more
    than ``ENTRIES`` entries: one of them named like a part is an entry's title."""
    children: dict[tuple[str, ...], set[str]] = {}
    for r in records:
        for i in range(1, len(r.headings)):
            children.setdefault(tuple(r.headings[:i]), set()).add(r.headings[i])
    told = {path for path, names in children.items() if len(names) >= MOSTLY_PARTS
            and sum(is_part_heading(h) and not names_problem(h) for h in names) * 2 > len(names)}
    entries = {path for path, names in children.items() if sum(not is_part_heading(h) for h in names) > ENTRIES}
    return frozenset(path for r in records for i, h in enumerate(r.headings)
                     if i and names_part(h, WRITE_UP_PARTS) and (path := tuple(r.headings[:i])) not in entries) | told


MOSTLY_PARTS = 3  # a section with this many parts or more, most of them named as a write-up's, is one write-up
# A section with more sections than this under it that name no part is a list of entries (a ticket export's titles
# under the page's title), not one write-up, whatever one entry is called ("Fix flaky test"): twice the most a dev
# suite's write-up has (4: bench/incidents24's and incidents43's reviews)
ENTRIES = 8


_LABEL_WORD = re.compile(r"[a-z][a-z-]{3,}")
_ORDINAL = re.compile(r"\b(?:problem|part|issue|incident)\s*#?\s*(\w+)", re.I)
_LABEL_STOP = frozenset("""that this with from what when where which while after before during their there them
    they then than into onto also only both each some more most very about over under problem problems issue issues
    part second third first incident failure outage""".split())


def _label_words(heading: str) -> frozenset[str]:
    return frozenset(w.rstrip("s") for w in _LABEL_WORD.findall(heading.lower())) - _LABEL_STOP


def _addressed(record: Record, problems: Sequence[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The problem section a part of the write-up above it addresses by name: under "REMEDIATION", the steps
    headed "For the stampede:" belong to "SECOND PROBLEM: RESTART STAMPEDE"; None when its label names none of
    ``problems`` (the heading paths of the write-up's problem sections), or more than one."""
    heads = record.headings
    at = next((i for i, h in enumerate(heads) if i and is_part_heading(h)), None)
    if at is None:
        return None
    # its labels: the headings under the part, and a label line opening its text ("For problem 1 (disk full):")
    labels = [h for h in heads[at + 1:] if not is_part_heading(h)] + \
        [x for x in record.text.splitlines()[:3] if x.rstrip().endswith(":") and not is_part_heading(x)][:1]
    ordinal = {m.group(1).lower() for h in labels for m in _ORDINAL.finditer(h)}
    hits = [p for p in problems if ordinal & {m.group(1).lower() for m in _ORDINAL.finditer(p[-1])}]
    if not hits:  # "For the stampede:" names "SECOND PROBLEM: RESTART STAMPEDE" by a word of it
        label = frozenset().union(*(_label_words(h) for h in labels))
        hits = [p for p in problems if label & _label_words(p[-1])]
    return hits[0] if len(hits) == 1 else None


def _says(record: Record) -> bool:
    """Whether a record says more than its heading ("Remediation" over its underline says nothing)."""
    return any(line.strip() and not RULE.match(line) and not is_part_heading(line)
               for line in record.text.splitlines())


def _containers(records: Sequence[Record], parts: frozenset[tuple[str, ...]],
                problems: dict[tuple[str, ...], list[tuple[str, ...]]]) -> frozenset[str]:
    """The section keys of documents that hold incidents rather than tell one: a review's title over two write-ups
    or over a problem section. Unless its own records (after ``_addressed`` took theirs) stand under a cause or
    resolution part, what it says (the summary, the shared timeline) retells its incidents, each of which has its
    own episode, and it makes none of its own."""
    out = set()
    for path in {p[:i] for p in parts | {x for xs in problems.values() for x in xs} for i in range(1, len(p))}:
        children = [p for p in parts if len(p) > len(path) and p[:len(path)] == path]
        if path in problems or len(children) >= 2:
            out.add("section:" + section_path(path, parts))
    return frozenset(out)


def _problems(records: Sequence[Record]) -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    """Each write-up's problem sections ("SECOND PROBLEM: …", "Part B"), as heading paths under its title path."""
    out: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for r in records:
        for i, h in enumerate(r.headings):
            if i and names_problem(h):
                path = tuple(r.headings[:i + 1])
                siblings = out.setdefault(tuple(r.headings[:i]), [])
                if path not in siblings:
                    siblings.append(path)
                break
    return out


_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s")


def _numbered_account(records: Sequence[Record]) -> bool:
    """Whether ``records`` are a document without headings told in numbered paragraphs, "1. On Tuesday … the network
    team upgraded the firmware", "2. …", each number the one after the last, most paragraphs numbered (a postmortem
    written as a numbered account; bench/incidents45): one write-up, read as one section, not a flow of messages
    to cut at each new failure it tells."""
    if not records or any(r.kind not in _PAGE_KINDS or r.headings or r.thread for r in records):
        return False
    numbers = [int(m.group(1)) for r in records if r.kind == "paragraph" and (m := _NUMBERED.match(r.text))]
    paragraphs = sum(r.kind == "paragraph" for r in records)
    return len(numbers) >= 3 and numbers == list(range(1, len(numbers) + 1)) and len(numbers) * 2 > paragraphs


def _structure(records: Sequence[Record]) -> list[tuple[str, list[Record]]]:
    """Records grouped by structure, in order of first appearance; the flow (to be cut) has the key ``flow``."""
    groups: dict[str, list[Record]] = {}
    if _numbered_account(records):
        return [("section:", list(records))]
    parts = write_ups(records)
    problems = _problems(records)
    for record in records:
        if record.headings:
            headings = record.headings
            under = next((problems[tuple(headings[:i])] for i in range(len(headings), 0, -1)
                          if tuple(headings[:i]) in problems), None)
            addressed = _addressed(record, under) if under else None
            key = "section:" + section_path(addressed or headings, parts)
        elif record.thread and record.kind not in _FLOW_KINDS:
            key = "thread:" + record.thread
        else:
            key = "flow"
        groups.setdefault(key, []).append(record)
    for key in _containers(records, parts, problems) & groups.keys():
        if not any(names_part(h, WRITE_UP_PARTS) and _says(r) for r in groups[key] for h in r.headings[1:]):
            del groups[key]
    out: list[tuple[str, list[Record]]] = []
    flow: list[Record] = []
    for key, group in groups.items():
        # A message that started no thread is part of the channel's flow, not an episode of its own.
        if key.startswith("thread:") and len(group) == 1 and group[0].kind not in _THREAD_KINDS:
            key = "flow"
        if key == "flow":
            if not flow:
                out.append(("flow", flow))
            flow.extend(group)
        else:
            out.append((key, group))
    order = {id(r): i for i, r in enumerate(records)}
    for _, group in out:
        group.sort(key=lambda r: order[id(r)])
    return out


def episodes(records: Sequence[Record], stream: str = "", *, gap_seconds: float = GAP_SECONDS) -> list[Episode]:
    """The episodes of one stream's records, in order of their first record."""
    out: list[Episode] = []
    # a write-up that gives each problem a heading of its own ("SECOND PROBLEM: …") has told them apart already
    apart = {r.headings[0] for r in records if any(i and names_problem(h) for i, h in enumerate(r.headings))}
    for key, group in _structure(records):
        if key == "flow":
            talks = conversations(oldest_first(group), gap_seconds)
            pieces = [piece for talk in talks for piece in cut(talk, gap_seconds, topics=len(talks) == 1)]
            out.extend(Episode(stream, f"flow:{n}", tuple(piece)) for n, piece in enumerate(pieces))
        elif group[0].headings[:1] and group[0].headings[0] in apart:
            out.append(Episode(stream, key, tuple(group)))
        else:
            out.extend(_problems_of(Episode(stream, key, tuple(group))))
    order = {id(r): i for i, r in enumerate(records)}
    out.sort(key=lambda ep: order[id(ep.records[0])])
    return out


def _problems_of(episode: Episode) -> list[Episode]:
    """A section whose problems share its parts, as one episode per problem and one of the lines they share."""
    parts = shared.split(episode.lines)
    if not parts:
        return [episode]
    out = []
    for suffix, idx in parts:
        keep = frozenset((episode.lines[i].record.line_start, episode.lines[i].offset) for i in idx)
        records = tuple(r for r in episode.records if any(k[0] == r.line_start for k in keep))
        out.append(Episode(episode.stream, episode.key + suffix, records, keep))
    return out
