"""Application and system logs: one record per log line, a multi-line trace joined to the line that raised it.

A log line begins with a timestamp, a level or an id, whatever token comes first (loghub's HPC lines open with a
numeric id, Thunderbird's and BGL's with "-", OpenStack's with the file name). A continuation — an indented line,
"at …", "Caused by: …", "Traceback …", "The above exception …", a Python frame, an exception class line, "... 12
more", a Go panic's "goroutine 7 [running]:", its frames and "created by …", a native frame "3: 0x1f2e3d" —
belongs to the record above it, up to ``MAX_TRACE_LINES``, so a trace stays with its error. A line stamped by
syslog or journald ("2024-06-04T03:11:40+0000 host prog[123]: …") is a continuation when what the program wrote
is one and the same program wrote the line above, so a panic dumped through journald is one trace too. Every
other line is a record, as every line of a .log always was.

A JSON object on a line of its own that is a log event (pino, bunyan, zap, logstash …) is read by ``jsonlog``. A
person speaking (``speakers``) — the comments of a ticket pasted under the log they are about — is a ``comment``
with its time and author, its words running to the next blank line, and each paragraph after a blank line that is
prose (no log, trace or note line, ticket header or rule) another record of the same comment, so what people said
about an error reads as their words, not as one more log line. An operator's ``# …`` note under the log is a
``note`` (its indented ``#   …`` lines carry it on), at the clock it opens with on the date of the last log line
read, so the flow can place it beside what the log printed then; a log line that prints a clock alone (WildFly's
"10:58:12,331") under a banner that gives one date ("=== wf-bill-01:console.log -- 2025-03-12 ===") is on that
date; a log time under a banner that names a zone ("times are Europe/Helsinki") is in that zone (``zones``), so it
compares with comments a tracker stamps in UTC. A tracker export's ticket header ("INV-2231  Reservations timing
out") files what follows it, up to the next header or log line, under its ticket (``attrs`` "ticket"); a comment's relative time there ("2 weeks ago") is the
day it was, counted back from the date the header says the page was copied on (``speakers.dated``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import tzinfo
from pathlib import Path

from poimen.inputs.readers.jsonlog import is_log_event, log_record
from poimen.inputs.readers.jsonpos import depth_ok
from poimen.inputs.readers.zones import banner_day, on_day, with_year, zone_of, zoned
from poimen.inputs.readers.speakers import (ADDRESSED, FIELD_LINE, GROUP_MARK, NAME_ALONE, TIME_ALONE, as_of, dated,
                                           header, speaker)
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, shown_pieces
from poimen.text.log_lines import LOG_START, level_of, source_prefix, time_of

MAX_TRACE_LINES = 64  # a runaway "trace" (an indented dump) is cut into records of this many lines

CONTINUATION = re.compile(
    r"^(?:at [\w$.<>]+[(.]|Caused by\b|Suppressed:|Traceback \(|During handling of|The above exception\b|File \""
    r"|\.\.\. \d+ (?:more|common)|(?:[\w$]+\.)+[\w$]*(?:Exception|Error|Throwable)\b"
    r"|[\w$]+(?:Exception|Error|Throwable)\b|(?:Exception|Error|Throwable):"
    r"|goroutine \d+ \[|created by |\[signal |\d+: 0x[0-9a-fA-F]+\b"
    r"|(?:[\w.-]+/)*[\w.-]+\.(?:\(\*?[\w.\[\]]+\)\.)?[\w.$\[\]]+\(.*\)$)")  # a Go frame: pkg.(*T).Method(0xc0…)
# The line a Python traceback ends with, after its indented frames: the exception raised ("pool.Exhausted: …").
PYTHON_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?::\s.*)?$")
# A syslog or journald stamp and the program that wrote the line: "<ISO time or Mmm dd hh:mm:ss> host prog[pid]: ".
SYSLOG = re.compile(r"^(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
                    r"|[A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2}(?:\.\d+)?) (?P<source>[\w.-]+ [\w./@-]+(?:\[\d+\])?):(?: |$)")


def _source(line: str) -> tuple[str, str, int] | None:
    """(the program that wrote a syslog-stamped line, what it wrote, that text's indent); None if unstamped."""
    m = SYSLOG.match(line)
    if not m:
        return None
    body = line[m.end():]
    return m.group("source"), body.strip(), len(body) - len(body.lstrip())


# An operator's note written under a log ("# 02:48  the pool keeps its 5 connections idle"), and the indented
# "#        after 350 s without telling either side." lines that carry it on.
NOTE = re.compile(r"^#+(?:\s+\S.*)?$")
NOTE_MORE = re.compile(r"^#(?:\s{2,}|\t)(?!\d{1,2}:\d{2}\b)\S")
NOTE_CLOCK = re.compile(r"^#+\s*(\d{1,2}:\d{2})\b")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_BANNER = re.compile(r"^[=#*~-]{3,}\s.*\s[=#*~-]{3,}$")
_BOX_RULE = re.compile(r"^[=#*~-]{3,}$")
_ISO_DAY = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])")
_CLOCKED = re.compile(r"\d:\d\d")
_CLOCK_ONLY = re.compile(r"^\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?$")

