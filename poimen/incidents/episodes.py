"""Cut a stream's records into episodes: the stretches of a stream that are about one thing.

Structure comes first, because a format that groups records says what belongs together better than any cue:

- a Markdown or postmortem *section* is one episode, and its part-headings fold into the section above them: a
  postmortem's "Timeline", "Root cause" and "Resolution" are parts of one incident, so ``# Checkout outage /
  ## Resolution`` belongs to ``# Checkout outage``, while two ``## INC-…`` sections of one file stay apart
  (the part-heading list is ``PART_HEADINGS``: the sections of the Google SRE and PagerDuty postmortem templates);
- a *thread* (Slack ``thread_ts``, a ticket with its comments, an issue with its replies) is one episode however
  long it runs: the fix in a reply hours after the alert is the point of keeping it;
- everything else is the stream's *flow*: log lines, shell commands with their output and ``#`` notes, ticket
  comments pasted under a log, chat messages that start no thread. A flow is read in order, as the on-call
  engineer lived it: what comes after a failure (the notes, the commands, the comments) belongs to it, until
  a *new* failure starts or time runs out:

  - a new failure is a failure line that names a service or a ticket, where the episode so far has named some
    and none of these (a host, an address or a registry on an error line is no new topic: each error names its
    own);
  - time runs out after ``GAP_SECONDS`` of silence, for the machine's records (log lines, output, commands) and
    for chat messages (linking joins a later message that names the same things). People's comments and ``#``
    notes that follow an episode belong to it for up to ``PATIENCE_SECONDS``: a ticket's comment stream under
    the log it is about is written over hours, and the fix is often its last comment. (Not a note after a silence
    that the session's commands resume right after: that note says what the operator turns to next.) A comment written before
    the current stretch began, or while the current stretch holds no failure (a comment stream pasted after the
    whole log, the service's start-up lines after the fix), goes back to the latest stretch with a failure that
    had begun by its time; and when two failures had begun by then, it goes with the one whose own rare words it
    uses ("Nordfin fixed: imported the GlobalSign root" under a nordfin failure, then an out-of-memory one). Times
    are compared only
    when both are dates, or both times of day (a Markdown timeline's "14:05" says nothing about a log's date).

  What a service's quiet log lines name sets no topic ("Starting run sources=[a, b, c]" names them all), and a
  failure that names the error of the one just before it ("worker died (OutOfMemoryError)") is its echo, no new
  failure. An operator's separator note ("# ----", "# ===== 14:00 disk alert =====") always starts a new one.

  A record without a failure never starts an episode on its own (chatter sits in the episode it falls in; the
  roles give it none), and a record without a time is placed by its order alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from poimen.incidents.cues import HEDGE, WRITE_UP_PARTS, names_part, names_problem
from poimen.incidents.entities import Entity, entities
from poimen.incidents.lines import Line, record_lines
from poimen.incidents.roles import THRESHOLD, line_scores
from poimen.incidents.times import record_seconds, time_kind
from poimen.inputs.readers.shell import PROMPT
from poimen.inputs.records import Record
from poimen.relevance.terms import rarity

__all__ = ["Episode", "Line", "episodes", "is_part_heading", "names", "record_lines", "section_path"]

GAP_SECONDS = 30 * 60
BURST_SECONDS = 60  # a failure this soon after another, naming its error, is its echo (a worker dying of its crash)
PATIENCE_SECONDS = 3 * 24 * 3600  # the linking horizon: a comment a week later is about something else
TOPIC_WEIGHT = 0.5
_FLOW_KINDS = frozenset({"log", "command", "output", "note"})
_THREAD_KINDS = frozenset({"reply", "ticket", "comment"})
@dataclass(frozen=True)
class Episode:
    """Records of one stream that are about one thing, in stream order; ``key`` says what grouped them."""

    stream: str
    key: str  # "section:<path>" | "thread:<id>" | "flow:<n>"
    records: tuple[Record, ...]

    @functools.cached_property
    def entities(self) -> frozenset[Entity]:
        best: dict[tuple[str, str], Entity] = {}  # each thing once, at the most it weighs in any record
        for e in (e for r in self.records for e in entities(r.text)):
            best[(e.kind, e.value)] = max(e, best.get((e.kind, e.value), e), key=lambda x: x.weight)
        return frozenset(best.values())

    @functools.cached_property
    def lines(self) -> tuple[Line, ...]:
        return tuple(line for r in self.records for line in record_lines(r, self.stream))

    @functools.cached_property
    def times(self) -> tuple[float, ...]:
        return tuple(sorted(t for r in self.records if (t := record_seconds(r.time, r.text, r.kind)) is not None))

    @property
    def start(self) -> float | None:
        return self.times[0] if self.times else None

    @property
    def end(self) -> float | None:
        return self.times[-1] if self.times else None


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
    """The sections that hold an incident's own cause or resolution part, as heading paths."""
    return frozenset(tuple(r.headings[:i]) for r in records for i, h in enumerate(r.headings)
                     if i and names_part(h, WRITE_UP_PARTS))


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
    return any(line.strip() and not _RULE.match(line) and not is_part_heading(line)
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


def _structure(records: Sequence[Record]) -> list[tuple[str, list[Record]]]:
    """Records grouped by structure, in order of first appearance; the flow (to be cut) has the key ``flow``."""
    groups: dict[str, list[Record]] = {}
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


def names(record: Record, kinds: frozenset[str] = frozenset({"service", "ticket"})) -> frozenset[tuple[str, str]]:
    """The specific things a record names that say what it is about: services and tickets by default."""
    return frozenset((e.kind, e.value) for e in entities(record.text) if e.kind in kinds and e.weight > TOPIC_WEIGHT)


def _failure(record: Record) -> bool:
    return any(line_scores(line).symptom >= THRESHOLD for line in record_lines(record))


# A service's own log lines: what they name is a topic only when they fail ("Starting run sources=[a, b, c]" names
# every source the run has). A command's output is what the operator asked for: it names the topic.
_QUIET_KINDS = frozenset({"log"})
_PATIENT_KINDS = frozenset({"comment", "note", "reply"})  # people writing about the episode they follow
# People who announce what they turn to: an operator's note, a chat message. (A ticket's comments stay on it.)
_SPEAKING_KINDS = frozenset({"note", "message"})
_ON_TICKET_KINDS = frozenset({"comment", "reply"})  # about the ticket or thread they are under, whatever they name


_RULE = re.compile(r"^[#\s]*(?:[-=*~_]\s?){3,}")


def _ruled(record: Record) -> bool:
    """An operator's separator ("# ----", "# ===== 14:00, disk alert =====", "# --- quiet until 11:20 ---"): the
    note draws a line under what came before, as a Markdown rule does."""
    if record.kind != "note":
        return False
    prompt = PROMPT.match(record.text)
    return bool(_RULE.match(prompt.group("cmd") if prompt else record.text))


def _wonders(record: Record) -> bool:
    """A note that asks or guesses ("is it the new ledger-api pods?", "maybe the cache") names a suspect of the
    episode it is in: the investigation going on, not a new topic."""
    text = record.text.strip()
    return text.endswith("?") or bool(HEDGE.search(text))


_WORD = re.compile(r"[a-z]{4,}")
RARE = 4.5  # a word this rare (8 - zipf, ``poimen.relevance.terms.rarity``) says what a comment is about
SPOKEN_MIN = 2  # the rare words a comment must share with one stretch alone to go with it


@functools.lru_cache(maxsize=1 << 14)
def _rare_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if rarity(w) >= RARE)


