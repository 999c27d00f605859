"""Cut a stream's flow into episodes: log lines, shell commands with their output and ``#`` notes, ticket
comments pasted under a log, chat messages that start no thread. A flow is read in order, as the on-call
engineer lived it: what comes after a failure (the notes, the commands, the comments) belongs to it, until
a *new* failure starts or time runs out:

- a new failure is a failure line that names a service or a ticket, where the episode so far has named some
  and none of these (a host, an address or a registry on an error line is no new topic: each error names its
  own);
- a failure of another kind (no failure signature or error name in common) printed after the story so far was
  acted on (a failure, then a fix not said to have changed nothing) is the next incident of a session, from the
  operator's note that turned to it, else from the command that printed it; unless the next person's line, before
  anything else is done, says that attempt changed nothing: then it was the first story going on, and the piece
  goes back to it (bench/incidents9: probe events printed another way after a rollback, "# rollback changed
  nothing");
- time runs out after ``GAP_SECONDS`` of silence, for the machine's records (log lines, output, commands) and for
  chat messages (linking joins a later message that names the same things). People's comments and ``#`` notes that
  follow an episode belong to it for up to ``PATIENCE_SECONDS``: a ticket's comment stream under the log it is
  about is written over hours, and the fix is often its last comment. (Not a note after a silence that the
  session's commands resume right after: that note says what the operator turns to next.) A comment written before
  the current stretch began, or while the current stretch holds no failure (a comment stream pasted after the
  whole log, the service's start-up lines after the fix), goes back to the latest stretch with a failure that had
  begun by its time; and when two failures had begun by then, it goes with the one whose own rare words it uses
  ("Nordfin fixed: imported the GlobalSign root" under a nordfin failure, then an out-of-memory one). Times are
  compared only when both are dates, or both times of day (a Markdown timeline's "14:05" says nothing about a
  log's date). The comments of a tracker export's ticket (``attrs`` "ticket", ``poimen.inputs.readers.log``) stay
  together: its first comment is placed by its time alone (a ticket is filed about what was failing then), its
  header and description go with it, and every later comment of the ticket follows (from bench/incidents7: a
  ticket's "Closing." written the morning the next failure began), a day later too, and so do the log lines a
  comment pastes (bench/incidents20). A comment dated by its day alone ("4 days ago" on a page copied on the 28th)
  was written by that day's end.

When two incidents are worked at once in one channel, a chat message that names what only an earlier stretch has
named (the current one not), within ``GAP_SECONDS`` of that stretch's last time, goes back to it (from
bench/incidents8: a fix for the first incident told after the second one's alert).

What a service's quiet log lines name sets no topic ("Starting run sources=[a, b, c]" names them all), and a
failure that names the error of the one just before it ("worker died (OutOfMemoryError)") is its echo, no new
failure. An operator's separator note ("# ----", "# ===== 14:00 disk alert =====") always starts a new one.

A record without a failure never starts an episode on its own (chatter sits in the episode it falls in; the
roles give it none), and a record without a time is placed by its order alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from poimen.incidents.cues import DECIDED_AGAINST, HEDGE, OTHER_PROBLEM, RULED_OUT
from poimen.incidents.entities import entities
from poimen.incidents.kinds import attempts, raised as _raised, signatures as _signatures
from poimen.incidents.lines import Line, record_lines
from poimen.incidents.roles import THRESHOLD, ineffective, line_scores, pick
from poimen.incidents.spoken import SPOKEN_MIN, rare_words, spoken_of, story_of
from poimen.incidents.times import DAY, record_seconds, time_kind
from poimen.inputs.readers.shell import PROMPT
from poimen.inputs.records import Record

__all__ = ["GAP_SECONDS", "QUIET_KINDS", "RULE", "SPOKEN_MIN", "acts", "cut", "elapsed", "fails", "is_failure", "names",
           "rare_words"]  # (SPOKEN_MIN and rare_words: ``poimen.incidents.spoken``'s, for ``shared``)

GAP_SECONDS = 30 * 60
# The shell's own complaint about the command just typed ("-bash: /usr/bin/rm: Argument list too long", "sudo: …"):
# that attempt failing, within the story, not the next incident (bench/incidents21)
_COMPLAINT = re.compile(r"^-?(?:ba|z|da|k)?sh: |^sudo: ")
BURST_SECONDS = 60  # a failure this soon after another, naming its error, is its echo (a worker dying of its crash)
PATIENCE_SECONDS = 3 * 24 * 3600  # the linking horizon: a comment a week later is about something else
TOPIC_WEIGHT = 0.5


def names(record: Record, kinds: frozenset[str] = frozenset({"service", "ticket"})) -> frozenset[tuple[str, str]]:
    """The specific things a record names that say what it is about: services and tickets by default."""
    return frozenset((e.kind, e.value) for e in entities(record.text) if e.kind in kinds and e.weight > TOPIC_WEIGHT)


def fails(lines: Iterable[Line]) -> bool:
    """Whether any of ``lines`` is a failure signal: an error, an alert, a complaint."""
    return any(line_scores(line).symptom >= THRESHOLD for line in lines)


def acts(lines: Iterable[Line]) -> bool:
    """Whether any of ``lines`` does something about a failure (a fix, a mitigation, a rollback)."""
    return any(pick(line_scores(line)) == "action" for line in lines)


def is_failure(record: Record) -> bool:
    """Whether a line of ``record`` is a failure signal."""
    return fails(record_lines(record))


# A service's own log lines: what they name is a topic only when they fail ("Starting run sources=[a, b, c]" names
# every source the run has). A command's output is what the operator asked for: it names the topic.
QUIET_KINDS = frozenset({"log"})
_MACHINE_KINDS = frozenset({"log", "output"})  # what a service or a command printed
_PATIENT_KINDS = frozenset({"comment", "note", "reply"})  # people writing about the episode they follow
_SPEAKING_KINDS = frozenset({"note", "message"})  # people who announce what they turn to (not a ticket's comments)
_ON_TICKET_KINDS = frozenset({"comment", "reply"})  # about the ticket or thread they are under, whatever they name


# ... after a label the operator types on every note ("# notes: ---- 15:34, new page: … ----"; bench/incidents13)
RULE = re.compile(r"^[#\s]*(?:(?:notes?|nb|ops|log):\s*)?(?:[-=*~_]\s?){3,}", re.I)


def _said(record: Record) -> str:
    """A note's words, without the prompt it was typed at and its "#"."""
    prompt = PROMPT.match(record.text)
    return (prompt.group("cmd") if prompt else record.text).lstrip("#: ")