JOIN, HOLD, APART = "join", "hold", "apart"


class _Reader:
    """The record being read, and the rule that grows it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.start = self.end = 0
        self.said: tuple[str, str] | None = None  # (time, author) of a comment
        self.note = False  # an operator's "# …" note under the log, its indented "#   …" lines joined
        self.day = ""  # the date of the last log line read: a note's "02:04" is a time on it
        self.dated = ""  # the date the last banner gives the lines under it, which print a clock alone
        self.zone: tzinfo | None = None  # the zone the last banner says the clocks under it are in
        self.last_indent = 0
        self.held: list[Piece] = []  # stamped lines with nothing written: kept if the trace goes on after them
        self.speaking: tuple[str, str] | None = None  # (time, author) of the comment the last paragraph was of
        self.quoted = False  # the record is log lines the comment above pastes
        self.mailed = False  # the comment spoken is an e-mail (its header the fields "From: …", "Date: …")
        self.block = False  # ... or another indented block of it (its lines keep their indent)
        self.paged = False  # the last record was a page's own text (a ticket's description), not the log's
        self.fenced = False  # inside a code block a comment opened ("{code:java}", "```"): what it pastes

    def verdict(self, p: Piece) -> str:
        if not self.lines or len(self.lines) + len(self.held) >= MAX_TRACE_LINES:
            return APART
        line = p.text
        if self.note:
            return JOIN if p.line_start == self.end + 1 and NOTE_MORE.match(line) else APART
        if self.said:  # a comment's paragraph runs to the next blank line, log line or speaker
            fits = p.line_start == self.end + 1 and not LOG_START.match(line) and not speaker(line)
            return JOIN if fits else APART
        if (mux := source_prefix(line)) and not LOG_START.match(line):  # a merged log's trace line, under its source
            first = source_prefix(self.lines[0])
            body = line[mux.end():]
            same = first is not None and first.group(0).strip() == mux.group(0).strip()
            return JOIN if same and (body[:1].isspace() or CONTINUATION.match(body)) else APART
        if not LOG_START.match(line):
            raised = (self.last_indent > 0 and PYTHON_RAISED.match(line)
                      and any(x.startswith("Traceback (") for x in self.lines))
            if p.indent > 0 and line[:1].isupper() and speaker(line):  # an indented comment's header (Basecamp's
                return APART  # "  Fenna Ruiz · May 12 at 8:09am" under a to-do): no line of the record above
            return JOIN if p.indent > 0 or CONTINUATION.match(line) or raised else APART
        mine, theirs = _source(self.lines[0]), _source(line)
        if not (mine and theirs and mine[0] == theirs[0]):
            return APART
        if not theirs[1]:
            return HOLD
        # What a program writes through syslog is indented for many reasons (a kernel's memory map): an indented
        # line continues a trace already begun, a trace line ("goroutine 1 [running]:", "at …") begins one.
        trace = CONTINUATION.match(theirs[1]) or (theirs[2] > 0 and len(self.lines) > 1)
        return JOIN if trace else APART

    def take(self, p: Piece, verdict: str) -> None:
        if verdict == HOLD:
            self.held.append(p)
            return
        self.lines += [h.text for h in self.held] + [self._as_written(p)]
        self.held, self.end, self.last_indent = [], p.line_end, p.indent
        if self.said and _CODE_FENCE.match(p.text):  # a comment's line opening or closing a code block
            self.fenced = not self.fenced

    def _as_written(self, p: Piece) -> str:
        return " " * p.indent + p.text if self.block else p.text

    def flush(self) -> Iterator[Record]:
        """The record read so far (its span the file lines it came from, blank lines inside it included)."""
        if self.lines:
            text = "\n".join(self.lines)
            if self.said:
                self.paged = False
                when = with_year(on_day(self.said[0], self.dated), self.day)  # ("03:41" under "--- Tuesday, April 16, 2024 ---")
                yield Record(text, self.start, self.end, kind="comment", time=when,
                             author=self.said[1])
            elif self.note:
                clock = NOTE_CLOCK.match(self.lines[0])
                # ... or on the one day it names, over the log it heads ("### 2025-02-14, after 2.31.1, pod …")
                days = _ISO_DAY.findall(self.lines[0]) if not clock else []
                yield Record(text, self.start, self.end, kind="note",
                             time=zoned(f"{self.day}T{clock.group(1).zfill(5)}:00", self.zone)
                             if clock and self.day else days[0] if len(days) == 1 else "")
            else:
                when = time_of(self.lines[0])
                if banner := _BANNER.match(self.lines[0]):  # "=== host:console.log -- 2025-03-12 ===", "--- 2025-04-14,
                    # scan-api-5f7b8c6d9-qh4tn ---" (a date first: bench/incidents23)
                    self.dated = banner_day(banner.group(0))  # ("---- Tuesday, April 16, 2024 ----" over a chat)
                    self.zone = zone_of(banner.group(0))
                elif not when and _BOX_RULE.match(self.lines[0]) and len(self.lines) > 1:  # a box: "=====" over
                    # " server.log  claims-app-03 …" / " Thursday 2025-03-20, …" (bench/incidents22)
                    self.dated = dates[0] if len(dates := _ISO_DAY.findall(text)) == 1 else ""
                    self.zone = zone_of(text)  # " Tuesday 2025-03-18, times are Europe/Helsinki"
                elif _CLOCK_ONLY.match(when) and self.dated:  # a WildFly line's "10:58:12,331" on the banner's day
                    when = f"{self.dated} {when}"
                self.day = day.group(0) if (day := _DAY.match(when)) else self.day
                when = zoned(when, self.zone)
                self.paged = not when and not banner
                yield Record(text, self.start, self.end, kind="log", time=when, level=level_of(self.lines[0]),
                             attrs=(("quoted", "comment"),) if self.quoted else ())
        self.lines, self.held, self.said, self.note = [], [], None, False

    def begin(self, p: Piece) -> None:
        said = speaker(p.text)
        if self.speaking and _CODE_FENCE.match(p.text):  # Jira's "{code:java}" … "{code}", Markdown's fences
            self.fenced = not self.fenced
        elif not self.speaking:
            self.fenced = False
        # log lines a comment pastes, indented under its words ("hundreds of these between 06:00:01 and 06:02:51:"):
        # what the log printed, quoted in the comment, which goes on after them
        # (or, flush left, the exception a comment pastes with no stamp: "com.fasterxml…StreamConstraintsException: …")
        self.quoted = bool(not said and self.speaking and (p.indent > 0 and LOG_START.match(p.text) or (
            p.indent == 0 and _EXCEPTION.match(p.text) and not LOG_START.match(p.text)))) or bool(
            # (or the description of an issue pastes, indented: `gh issue view`'s body; bench/incidents27)
            not said and self.paged and p.indent > 0 and LOG_START.match(p.text)) or bool(
            not said and self.speaking and self.fenced and LOG_START.match(p.text))  # flush left in a code block
        # and any other indented block under them ("Building the index by hand instead:" over the statement, an
        # EXPLAIN's plan): the comment's own, as indented as it was written, so a card tells it for a code block
        self.block = bool(not said and self.speaking and p.indent > 0 and not self.quoted)
        if not said and (p.text.strip() == "--" or _FOOTER.match(p.text)):  # an e-mail's signature delimiter: a
            self.speaking = None  # notification's footer follows; `gh issue view`'s last line: the issue ends
        if not said and self.speaking and (_goes_on(p) or self.block):
            said = self.speaking  # the next paragraph of the comment above, after a blank line
        if said and said != self.speaking:  # a new header: an e-mail's fields ("From: …")?
            self.mailed = bool(FIELD_LINE.match(p.text.split("\n", 1)[0]))
        if not self.quoted and not (self.speaking and self.mailed and _BOX_RULE.match(p.text)):
            self.speaking = said  # (a rule inside an e-mail's body, a Redmine notification's "-----", ends nothing)
        self.lines, self.start, self.end, self.said = [self._as_written(p)], p.line_start, p.line_end, said
        self.note = not self.said and NOTE.match(p.text) is not None
        self.last_indent = p.indent


_CODE_FENCE = re.compile(r"^\s*(?:\{(?:code|noformat)(?::[^}]*)?\}|```|~~~)")
_EXCEPTION = re.compile(r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error|Throwable)\b")  # "java.sql.SQLException: …"
# A line that is no person's prose: a rule or a banner ("--- container restarted 16:31 ---", "===== pasted from … =====").
_RULE = re.compile(r"^[-=~*_#]{3,}")


def _quoted(record: Record) -> bool:
    """Whether a log record is lines a comment pasted, not what the log went on to print."""
    return ("quoted", "comment") in record.attrs


def _goes_on(p: Piece) -> bool:
    """Whether a paragraph after a comment and a blank line is more of that comment ("1. After roughly 2-3 hours
    the relay starts answering 500 …" under "**okonkwo-q** commented on Mar 4, 2025 / Hi! We moved our relay …",
    bench/incidents16): prose, flush left, that no log, note, trace, ticket header or rule begins."""
    line = p.text
    return p.indent == 0 and not (LOG_START.match(line) or NOTE.match(line) or CONTINUATION.match(line)
                                  or TICKET_HEAD.match(line) or NUMBERED_HEAD.match(line) or _RULE.match(line))


def _event(p: Piece) -> Record | None:
    """A structured log line's record, None for any other line."""
    if not (p.text.startswith("{") and p.text.endswith("}")) or not depth_ok(p.text):
        return None
    try:
        value = json.loads(p.text)
    except ValueError:
        return None
    return log_record(value, p.line_start, p.line_end) if is_log_event(value) else None