def _words(records: Sequence[Record]) -> set[str]:
    """The rare words of ``records``, without their authors' names (each record's read once, however many comments
    ask)."""
    names = {w for r in records for w in _WORD.findall(r.author.lower())}
    return set().union(*(_rare_words(r.text) for r in records)) - names


def _spoken_of(record: Record, stretches: Sequence[Sequence[Record]]) -> int | None:
    """Which of ``stretches`` a comment speaks of: the one whose own rare words (those no other stretch has) it
    uses most, at least ``SPOKEN_MIN`` of them ("Nordfin fixed: imported the GlobalSign R6 root …" under a log of a
    nordfin failure and then an out-of-memory one); None when none stands out."""
    said = _words([record]) - {w for s in stretches for r in s for w in _WORD.findall(r.author.lower())}
    sets = [_words(s) for s in stretches]
    own = [len(said & (mine - set().union(*(o for j, o in enumerate(sets) if j != i)))) for i, mine in enumerate(sets)]
    best = max(own)
    return own.index(best) if best >= SPOKEN_MIN and own.count(best) == 1 else None


_RAISED = re.compile(r"\b\w+(?:Error|Exception|Fault)\b")


def _raised(record: Record) -> frozenset[str]:
    """The error and exception names a record gives ("OutOfMemoryError"): a failure's echo gives its cause's."""
    return frozenset(_RAISED.findall(record.text))


def elapsed(earlier: float | None, later: float | None) -> float | None:
    """Seconds between two record times, or None when either is unknown or they are not of one kind: a date, a
    syslog stamp (no year: ``times.seconds`` places it in 2000) and a time of day (seconds into its day) are
    compared only with their own kind."""
    if earlier is None or later is None or time_kind(earlier) != time_kind(later):
        return None
    return later - earlier


