"""Link episodes that name the same specific things into incidents.

Two episodes link when the entities they share weigh ``THRESHOLD`` or more (``entities.py`` gives the weights:
a ticket id or a shaped signature alone; a service with a host, a config key or a failure family; never a
generic word). Linking is transitive (union-find), so a Remediation section, a ticket comment and the alert
thread join through whatever each pair shares.

Two rules keep a busy channel's incidents apart:

- an entity held by more than half of one stream's episodes (and by more than ``COMMON_MIN``) is the channel's
  subject rather than an incident's, and weighs a quarter; it is counted within its stream, so what else a run
  reads changes no stream's incidents, and a subject ticket ("OPS-5120" atop every comment) joins nothing by
  itself;
- episodes further apart in time than ``HORIZON_SECONDS`` link only through a ticket id, or a request's id a
  comment cites from what a log printed (``quotes.cited_in``): the same service failing the same way a week later
  is a recurrence, a new incident that lookup shows beside the first one;
- two episodes that are each a whole story, a failure and something done about it, link only through a ticket id
  too (named in words, not in a command or what it printed: a commit's "follow-up to SEC-412"): what links is a
  later fix (a Remediation section, a comment) to the failure it answers, and two failures each with its own fix
  are two incidents however much they share (a postmortem's "second problem" during the recovery, a second page on
  the same service).

An episode without a failure (a quiet stretch of a log, a comment thread that retells), or with a failure that
nothing in it acts on (an alert, a log's failure whose fix is in a later comment), links to one episode, never to
two: it would bridge two incidents that share nothing else (a service's first failure and the ticket's "second
problem" on the same worker). Of those it shares enough with, that is the nearest in time, and where times do not
tell, the one it shares most with: a service's app versions and its framework's error wrapper are in every one of
its traces, so the night's failure shares more with the morning's story than with its own (bench/incidents9).

One rule joins what the cut split: a failure nobody acted on, and what follows it and does act (the next stretch
of the same flow, after a note that named another component; the thread a responder opens right after a bot's
alert) link at half the threshold: one service, host or config key they share is enough; and the error the first
goes on printing weighs whole there, though the stream's every failure prints it (a ticket reopened on "the same
error text as Thursday", and the next stretch's diagnosis and fix).

An incident is an episode or a linked set that carries a failure signal: a line whose symptom score reaches the
role threshold. Episodes link within their stream unless ``across_streams`` is set (a channel's day files,
``poimen.write.incident_plan.channels``): then a stream's episodes pair with the next stream's too, and a thread
the files split is one thread.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from poimen.incidents.entities import Entity, entities
from poimen.incidents.episodes import Episode, Line, record_lines
from poimen.incidents.cues import OTHER_PROBLEM
from poimen.incidents.flow import GAP_SECONDS, acts, elapsed, fails, is_failure
from poimen.incidents.quotes import cited_in, quoted_in
from poimen.incidents.roles import line_scores, pick
from poimen.text.headings import names_problem

THRESHOLD = 1.0
COMMON_MIN = 3
COMMON_FACTOR = 0.25
HORIZON_SECONDS = 3 * 24 * 3600
FOLLOW_FACTOR = 0.5  # a failure nobody acted on and the next stretch of its flow, which acts, link at half


@dataclass(frozen=True)
class Incident:
    """Episodes that are one incident, in time order (episodes without times after, in the order given)."""

    episodes: tuple[Episode, ...]

    @property
    def streams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ep.stream for ep in self.episodes))

    @property
    def lines(self) -> tuple[Line, ...]:
        return tuple(line for ep in self.episodes for line in ep.lines)

    @functools.cached_property
    def entities(self) -> frozenset[Entity]:
        return frozenset().union(*(ep.entities for ep in self.episodes))

    @property
    def start(self) -> float | None:
        return min((ep.start for ep in self.episodes if ep.start is not None), default=None)

    @property
    def end(self) -> float | None:
        return max((ep.end for ep in self.episodes if ep.end is not None), default=None)


def has_failure(episode: Episode) -> bool:
    """Whether any line of ``episode`` is a failure signal: an error, an alert, a complaint."""
    return fails(episode.lines)


def has_action(episode: Episode) -> bool:
    """Whether any line of ``episode`` does something about a failure (a fix, a mitigation, a rollback)."""
    return acts(episode.lines)


class _Sets:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _far_apart(a: Episode, b: Episode, horizon: float) -> bool:
    if a.start is None or b.start is None:
        return False
    return max(a.start, b.start) - min(a.end, b.end) > horizon


_NAMES = frozenset({"service", "config"})


def _identity(e: Entity) -> tuple[str, str]:
    """What an entity is for sharing: a name is one name whether it was read as a service or as a key set (an
    alert's "inventory-sync: 37 failed runs" and a chat's "inventory-sync is unhappy"; bench/incidents11)."""
    return ("name" if e.kind in _NAMES else e.kind, e.value)


def shared_weight(a: Episode, b: Episode, common: frozenset[tuple[str, str]] = frozenset()) -> float:
    """What the entities two episodes share weigh together (a ``common`` entity a quarter)."""
    theirs = {_identity(e) for e in b.entities}
    return sum(e.weight * (COMMON_FACTOR if _identity(e) in common else 1.0)
               for e in a.entities if _identity(e) in theirs)


def link(episodes: Sequence[Episode], *, across_streams: bool = False, threshold: float = THRESHOLD,
         horizon_seconds: float = HORIZON_SECONDS) -> list[Incident]:
    """The incidents among ``episodes``: linked sets (within a stream unless ``across_streams``) with a failure."""
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, ep in enumerate(episodes):
        for e in ep.entities:
            holders[_identity(e)].append(i)
    common = _common(episodes, holders)
    failing = [has_failure(ep) for ep in episodes]
    acting = [has_action(ep) for ep in episodes]
    complete = [failing[i] and acting[i] for i in range(len(episodes))]
    told = [_told(ep) for ep in episodes]
    filed = [(_filed(ep), _turned(ep)) for ep in episodes]  # (its tickets, whether a comment turned it), once each
    sets = _Sets(len(episodes))
    pairs = _pairs(episodes, holders, across_streams)
    quoted = quoted_in(episodes)  # a comment that quotes what a log printed: as a shaped signature shared
    cited = cited_in(episodes)  # a comment that cites a request's id a log printed: so too, at any distance in time
    quoted.update(cited)
    pairs |= set(quoted)
    quiet: dict[int, tuple] = {}  # an episode that is no whole story: its best partner (nearest, then most shared)
    for i, j in sorted(pairs):
        a, b = episodes[i], episodes[j]
        if not across_streams and a.stream != b.stream:
            continue
        tickets = (told[i] & told[j]) - {value for kind, value in common if kind == "ticket"}
        # (a comment that quotes what the other printed is about it, whole story or not: "same \"consumer poll timeout
        # has expired\"" under the log that printed it, after a restart noted there; bench/incidents16)
        if not tickets and (i, j) not in cited and (_far_apart(a, b, horizon_seconds)
                                                    or (complete[i] and complete[j] and (i, j) not in quoted)):
            continue
        weight = shared_weight(a, b, common) + quoted.get((i, j), 0.0)
        if weight < threshold:
            continue
        if _siblings(a, b, filed[i], filed[j]):
            continue
        if complete[i] and complete[j]:
            sets.union(i, j)
            continue
        # An episode without a failure (a quiet stretch, a retelling), or with one nobody acts on in it (an alert, a
        # log's failure whose fix is in a comment), joins one incident, the nearest in time it shares enough with
        # (else the one it shares most with): it never bridges two incidents. One that a person's comment quotes goes
        # with that comment first: the comment says it is about it (bench/incidents16: a burst cut in two by a note of
        # a restart, and the comment quoting the second half).
        for q, other in ((i, j), (j, i)):
            apart = _apart(episodes[q], episodes[other])
            key = ((i, j) in quoted, acting[other], apart is not None, -(apart or 0.0), weight, -other)
            if not complete[q] and key > quiet.get(q, (False, False, False, float("-inf"), 0.0, 0)):
                quiet[q] = key
    # The first half of a story joins its second half, and so no other incident: it would bridge the two; nor does a
    # second half that fails nowhere (a fix alone).
    def follows(i: int, j: int, weight: float = 0.0, subject=common) -> bool:  # half a link joins what the cut or
        # a thread split
        return shared_weight(episodes[i], episodes[j], subject) + weight >= threshold * FOLLOW_FACTOR \
            and not _siblings(episodes[i], episodes[j], filed[i], filed[j])

    # The failure a stretch goes on printing weighs whole there, however common in the stream: a ticket reopened
    # ("Same error text as Thursday") and its next stretch, which acts (bench/incidents18's work notes).
    going_on = frozenset(k for k in common if k[0] != "signature")
    halves = [(i, j) for i, j in _story_halves(episodes, failing, acting)
              if follows(i, j, quoted.get((min(i, j), max(i, j)), 0.0), going_on)]
    # A thread opened from a message of a stretch of the channel, while that stretch went on, is part of it.
    inside = [(i, j) for i, j in _threads_inside(episodes) if follows(i, j)]
    # A thread a channel's day files split (its replies posted after midnight) is one thread.
    continued = _threads_continued(episodes) if across_streams else []
    for i, j in halves + inside + continued:
        sets.union(i, j)
    joined = {i for i, _ in halves} | {j for _, j in halves if not failing[j]} | {j for _, j in inside + continued}
    for q, (*_, other) in quiet.items():
        if q not in joined:
            sets.union(q, -other)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(episodes)):
        groups[sets.find(i)].append(i)
    # Within an incident, episodes in time order where they have times (the log's error before the ticket that
    # retells it), else in the order given.
    return [Incident(tuple(episodes[i] for i in sorted(group, key=lambda i: _when(episodes[i], i))))
            for _, group in sorted(groups.items()) if any(failing[i] for i in group)]


def _told(episode: Episode) -> frozenset[str]:
    """The tickets an episode names in its own words, alone on a line: not in a command or what it printed (a
    commit message's "follow-up to SEC-412" typed after the next incident), not in a list of tickets, and not in a
    chat message that says nothing of a failure or a fix ("postmortem draft for INC-2231 is up", posted in the
    channel as the next incident began: examples/sources/incident-channel.jsonl)."""
    out: set[str] = set()
    for line in episode.lines:
        if line.record.kind in ("command", "output"):
            continue
        tickets = {e.value for e in entities(line.text) if e.kind == "ticket" and e.weight >= 1}
        if tickets and not (line.record.kind == "message" and pick(line_scores(line)) == "none"):
            out |= tickets  # (a line's roles are scored only when it names a ticket)
    return frozenset(out)


def _siblings(a: Episode, b: Episode, a_filed: tuple[frozenset[str], bool],
              b_filed: tuple[frozenset[str], bool]) -> bool:
    """Two problems of one write-up (``poimen.incidents.shared``), the comments of tickets of one tracker export
    that no ticket has in common (``_filed``), or the two stories of one ticket a comment turned to another problem
    (``poimen.incidents.flow``: "Different problem but same service so putting it here: …"): told apart on
    purpose, never joined. ``a_filed``/``b_filed``: each one's tickets (``_filed``) and whether a comment turned it
    (``_turned``)."""
    if a.stream != b.stream:
        return False
    (a_tickets, a_turned), (b_tickets, b_turned) = a_filed, b_filed
    if a_tickets and b_tickets and not a_tickets & b_tickets:
        return True
    if (a_turned or b_turned) and all(any(r.kind in ("comment", "reply") for r in e.records) for e in (a, b)):
        return True  # (under a ticket's header or on a page that has none: GitHub's, copied; bench/incidents23)
    return "#p" in a.key and "#p" in b.key and a.key.rsplit("#", 1)[0] == b.key.rsplit("#", 1)[0]


def _turned(episode: Episode) -> bool:
    """Whether an episode's first comment turns its ticket to another problem (as ``flow.cut`` opens a piece for)."""
    first = next((r for r in episode.records if r.kind in ("comment", "reply") and not all(
        line.is_frame or len(line.text.split()) <= 2 for line in record_lines(r))), None)  # (past "x commented on
    # Feb 14" / "Member Author", a header alone: GitHub's page, copied; bench/incidents23)
    return first is not None and bool(OTHER_PROBLEM.search(first.text)) and is_failure(first)


# A ticket's number in a heading: "# [#48213] ledger-api 5xx …", "# INC-2231 Reservations timing out", "INC0048213: …"
_NUMBER = re.compile(r"(?<![\w#])(?:#\d{3,9}|[A-Z][A-Z0-9]{1,9}-\d{1,7}|[A-Z]{2,6}\d{6,10})\b")


def _filed(episode: Episode) -> frozenset[str]:
    """The tickets an episode's comments were filed under (the ticket each stands under, ``poimen.inputs.readers.log``:
    one, or a ticket and the duplicate closed into it, bench/incidents18); else, for a section, the one ticket its
    top heading names (a monthly report of two postmortems, "# [#48213] …" and "# [#48397] … errors again": the
    second names the first as history, and it is another incident; bench/incidents17); none if none."""
    filed = frozenset(dict(r.attrs).get("ticket", "") for r in episode.records if r.kind == "comment") - {""}
    if filed:
        return filed
    if episode.key.startswith("section:"):  # (the topmost heading that names one: an export's "## INC-0194 · …"
        # under its title, "# xMatters incident export — …"; bench/incidents43)
        # (... unless a deeper heading opens a problem of its own by its ticket: a review's "Addendum: INC-5127 …"
        # under "# Post-incident review: INC-5120 …"; bench/incidents33)
        tops = {next((h for h in r.headings if _NUMBER.search(h) and names_problem(h)), None)
                or next((h for h in r.headings if _NUMBER.search(h)), "") for r in episode.records if r.headings}
        numbers = set(_NUMBER.findall(next(iter(tops)))) if len(tops) == 1 else set()
        if len(numbers) == 1:
            return frozenset(numbers)
    return frozenset()


def _common(episodes: Sequence[Episode], holders: dict[tuple[str, str], list[int]]) -> frozenset[tuple[str, str]]:
    """The entities that are a stream's subject: held by more than half of its episodes, and more than
    ``COMMON_MIN``."""
    size: dict[str, int] = defaultdict(int)
    for ep in episodes:
        size[ep.stream] += 1
    out = set()
    for key, held in holders.items():
        per: dict[str, int] = defaultdict(int)
        for i in held:
            per[episodes[i].stream] += 1
        if any(n > COMMON_MIN and n > size[stream] / 2 for stream, n in per.items()):
            out.add(key)
    return frozenset(out)


def _story_halves(episodes: Sequence[Episode], failing: Sequence[bool],
                  acting: Sequence[bool]) -> list[tuple[int, int]]:
    """Pairs of episodes that are the two halves of one story: a failure nobody acted on yet, and what follows it,
    which acts: the next stretch of the same flow (the diagnosis and the fix, after a note that named another
    component), or the episode of its stream that starts next, within ``GAP_SECONDS`` (the thread an alert's
    responder opens two minutes after the bot posted it)."""
    flow = {(ep.stream, int(ep.key[5:])): i for i, ep in enumerate(episodes) if ep.key.startswith("flow:")}
    timed = sorted((ep.stream, ep.start, i) for i, ep in enumerate(episodes) if ep.start is not None)
    after: dict[int, int] = {}
    for (stream, start, i), (stream2, start2, j) in zip(timed, timed[1:]):
        gap = elapsed(episodes[i].end, start2)
        if stream == stream2 and gap is not None and 0 <= gap <= GAP_SECONDS:
            after[i] = j
    out = []
    for i, ep in enumerate(episodes):
        if not failing[i] or acting[i]:
            continue
        nexts = {flow.get((ep.stream, int(ep.key[5:]) + 1)) if ep.key.startswith("flow:") else None, after.get(i)}
        out += [(i, j) for j in sorted(n for n in nexts if n is not None) if acting[j]]
    # ... and the other way round: a fix that tells no failure (a PR merged hours later, after the chat went quiet)
    # and the stretch of the same flow before it, which failed (bench/incidents11)
    for j, ep in enumerate(episodes):
        if ep.key.startswith("flow:") and acting[j] and not failing[j]:
            i = flow.get((ep.stream, int(ep.key[5:]) - 1))
            if i is not None and failing[i]:
                out.append((i, j))
    return out


def _threads_inside(episodes: Sequence[Episode]) -> list[tuple[int, int]]:
    """Pairs of a stretch of a chat flow and a thread whose first message was posted while that stretch went on
    (strictly inside its time span): someone answered in a thread what the channel was working on ("found it:
    @ottervale/authz 2.x loads the JWKS once …" in the middle of the login failures; bench/incidents11)."""
    flows = [(i, ep) for i, ep in enumerate(episodes) if ep.key.startswith("flow:") and ep.start is not None]
    out = []
    for j, ep in enumerate(episodes):
        if ep.key.startswith("thread:") and ep.start is not None:
            out += [(i, j) for i, f in flows if f.stream == ep.stream and f.start < ep.start < f.end]
    return out


def _pairs(episodes: Sequence[Episode], holders: dict[tuple[str, str], list[int]],
           across_streams: bool) -> set[tuple[int, int]]:
    """The pairs of episodes that share an entity: within a stream, and across streams only between a stream and the
    next one (a channel's day files in date order: what the day after says of the day before), so a channel of a
    year of day files pairs no more than its neighbouring days do."""
    rank = {stream: n for n, stream in enumerate(dict.fromkeys(ep.stream for ep in episodes))}
    out: set[tuple[int, int]] = set()
    for held in holders.values():
        by_rank: dict[int, list[int]] = defaultdict(list)
        for i in held:
            by_rank[rank[episodes[i].stream]].append(i)
        for r, mine in by_rank.items():
            out |= {(i, j) for i in mine for j in mine if i < j}
            if across_streams:
                out |= {(min(i, j), max(i, j)) for i in mine for j in by_rank.get(r + 1, ())}
    return out


def _threads_continued(episodes: Sequence[Episode]) -> list[tuple[int, int]]:
    """Pairs of episodes of two streams that hold one thread: replies in a day file whose parent, or whose earlier
    replies, are in another (Slack's export writes a reply into the file of the day it was posted; bench/incidents13's
    fix posted in the thread the next morning). Each thread's part joins the first episode that holds the thread."""
    holding: dict[str, list[int]] = defaultdict(list)
    for i, ep in enumerate(episodes):
        for thread in dict.fromkeys(r.thread for r in ep.records if r.thread and r.kind in ("message", "reply")):
            holding[thread].append(i)
    out = []
    for i, ep in enumerate(episodes):
        if ep.key.startswith("thread:"):
            first = next((h for h in holding.get(ep.key[7:], ()) if episodes[h].stream != ep.stream), None)
            if first is not None and first < i:
                out.append((first, i))
    return out


def _apart(a: Episode, b: Episode) -> float | None:
    """Seconds between two episodes (0 when they overlap), or None when either has no time or they do not compare."""
    if a.start is None or b.start is None:
        return None
    gaps = [g for g in (elapsed(a.end, b.start), elapsed(b.end, a.start)) if g is not None]
    return max(0.0, max(gaps)) if gaps else None


def _when(episode: Episode, index: int) -> tuple[bool, float, int]:
    return (episode.start is None, episode.start or 0.0, index)