# A ticket's header in a tracker's text export pasted under the log: "INV-2231  Reservations timing out", "OPS-7: …"
# A line that is the key alone, bracketed or not ("[PAY-4417]" over each comment of an export of two tickets),
# files what follows under it the same way (from bench/incidents9).
# Jira Server's issue view copied as text heads an issue with its breadcrumb, "Ledger Gateway / LGW-1442" (bench/incidents25);
# Shortcut's story page, with its id alone, "sc-4417" over the title; Phabricator's task, "T2291  Tenant portal: …"
# (bench/incidents29).
TICKET_HEAD = re.compile(r"^(?:(?P<key>[A-Z][A-Z0-9]{1,9}-\d{1,7})(?::|\s+[-–—|·]|\s{2,}|\t)\s*\S"
                         r"|\[(?P<bracketed>[A-Z][A-Z0-9]{1,9}-\d{1,7})\]\s*$|(?P<bare>[A-Z][A-Z0-9]{1,9}-\d{1,7})\s*$"
                         r"|[A-Z][\w .&'-]{0,40}? / (?P<crumb>[A-Z][A-Z0-9]{1,9}-\d{1,7})\s*$|(?P<story>sc-\d{1,7})\s*$"
                         r"|(?P<task>T\d{2,7})\s{2,}\S)")