def _ruled(record: Record) -> bool:
    """An operator's separator ("# ----", "# ===== 14:00, disk alert =====", "# --- quiet until 11:20 ---"): the
    note draws a line under what came before, as a Markdown rule does."""
    return record.kind == "note" and bool(RULE.match(_said(record)))


def _turns_to(record: Record, mine: frozenset[tuple[str, str]], failure: bool, acted: bool,
              ever: set[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    """What a record turns the episode to: the services and tickets a failure names; the services a person's note
    or message names (a note names a ticket to follow up on), unless it asks or guesses (``_wonders``), and, during
    an investigation not yet ``acted`` on, only a service the stream never named (a note that names one from
    earlier names what it finds). Nothing for a ticket's comments (about the ticket, whatever else they name), a
    command's output, or a note that sets what it names aside ("also seeing nfs: server backup-nas-1 not
    responding, known + unrelated")."""
    if record.kind in _ON_TICKET_KINDS or record.kind == "output":
        return frozenset()
    if failure:
        return mine
    if record.kind == "note" and (RULED_OUT.search(record.text) or DECIDED_AGAINST.search(_said(record))):
        return frozenset()  # (nor one that turns a change down: "# not creating a pull secret in every namespace")
    if record.kind in _SPEAKING_KINDS and not _wonders(record) and (acted or record.kind != "note" or not mine & ever):
        return frozenset(n for n in mine if n[0] == "service")
    return frozenset()


def _wonders(record: Record) -> bool:
    """A note that asks or guesses ("is it the new ledger-api pods?", "maybe the cache") names a suspect of the
    episode it is in: the investigation going on, not a new topic."""
    text = record.text.strip()
    return text.endswith("?") or bool(HEDGE.search(text))


def elapsed(earlier: float | None, later: float | None) -> float | None:
    """Seconds between two record times, or None when either is unknown or they are not of one kind: a date, a
    syslog stamp (no year: ``times.seconds`` places it in 2000) and a time of day (seconds into its day) are
    compared only with their own kind."""
    if earlier is None or later is None or time_kind(earlier) != time_kind(later):
        return None
    return later - earlier


def _resumes(flow: Sequence[Record], times: Sequence[float | None], i: int, gap_seconds: float) -> bool:
    """Whether a command or a log line follows record ``i`` within ``gap_seconds``, before anyone speaks again (an
    untimed command right under it: the note's time is its time)."""
    for j in range(i + 1, len(flow)):
        if flow[j].kind == "command" and times[j] is None and j == i + 1:  # typed right under the note
            return True
        if flow[j].kind in _PATIENT_KINDS or times[j] is None:
            continue
        d = elapsed(times[i], times[j])
        return d is not None and 0 <= d <= gap_seconds
    return False


def _known(mine: frozenset[tuple[str, str]], named: set[tuple[str, str]]) -> bool:
    """Whether a record names something the episode has named: the same, or a service that extends a named one by a
    suffix ("db-orders-ro" where "db-orders" was named, "checkout" where "checkout-api" was)."""
    return bool(mine & named) or any(
        k == "service" and j == "service" and (v.startswith(w + "-") or w.startswith(v + "-"))
        for k, v in mine for j, w in named)


def _turn(current: Sequence[Record], done: Sequence[int], failure: Record) -> int | None:
    """Where the next incident begins when ``failure`` comes after the story so far was acted on (``done``: the
    positions just after each action): at the operator's last note since the last action, else at the command that
    printed ``failure``, else at ``failure`` itself; None when nothing was done before that command (the command
    that failed is the new story's own first step)."""
    own = next((k for k, r in enumerate(current) if failure.thread and r.thread == failure.thread), len(current))
    acted = max((p for p in done if p <= own), default=None)
    if acted is None:
        return None
    note = [k for k in range(acted, own) if current[k].kind in _SPEAKING_KINDS]
    return note[-1] if note else own


_DAY_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def cut(flow: Sequence[Record], gap_seconds: float, topics: bool = True) -> list[list[Record]]:
    """``flow`` cut into pieces, in order (the module's docstring says where); ``topics`` False cuts on time alone
    (a chat conversation ``poimen.incidents.converse`` told apart is about one thing already)."""
    pieces: list[list[Record]] = []
    starts: list[float | None] = []  # each piece's first time
    failing: list[bool] = []  # whether each piece holds a failure
    current: list[Record] = []
    start: float | None = None
    named: set[tuple[str, str]] = set()  # what the current piece has named
    failed = False  # whether the current piece holds a failure yet
    failed_at = False  # ... one that is no untimed log line (a pasted ticket header's "not loading")
    last_time: float | None = None
    last_failure: tuple[float, frozenset[str]] | None = None  # the latest failure's time and the errors it raised
    done: list[int] = []  # where in the current piece each action of its story ends
    ever: set[tuple[str, str]] = set()  # what the flow has named so far
    seen: set[str] = set()  # the failure signatures of the current piece
    times = [record_seconds(r.time, r.text, r.kind) for r in flow]
    placed: dict[str, int] = {}  # the piece each ticket's comments go to (the first comment's)
    said_by: list[set[tuple[str, str]]] = []  # what each finished piece named
    lasts: list[float | None] = []  # each finished piece's last time
    held: dict[str, list[Record]] = {}  # a ticket's header and description, till its first comment is placed
    turned: dict[str, list[int]] = {}  # a ticket a comment turned to another problem: the piece of each of its stories
    reopen = False  # the current piece was cut off as the next incident after an action, and nothing acted since
    reopen_by: frozenset[str] | None = None
    for i, record in enumerate(flow):
        t = times[i]
        ticket = dict(record.attrs).get("ticket", "")
        # (an untimed note of the page, a "######" rule under its title, is its header too: bench/incidents20)
        if ticket and ticket not in placed and (record.kind not in _PATIENT_KINDS
                                                or (record.kind == "note" and t is None)):
            held.setdefault(ticket, []).append(record)
            continue
        opens = False  # a comment that turns its ticket to another problem opens a piece of its own
        if ticket in placed and placed[ticket] < len(pieces) and record.kind in _ON_TICKET_KINDS \
                and OTHER_PROBLEM.search(record.text) and is_failure(record):
            turned.setdefault(ticket, []).append(first := placed.pop(ticket))  # "Different problem: …" (incidents16)
            opens = True
            # ... or goes with the stretch the log printed of it, begun by its time and after the story so far
            # ("Different problem but same service: overnight the pods restarted …"; bench/incidents22)
            # (the stretch still open too: the log's last burst, with the whole comment stream after it;
            # bench/incidents29)
            later = [n for n, (s0, bad) in enumerate(zip(starts + [start], failing + [failed]))
                     if n > first and bad and t is not None and (d := elapsed(s0, t)) is not None and d >= 0
                     and (e := elapsed(starts[first], s0)) is not None and e > 0]
            if later:  # (the one whose words it uses, else the latest)
                stretches = [pieces[n] if n < len(pieces) else current for n in later]
                home = later[k] if (k := spoken_of(record, stretches)) is not None else \
                    max(later, key=lambda n: ((starts + [start])[n], n))
                (pieces[home] if home < len(pieces) else current).append(record)
                turned[ticket].append(home)
                continue
        elif ticket in turned:  # a later comment of it goes with the story it speaks of, else with the latest
            stories = turned[ticket]
            spoken = story_of(record, [[r for r in (pieces[n] if n < len(pieces) else current)
                                         if r.kind in _ON_TICKET_KINDS and dict(r.attrs).get("ticket") == ticket]
                                        for n in stories])
            home = stories[spoken if spoken is not None else -1]
            (pieces[home] if home < len(pieces) else current).append(record)
            continue
        if ticket in placed and placed[ticket] < len(pieces):
            pieces[placed[ticket]].append(record)  # a ticket's comments are about the ticket: they stay together
            continue
        pasted = ("quoted", "comment") in record.attrs  # log lines a comment pastes
        if pasted and i and (home := next((piece for piece in pieces if any(r is flow[i - 1] for r in piece)), None)):
            home.append(record)  # (they go where the comment went: back to its stretch; bench/incidents34)
            continue
        if current and (pasted or (ticket in placed and record.kind in _ON_TICKET_KINDS)):
            current.append(record)  # (the ticket's piece still open: its comment a day later goes there too)
            continue
        failure = is_failure(record) and not _COMPLAINT.match(record.text)
        since = elapsed(last_time, t) if current else None
        # A person who reports a failure after a silence ("# 15:06 customer reports: cert errors") opens a new page,
        # and so does an operator's note after a silence that the session's commands resume right after: the
        # operator writing down what they turn to.
        page = since is not None and since > gap_seconds and record.kind in _SPEAKING_KINDS and (
            failure or _resumes(flow, times, i, gap_seconds))
        patient = record.kind in _PATIENT_KINDS and not page
        if patient and t is not None and current and ticket not in placed and not opens:
            # A comment stream pasted under a log can go back in time: a comment belongs with the stretch of the
            # stream it was written during, the latest that had begun by then and holds a failure (not a quiet
            # stretch of the service starting up again after the fix).
            # (a comment dated by its day alone, "4 days ago" on a page copied on the 28th, was written by its end)
            by = t + DAY - 1 if _DAY_ONLY.match(record.time) else t
            begun = elapsed(start, by)
            homes = [n for n, s0 in enumerate(starts) if failing[n] and (d := elapsed(s0, by)) is not None and d >= 0]
            home = None
            if begun is None or begun < 0 or not failed_at:
                home = max(homes, default=None)
            elif homes and not ticket:  # two failures had begun by then: the comment goes with the one it speaks
                # of, if it says (a ticket's first comment: by its time alone)
                home = spoken_of(record, [pieces[n] for n in homes] + [current])
                home = homes[home] if home is not None and home < len(homes) else None
            if home is not None:
                pieces[home].extend(held.pop(ticket, []) + [record])
                if ticket:
                    placed[ticket] = home
                continue
        if patient and t is None and ticket and ticket not in placed and record.kind in _ON_TICKET_KINDS \
                and held.get(ticket) and current:
            # A ticket's first comment with no day to place it by ("about 1 month ago"): its page goes with the
            # earlier failure its title and comment tell of, by their words ("Month-end invoice run aborts … with
            # 'unable to create native thread'" under a later burst of another error; bench/incidents20)
            homes = [n for n in range(len(pieces)) if failing[n]]
            told = story_of(held[ticket] + [record], [pieces[n] for n in homes] + [current]) if homes else None
            if told is not None and told < len(homes):
                pieces[homes[told]].extend(held.pop(ticket) + [record])
                placed[ticket] = homes[told]
                continue
        mine = names(record)
        # Two incidents worked at once in one channel: a message that names what only an earlier stretch, still
        # open, has named (and the current one has not) goes back to it ("recon change is in: DATABASE_URL now
        # points at pgbouncer-orders" while the channel has moved on to a broker alarm).
        back_to = [n for n, seen_names in enumerate(said_by) if failing[n] and mine & seen_names
                   and (d := elapsed(lasts[n], t)) is not None and 0 <= d <= gap_seconds] \
            if topics and record.kind == "message" and mine and current and not mine & named \
            and not _known(mine, named) else []
        if len(back_to) == 1:
            pieces[back_to[0]].append(record)
            said_by[back_to[0]] |= mine
            lasts[back_to[0]] = t
            continue
        new = False
        if current:
            late = since is not None and since > gap_seconds
            if late and patient and since <= PATIENCE_SECONDS:
                late = False
            # A new topic: a failure, or a person's note or message, naming services or tickets where the episode
            # has named others and none of these ("# 14:30 second page: ingest-worker restarting"); a note that asks
            # or guesses about another service names a suspect, not a new topic; and a command's output is what
            # the command above it, already in this episode, printed.
            said = _turns_to(record, mine, failure, bool(done), ever)
            # (A failure within ``BURST_SECONDS`` of the one before that names its error is its echo: "worker died
            # (OutOfMemoryError)" after the OutOfMemoryError.)
            gap = elapsed(last_failure[0], t) if last_failure else None
            echo = failure and gap is not None and gap <= BURST_SECONDS and bool(_raised(record) & last_failure[1])
            # ("# restart didn't help. fictpay can't change their TLS before Q1": the story goes on, whatever it names)
            topic = topics and failed and bool(said) and bool(named) and not _known(mine, named) and not echo \
                and not ineffective(record.text)
            # A failure of another kind after the story so far was acted on (a failure, then a fix) is the next
            # incident of a session: it starts at the note that turned to it, else at the command that printed it.
            back = _turn(current, done, record) if topics and failure and record.kind in _MACHINE_KINDS and done \
                and not echo \
                and not _signatures(record) & seen else None
            after = back is not None
            # A ticket's first comment with no time to place it by ("Tomasz Wilk @twilk · 2 weeks ago", GitLab) opens
            # a piece of its own after another ticket's comments: two issues of one export are two threads
            # (bench/incidents20)
            another = bool(ticket) and ticket not in placed and t is None and record.kind in _ON_TICKET_KINDS \
                and any(n == len(pieces) for k, n in placed.items() if k != ticket)
            new = late or topic or after or _ruled(record) or opens or another
            if after and not late and not topic:
                carried, current = current[back:], current[:back]
        if not new and reopen and record.kind in _SPEAKING_KINDS and ineffective(record.text) and not done \
                and (reopen_by is None or attempts(record.text) & reopen_by):
            # "# rollback to 4.11.2 changed nothing, same probe failures": what the cut took for the next incident
            # was the first one going on; the piece goes back to it
            current = pieces.pop() + current
            starts.pop(), failing.pop(), lasts.pop()
            named |= said_by.pop()
            failed, seen = True, seen | {key for r in current for key in _signatures(r) if is_failure(r)}
            failed_at = True
            start = min((x for x in (record_seconds(r.time, r.text, r.kind) for r in current) if x is not None),
                        default=None)
        if new or done:
            reopen = False
        if new:
            pieces.append(current)
            starts.append(start)
            failing.append(failed)
            said_by.append(set(named))
            lasts.append(last_time)
            # (a silence after an attempt, too, when the note names its kind: "# restart bought nothing, same 406
            # ~32 min after the restart" after 38 quiet minutes; bench/incidents38)
            tried = frozenset().union(*(attempts(current[p - 1].text) for p in done if p <= len(current)))
            reopen = not topic and ((after and not late) or (late and not after and bool(tried)))
            reopen_by = tried if late else None  # the kinds of attempt the note must name, if any
            current, named, failed, start, done, seen = [], set(), False, None, [], set()
            failed_at = False
            if after and not late and not topic:
                for r in carried:
                    current.append(r)
                    named |= names(r)
                    start = start if start is not None or (t0 := record_seconds(r.time, r.text, r.kind)) is None else t0
        if ticket in turned:
            turned[ticket].append(len(pieces))
        elif ticket:
            current.extend(held.pop(ticket, []))
            placed[ticket] = len(pieces)
        current.append(record)
        if failure:
            seen |= _signatures(record)
        if ineffective(record.text):
            done = []  # "the rollback changed nothing": the story goes on
        elif failed and not failure and acts(record_lines(record)):
            done.append(len(current))
        elif failure and record.kind == "output" and done and done[-1] == len(current) - 1 \
                and current[-2].kind == "command":
            done.pop()  # "Error: UPGRADE FAILED" under the helm upgrade: the command changed nothing
        # A quiet log line ("Starting run sources=[…]") sets no topic, nor does a question or a guess: "failover on
        # pg-bw-prod last night? maybe it's on the replica" names a suspect (bench/incidents47)
        if failure or (record.kind not in QUIET_KINDS and not _wonders(record)):
            named |= mine
        ever |= mine
        failed = failed or failure
        failed_at = failed_at or (failure and (t is not None or record.kind != "log"))
        if failure and t is not None:
            last_failure = (t, _raised(record))
        if t is not None:
            last_time = t
            start = t if start is None else start
    if current:
        pieces.append(current)
    return pieces + [group for group in held.values()]  # a ticket no comment was placed for stands alone