def _resumes(flow: Sequence[Record], times: Sequence[float | None], i: int, gap_seconds: float) -> bool:
    """Whether a command or a log line follows record ``i`` within ``gap_seconds``, before anyone speaks again."""
    for j in range(i + 1, len(flow)):
        if flow[j].kind in _PATIENT_KINDS or times[j] is None:
            continue
        d = elapsed(times[i], times[j])
        return d is not None and 0 <= d <= gap_seconds
    return False


def _cut(flow: Sequence[Record], gap_seconds: float) -> list[list[Record]]:
    pieces: list[list[Record]] = []
    starts: list[float | None] = []  # each piece's first time
    fails: list[bool] = []  # whether each piece holds a failure
    current: list[Record] = []
    start: float | None = None
    named: set[tuple[str, str]] = set()  # what the current piece has named
    failed = False  # whether the current piece holds a failure yet
    last_time: float | None = None
    last_failure: tuple[float, frozenset[str]] | None = None  # the latest failure's time and the errors it raised
    times = [record_seconds(r.time, r.text, r.kind) for r in flow]
    for i, record in enumerate(flow):
        t = times[i]
        failure = _failure(record)
        since = elapsed(last_time, t) if current else None
        # A person who reports a failure after a silence ("# 15:06 customer reports: cert errors") opens a new page,
        # and so does an operator's note after a silence that the session's commands resume right after: the
        # operator writing down what they turn to.
        page = since is not None and since > gap_seconds and record.kind in _SPEAKING_KINDS and (
            failure or _resumes(flow, times, i, gap_seconds))
        patient = record.kind in _PATIENT_KINDS and not page
        if patient and t is not None and current:
            # A comment stream pasted under a log can go back in time: a comment belongs with the stretch of the
            # stream it was written during, the latest that had begun by then and holds a failure (not a quiet
            # stretch of the service starting up again after the fix).
            begun = elapsed(start, t)
            homes = [n for n, s0 in enumerate(starts) if fails[n] and (d := elapsed(s0, t)) is not None and d >= 0]
            home = None
            if begun is None or begun < 0 or not failed:
                home = max(homes, default=None)
            elif homes:  # two failures had begun by then: the comment goes with the one it speaks of, if it says
                home = _spoken_of(record, [pieces[n] for n in homes] + [current])
                home = homes[home] if home is not None and home < len(homes) else None
            if home is not None:
                pieces[home].append(record)
                continue
        mine = names(record)
        new = False
        if current:
            late = since is not None and since > gap_seconds
            if late and patient and since <= PATIENCE_SECONDS:
                late = False
            # A new topic: a failure, or a person's note or message, naming services or tickets where the episode
            # has named others and none of these ("# 14:30 second page: ingest-worker restarting"); a note that asks
            # or guesses about another service names a suspect, not a new topic; and a command's output is what
            # the command above it, already in this episode, printed.
            # (A person's note names a ticket to follow up on, so only a service counts there; a ticket's comments
            # are about the ticket, whatever else they name.)
            said = () if record.kind in _ON_TICKET_KINDS or record.kind == "output" else mine if failure else \
                {n for n in mine if n[0] == "service"} if record.kind in _SPEAKING_KINDS and not _wonders(record) \
                else ()
            # (A failure within ``BURST_SECONDS`` of the one before that names its error is its echo: "worker died
            # (OutOfMemoryError)" after the OutOfMemoryError.)
            gap = elapsed(last_failure[0], t) if last_failure else None
            echo = failure and gap is not None and gap <= BURST_SECONDS and bool(_raised(record) & last_failure[1])
            topic = failed and bool(said) and bool(named) and not mine & named and not echo
            new = late or topic or _ruled(record)
        if new:
            pieces.append(current)
            starts.append(start)
            fails.append(failed)
            current, named, failed, start = [], set(), False, None
        current.append(record)
        if failure or record.kind not in _QUIET_KINDS:  # a quiet log line ("Starting run sources=[…]") sets no topic
            named |= mine
        failed = failed or failure
        if failure and t is not None:
            last_failure = (t, _raised(record))
        if t is not None:
            last_time = t
            start = t if start is None else start
    if current:
        pieces.append(current)
    return pieces


def episodes(records: Sequence[Record], stream: str = "", *, gap_seconds: float = GAP_SECONDS) -> list[Episode]:
    """The episodes of one stream's records, in order of their first record."""
    out: list[Episode] = []
    for key, group in _structure(records):
        if key == "flow":
            out.extend(Episode(stream, f"flow:{n}", tuple(piece)) for n, piece in enumerate(_cut(group, gap_seconds)))
        else:
            out.append(Episode(stream, key, tuple(group)))
    order = {id(r): i for i, r in enumerate(records)}
    out.sort(key=lambda ep: order[id(ep.records[0])])
    return out