# A helpdesk's ticket header: 'Ticket #48213  "Invoices stuck in TAX PENDING"' (Zendesk, Freshdesk). Only an export
# of two tickets or more files comments by it: one ticket's thread can hold two incidents (reopened the next day),
# and filing it under its one number would hold them together (bench/incidents9).
# A helpdesk may name itself first: "Zendesk ticket #51877  \"Claim letters won't download\"". ServiceNow's numbers are a
# helpdesk's too: "INC0048213 | Priority 2 - High | State: Resolved" (bench/incidents16).
# An issue tracker's page copied as text heads each issue with its address or its tracker and number: "==== https://
# gitlab.example/group/app/-/issues/1187 (copied from the web UI) ====", "Redmine -- https://…/issues/4471", "Bug #4471"
# (bench/incidents20).
NUMBERED_HEAD = re.compile(r"^(?:(?:(?:Zendesk|Freshdesk|Help ?Scout|Front|Intercom) )?(?:[Tt]icket|Issue|Case|Request)"
                           # (Zammad's "Ticket#61827"; Trac's "Ticket #4133 (closed …)")
                           r"\s*(?P<number>#\d{2,9})(?=\s{2,}|\s*[:|\"“(-]|\s*$)"
                           r"|(?P<record>[A-Z]{2,6}\d{6,10})(?=\s*[:|]|\s{2,}|\t)"
                           # ServiceNow's print: "Kestrel ServiceNow  -  Incident INC0048213   (printed …)"
                           r"|[^\n]{0,60}?\s[-–—]\s+(?:Incident|Problem|Change|Request)\s+(?P<snow>[A-Z]{2,6}\d{6,10})\b"
                           r"|(?:Bug|Feature|Support|Task|Defect|Story|Incident|Problem)\s+(?P<tracked>#\d{1,9})\s*$"
                           # ... or last in a breadcrumb: "Zoho Desk · Warehouse Systems · Ticket #5127" (incidents47)
                           r"|(?:[^\n·]{1,40} · ){1,3}(?:[Tt]icket|[Ss]tory|[Cc]ase|[Ii]ssue|[Bb]ug) (?P<crumbed>#\d{2,12})\s*$"
                           # TOPdesk's card: "Incident  I 2506 0412" (bench/incidents44)
                           r"|(?:Incident|Problem|Change|Call)\s+(?P<spaced>[A-Z] \d{4} \d{3,5})\s*$"
                           # Bugzilla's page: "Bug 20417 - claims-rules redeploy fails …" (bench/incidents22); and
                           # FogBugz's case, its category after it: "Case 48213 (Bug)  Bulk …" (bench/incidents47)
                           r"|Bug\s+(?P<bugzilla>\d{2,9})\s+[-–—]\s+\S|Case\s+(?P<case>\d{2,9})\s+\([A-Z][a-z]+(?: [A-Z][a-z]+)?\)\s"
                           r"|[=#*~-]{0,80}\s*(?:[A-Z][\w ]{0,20}\s+[-–—]+\s+)?https?://\S+?/(?:-/)?(?:issues|tickets|"
                           r"work_packages)/(?P<url>\d{1,9})\b"
                           # `gh issue view`'s title line: "ETA calls … fail with \"…\" halden-mobility/fleet-dispatch#412"
                           r"|\S[^\n]{0,200}\s[\w.-]+/[\w.-]+#(?P<gh>\d{1,7})\s*$)")


_FOOTER = re.compile(r"^View this (?:issue|pull request) on GitHub: https?://")


def _number(head: re.Match) -> str:
    """The ticket a numbered header names, as "#4471" however it was written."""
    if head.group("spaced"):
        return head.group("spaced")
    named = ("number", "crumbed", "record", "snow", "tracked")
    return next((head.group(g) for g in named if head.group(g)), None) or \
        "#" + (head.group("url") or head.group("bugzilla") or head.group("case") or head.group("gh"))


def _on_tickets(records: Iterator[Record]) -> Iterator[Record]:
    """``records`` with the ticket each stands under (``attrs`` "ticket"): from a ticket's header line to the next
    header or the next line the log itself wrote, so a comment stream of several tickets keeps each comment on its
    ticket (``poimen.incidents.flow`` keeps a ticket's comments together). A helpdesk's numbered header counts once
    a second one is seen: the records from the first are held till then, or till the end (streamed otherwise)."""
    numbers: set[str] = set()
    held: list[Record] = []
    ticket = copied = ""

    def filed(record: Record, count: bool) -> Record:
        nonlocal ticket, copied
        head = TICKET_HEAD.match(record.text) if record.kind == "log" and not record.time else None
        number = NUMBERED_HEAD.match(record.text) if count and record.kind == "log" and not record.time else None
        if head or number:
            previous = ticket
            ticket = _number(number) if number else \
                head.group("key") or head.group("bracketed") or head.group("bare") or head.group("crumb") or head.group("story") \
                or head.group("task")
            # "(copied from the web UI on 2025-02-28)": what "2 weeks ago" counts from (Redmine's "Bug #4471" under
            # the page's header names the same ticket again, and no date)
            copied = as_of(record.text) or (copied if ticket == previous else "")
            record = replace(record, kind="ticket", level="")  # the ticket's key and summary, as its filer wrote them
        elif record.kind == "log" and LOG_START.match(record.text) and record.time and not _quoted(record) and (
                record.level or (_CLOCKED.search(record.time) and not _CLOCK_ONLY.match(record.time))):  # (not a
            # comment's wrapped line that starts with a clock, "07:05:14 and then nothing until the client is gone",
            # nor a description's "run.date 2025-04-21: reconcileStep failed at 05:41"; bench/incidents27)
            ticket = copied = ""
        if record.kind == "comment" and ticket:
            record = replace(record, time=dated(record.time, copied))
        elif record.kind == "log" and ticket and not record.time:  # the page's own text ("Example requestId=…,
            record = replace(record, kind="ticket", level="")  # log excerpt above"), not a line the log printed
        return replace(record, attrs=tuple(sorted(record.attrs + (("ticket", ticket),)))) if ticket else record

    for record in records:
        number = NUMBERED_HEAD.match(record.text) if record.kind == "log" and not record.time else None
        if number:
            numbers.add(_number(number))
        if len(numbers) == 1:
            held.append(record)
            continue
        for earlier in held:
            yield filed(earlier, True)
        held = []
        yield filed(record, len(numbers) > 1)
    for earlier in held:  # one numbered ticket: one thread, filed under nothing (it may hold two incidents)
        yield filed(earlier, False)


def read(path: Path, options) -> Iterator[Record]:
    return _on_tickets(_records(path, options))


def _starts_header(run: list[Piece], p: Piece) -> bool:
    """Whether ``p`` goes on (or begins) a header over several lines: an article's field, a name alone, the time
    alone under a name."""
    said = [q.text for q in run if not GROUP_MARK.match(q.text)]  # (Google Groups' "unread," between them)
    return p.indent == 0 and (FIELD_LINE.match(p.text) is not None or (not run and NAME_ALONE.match(p.text) is not None)
                              or (len(said) == 1 and NAME_ALONE.match(said[0]) is not None
                                  and (TIME_ALONE.match(p.text) is not None or GROUP_MARK.match(p.text) is not None))
                              or (len(said) == 2 and run[-1].text == said[-1] and TIME_ALONE.match(said[-1]) is not None
                                  and ADDRESSED.match(p.text) is not None))


def _headers(pieces: Iterator[Piece]) -> Iterator[Piece]:
    """``pieces`` with each header over several lines (``speakers.header``: "Katja Ferreira" over "6 May 2025 at
    11:15", an article's "From: … / Subject: … / Created: …") made one piece, so it reads as one speaker's header."""
    run: list[Piece] = []

    def done() -> Iterator[Piece]:
        texts = [q.text for q in run]
        if len(run) >= 2 and header(texts):
            yield Piece("\n".join(texts), run[0].line_start, run[-1].line_end, run[0].indent)
        else:
            yield from run

    for p in pieces:
        if run and (p.line_start != run[-1].line_end + 1 or not _starts_header(run, p)):
            yield from done()
            run = []
        if _starts_header(run, p):
            run.append(p)
        else:
            yield p
    yield from done()


def _records(path: Path, options) -> Iterator[Record]:
    yield from log_records(_headers(shown_pieces(path, "\n", options.max_chars)))  # a log's colour codes dropped


def log_records(pieces: Iterable[Piece]) -> Iterator[Record]:
    """The records of a log's lines (``pieces``, one a line): a log's own, or one a document pastes (``text``)."""
    reader = _Reader()
    for p in pieces:
        event = _event(p)
        verdict = APART if event is not None else reader.verdict(p)
        if verdict != APART:
            reader.take(p, verdict)
            continue
        yield from reader.flush()
        if event is not None and p.indent > 0 and (reader.speaking or reader.paged):  # an event a comment or an
            yield replace(event, attrs=event.attrs + (("quoted", "comment"),))  # issue's description pastes, indented
        elif event is not None:
            yield event
            reader.speaking = None  # a log event ends what a person was saying
        else:
            reader.begin(p)
    yield from reader.flush()
