"""Plain text: paragraphs, a blank line apart (the chunker's reading of .txt since the first release).

A plain-text document has headings too, written the ways people write them without Markdown: a title on the first
lines of the file, a line underlined with ``===`` or ``---``, a short line in capitals ("ROOT CAUSE"), a short
title-case line heading the paragraph under it ("Detection" over "The promo started at 18:00 …"), a numbered
one ("2. Timeline"), a label ending in a colon ("Resolution:"), a line that opens a problem of its own
("Incident 2: search results empty after the reindex", ``poimen.text.headings``), which opens a section however
long it runs, or a ticket's title alone as a paragraph ("#118204: Quote screen hangs"), whose underlined headings
("History") are parts of that ticket. A record keeps its text as written and carries
the headings it stands under (the title, then its section, then the part of the section a weaker heading opens:
"REMEDIATION" / "For the crash:"), as a Markdown paragraph does, so a postmortem's "Root cause" and "Remediation"
sections read as parts of one document. The first underline character a document uses opens sections and a second
one opens parts of them, as setext ("===" over "---") and reStructuredText (levels by order of first use) read
them: a wiki page with "===" under each incident and "---" under its "Resolution" keeps the incident in each
part's headings (from bench/incidents10). A paragraph indented by ``CODE_INDENT`` blanks or more is a code block
(kind ``code``), as Markdown reads it: "Marked it out:" over "           ceph osd out osd.17"; unless a line
of it ends a sentence (a timeline entry's indented second paragraph is prose). A form's fields written with leader
dots ("State ................ Closed - Permanent Fix Applied") are "key: value" rows, one a line. A chat copied
into the document, a day alone on its line over messages headed by their author and a clock, is a chat's messages
(``Chat``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from poimen.inputs.readers.log import log_records
from poimen.inputs.readers.speakers import speaker
from poimen.inputs.readers.zones import heading_day, on_day, written_year
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, pieces
from poimen.text.log_lines import is_log_line, level_of
from poimen.text.headings import DATED_TITLE, names_problem

_UNDERLINE = re.compile(r"^\s*([=\-~*#_])\1{2,}\s*$")
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.)]|[IVX]{1,4}\.)\s+(?P<name>\S.*)$")
# A Markdown heading in a plain-text file, two marks or more ("## Timeline", "### jcmd 1 Thread.print on …"): a
# note's "# kubectl rollout undo …" with one mark is a comment, not a heading
_HASHED = re.compile(r"^#{2,6}[ \t]+(?=\S)")
# a caption between two rules on its own line, over what was pasted or written under it: "--- booking-web-5f9c6d8b7-q2wzl,
# 2024-11-13 (7.0.1), first start ---" (bench/incidents47), "=== worker logs ===", "---- Human edits ----"
_CAPTION = re.compile(r"^\s*([=\-~*#])\1{2,}[ \t]+(?P<name>\S(?:.*\S)?)[ \t]+\1{3,}\s*$")
# A ticket's own title, alone as a paragraph: Request Tracker's printed "#118204: Policy admin quote screen hangs, then
# \"503 Service Unavailable\"", "OPS-7: checkout slow" (bench/incidents36). It opens the ticket's section, and a
# heading underlined under it ("History", "Comments") is a part of that ticket, not a section beside it.
_TICKET_TITLE = re.compile(r"^(?:#\d{2,9}|[A-Z][A-Z0-9]{1,9}-\d{1,7}):[ \t]+\S")
_FOR = re.compile(r"^For (?:the |problem |part |issue )?\S")
_DATED = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\b")
_FIELD = re.compile(r"^\s*(?:[A-Z][\w /()-]{0,30}:\s+\S|\s{2,}\S)")  # "Incident ID: INC-2291", or its continuation
# A form's fields with leader dots, as a ticket tool prints a record ("State ................ Closed", ITIL problem
# records; bench/incidents35): each a "key: value" row
_LEADER = re.compile(r"^\s*(?P<key>[A-Za-z][\w /()&-]{0,40}?)\s?\.{3,}[ \t]+(?P<value>\S.*)$")
_LIST_OR_TIME = re.compile(r"^\s*(?:[-*•>|]|\d{1,2}:\d{2}\b|\d{4}-\d{2}-\d{2}|\[)")
_POSTER = re.compile(r"^([A-Z][\w.-]{1,30})\s{2,}(\d{1,2}:\d{2}(?: ?[AaPp][Mm])?)\s*$")
TITLE_WORDS = 16  # a document's title line
YEAR_PARAGRAPHS = 5  # the paragraphs at a document's top that may date it
HEADING_WORDS = 6  # a section heading line
PART_WORDS = 8  # ... a line over an indented body: "What we tried that did not help" over "  - Rolling restart …"
CODE_INDENT = 4  # a paragraph set off by four blanks is a block of code, config or a command, as in Markdown
# The rule under a table's header in plain text, one run of dashes per column ("  ----  -------  ----"): the table's
# rows are rows, not a paragraph to rejoin (a review's "Action Items" table; bench/incidents17)
_COLUMN_RULE = re.compile(r"^[ \t]*-{3,}(?:[ \t]{2,}-{3,})+[ \t]*$", re.M)
# A JVM's thread dump (jstack, jcmd Thread.print) prints lines that read as headings: "Threads class SMR info:", "Found
# one Java-level deadlock:" underlined with "=". From its first line to its last, or to the document's next heading
# set off by "##" or a rule, it is one part of the section it stands in (bench/incidents47)
_DUMP_START = "Full thread dump "
_DUMP_END = re.compile(r"^(?:JNI global refs\b|Found \d+ deadlocks?\.)", re.M)
_SENTENCE_END = re.compile(r"[.!?]\s*$", re.M)  # ... unless a line of it ends a sentence: a timeline's indented prose


def _heading(line: str, words: int, boxed: bool = False) -> str | None:
    """The heading a line states, or None: short, no sentence end, no list item, time stamp or "key: value". A
    ``boxed`` line (underlined, or between two rules) may start with a date: "2024-06-18 -- Billing exports stuck"."""
    text = line.strip()
    numbered = _NUMBERED.match(text)
    if numbered:
        text = numbered.group("name").strip()
    label = text.rstrip(":").strip()
    # A sentence end rules a line out whatever else it is: most paragraphs end in one, and asking first spares them
    # the problem pattern and splitting their whole first line into words.
    if not label or label[-1] in ".,;!?":
        return None
    problem = names_problem(label)  # "Incident 2: search results empty after the reindex" however long
    dated = bool(DATED_TITLE.match(text))
    if problem:  # "EDGE ITEM 1 - new tenant custom domains not going live (Tue 17 June to Thu 19 June)"
        words = max(words, 2 * TITLE_WORDS)
    elif dated or (text.endswith(":") and _FOR.match(label)):  # "For problem 2 (replica lost the WAL …):"
        words = max(words, TITLE_WORDS)
    # in a box, a word has a letter or digit: the dots and bars between the title's fields count for none
    # ("PM-2025-019 . SEV2 . 14 May 2025 . reports-worker pods stuck Pending after a node group change")
    counted = sum(not boxed or any(c.isalnum() for c in w) for w in label.split())
    if counted > words or (_LIST_OR_TIME.match(text) and not (
            (boxed or dated) and _DATED.match(text))):
        return None
    if ": " in label and words == HEADING_WORDS and not label.isupper():  # "SECOND PROBLEM: STAMPEDE" is a heading
        return None
    if not (label[0].isupper() or label[0].isdigit() or boxed):  # underlined, any line: "/var/log filling up on …"
        return None
    return label


def _box(lines: list[str]) -> int:
    """The index of the rule that closes a box around a heading: a rule, the heading and at most two lines under it
    (the ticket and the times: "1. LOGS SEARCH … (SEV-2)" / "   INC-2025-0244, Tue 09:20 - 11:05 UTC"; from
    bench/incidents11), a rule; 0 when the paragraph is no box."""
    if len(lines) >= 3 and _UNDERLINE.match(lines[0]):
        return next((i for i in range(2, min(len(lines), 5)) if _UNDERLINE.match(lines[i])), 0)
    return 0


def rule(lines: list[str]) -> str:
    """The character a paragraph's heading is underlined (or boxed) with, "" when it has none."""
    box = _box(lines)
    if box:
        return lines[box].strip()[0]
    return lines[1].strip()[0] if len(lines) >= 2 and _UNDERLINE.match(lines[1]) else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _head(lines: list[str], first: bool, block_follows: bool, indent: int = 0) -> tuple[str | None, bool]:
    """(the heading a paragraph opens with, whether it opens a section rather than a part of one).

    An underlined line, a line in capitals, a numbered one and the document's first line open sections; a short
    title-case line over its paragraph, or a label ending in a colon, opens a part of the section it stands in.
    A lone line ending in a colon over an indented block introduces that block ("The log line was:"), and heads
    nothing."""
    if _box(lines):  # a line between two rules
        return _heading(lines[1], TITLE_WORDS, boxed=True), True
    if len(lines) >= 2 and _UNDERLINE.match(lines[1]):
        return _heading(lines[0], TITLE_WORDS, boxed=True), True
    if first and (len(lines) <= 2 or all(_FIELD.match(x) for x in lines[1:])):  # a title over its fields
        return _heading(lines[0], TITLE_WORDS), True
    if len(lines) == 1 and _TICKET_TITLE.match(lines[0]):
        return _heading(lines[0], TITLE_WORDS, boxed=True), True
    if _HASHED.match(lines[0]):  # "### 2024-10-16, claims-intake-6c4f8d7b9-r7t2n (5.8.0)" over the log it names
        return _heading(_HASHED.sub("", lines[0]), TITLE_WORDS, boxed=True), True
    if (caption := _CAPTION.match(lines[0])):  # a part of the section it stands in: "---- Human edits ----" under
        # "#inc-3318-mobile-login" between two rules corrects that incident's summary (bench/incidents35)
        return _heading(caption.group("name"), TITLE_WORDS, boxed=True), False
    if len(lines) >= 3 and _UNDERLINE.match(lines[0]) and all(_FIELD.match(x) for x in lines[2:]):
        # a record of an export under the rule that sets it off, its title over its fields: "-----" / "PH-3318
        # Claims portal very slow, uploads end in 504" / "Request type: Report an incident | Priority: High"
        # (a Jira Service Management queue exported as text; bench/incidents47)
        return _heading(lines[1], TITLE_WORDS, boxed=True), True
    if indent >= CODE_INDENT:  # a block set off by its indent heads nothing ("    HTTP/1.1 503 Service Unavailable …"
        return None, False  # quoted under "checkout-api logged the answer it got back:"; bench/incidents30)
    indented = len(lines) > 1 and _indent(lines[1]) > indent + _indent(lines[0])  # "Why" over "  fielddata=18.9gb is …"
    name = _heading(lines[0], PART_WORDS if indented else HEADING_WORDS)
    if name is None:
        return None, False
    line = lines[0].strip()
    if line.isupper() or _NUMBERED.match(line) or names_problem(name) or (DATED_TITLE.match(line) and len(lines) > 1):
        return name, True  # (a dated title over its entry: an entry of its own)
    if len(lines) == 1:
        return (None, False) if line.endswith(":") and block_follows else (name, False)
    if line.endswith(":"):
        return name, False
    body = lines[1].strip()
    heads_body = _LIST_OR_TIME.match(body) or indented or \
        (len(body) > len(line) and (body[:1].isupper() or body[:1].isdigit()))
    return (name, False) if heads_body else (None, False)


def read(path: Path, options) -> Iterator[Record]:
    return read_pieces(pieces(path, "\n\n", options.max_chars))


def read_pieces(stream: Iterator[Piece], title: str | None = None) -> Iterator[Record]:
    """The records of a document's paragraphs (``pieces`` of it, a blank line apart); ``title`` is its title when
    something other than its first lines gives one (an e-mail's subject)."""
    section: str | None = None  # the section a paragraph stands in, and a part of it (a weak heading under it)
    part: str | None = None
    strong = False  # whether ``section`` was opened by a section heading, so a weak one is a part of it
    ticketed = False  # whether ``section`` is a ticket's, opened by its title (``_TICKET_TITLE``)
    first = title is None
    rules: list[str] = []  # the underline characters in the order first seen: the first opens sections
    dump = False  # within a JVM's thread dump pasted into the document
    heads: tuple[str, ...] = (title,) if title else ()  # (title, section, part) without the ones not seen
    chat = Chat(title)
    p = next(stream, None)
    while p is not None:
        nxt = next(stream, None)
        lines = p.text.split("\n")
        if (said := chat.message(p, nxt)) is not None:
            yield Record(p.text, p.line_start, p.line_end, kind=said[0], time=said[1], author=said[2],
                         headings=heads if said[0] == "paragraph" else ())
            p, first = nxt, False
            continue
        table = bool(_COLUMN_RULE.search(p.text))  # a table aligned in columns: its header row heads nothing
        name, opens = (None, False) if table else _head(lines, first, nxt is not None and nxt.indent > 0, p.indent)
        if dump and not (_HASHED.match(lines[0]) or _UNDERLINE.match(lines[0])):
            name, opens = None, False  # (what a thread dump prints under it heads nothing: "Threads class SMR info:")
        dump = (dump or any(x.startswith(_DUMP_START) for x in lines)) and not _DUMP_END.search(p.text)
        underline = rule(lines) if name else ""
        if underline and underline not in rules:
            rules.append(underline)
        if underline and section and strong and (rules.index(underline) > 0 or ticketed) and not _box(lines):
            opens = False  # a second underline style heads the parts of a section (setext's "---" under "==="), and
            # any underline the parts of a ticket's
        if name:
            if first:
                title = name
            elif opens or not strong:
                section, part, strong = name, None, opens
                ticketed = opens and len(lines) == 1 and bool(_TICKET_TITLE.match(lines[0]))
            else:
                part = name
            heads = tuple(h for h in (title, section, part) if h)
        first = False
        kind = "code" if p.indent >= CODE_INDENT and not name and not _SENTENCE_END.search(p.text) else "paragraph"
        if table:  # each row a line of its own
            yield from (Record(row, p.line_start + i, p.line_start + i, kind="table_row", headings=heads)
                        for i, row in enumerate(lines) if row.strip() and not _COLUMN_RULE.fullmatch(row))
        elif len(lines) >= 2 and "..." in p.text and sum(bool(_LEADER.match(x)) for x in lines) * 2 > len(lines):
            # a form's fields: "key: value" rows
            # (under the heading its first line is, if it is one: "PROBLEM PRB0041302" over "Number ....... PRB…")
            yield from (Record(f"{m.group('key').strip()}: {m.group('value').strip()}" if (m := _LEADER.match(row))
                               else row.strip(), p.line_start + i, p.line_start + i,
                               kind="table_row" if m else "paragraph", headings=heads)
                        for i, row in enumerate(lines) if row.strip())
        elif (logged := _pasted_log(lines, name is not None)) is not None:
            if logged:  # the heading over it: "### 2024-10-16, claims-intake-6c4f8d7b9-r7t2n (5.8.0)"
                yield Record(lines[0], p.line_start, p.line_start, kind=kind, headings=heads)
            yield from (replace(r, headings=heads) for r in log_records(
                Piece(x.strip(), p.line_start + i, p.line_start + i, _indent(x) if i else p.indent)
                for i, x in enumerate(lines) if i >= logged and x.strip()))
        else:
            yield Record(p.text, p.line_start, p.line_end, kind=kind, headings=heads)
        p = nxt


def _pasted_log(lines: list[str], headed: bool) -> int | None:
    """Where a log pasted as a paragraph begins (1 under its heading, else 0), None when the paragraph is no log: it
    opens with a log line and two or more of its lines are log lines with a level. Each of its lines is then read as
    a log's (``log.log_records``), with its time, level and trace, so a raw line finds the line it repeats; a
    timeline's dated entries ("2024-10-08 10:31 rolled back") name no level and stay a paragraph."""
    start = 1 if headed and len(lines) > 1 else 0
    body = lines[start:]
    if len(body) < 2 or not _levelled(body[0]):  # (asked first: most paragraphs are one line, or prose)
        return None
    return start if any(_levelled(x) for x in body[1:]) else None


class Chat:
    """A chat copied from its app into a document: a day alone on its line ("Tuesday, 12 November"), then each
    message under a header line of its author and a clock ("Leah Marsh  07:52"; Microsoft Teams, Slack, Zulip copied
    from the window; bench/incidents47). Each message is a chat message (kind ``message``) stamped with that day and
    clock, and no heading's part: the messages are the channel's flow, cut where its incidents begin as a chat
    export's are; a paragraph under a message is more of it. The year is the one the document dates itself by
    (its title's "12-13 Nov 2024", ``written_year``, or a line of its first ``YEAR_PARAGRAPHS``) when the day heading
    leaves it out."""

    def __init__(self, title: str | None) -> None:
        self.year = written_year(title or "")
        self.day = ""
        self.last: tuple[str, str] | None = None  # (time, author) of the message just read
        self.read = 0  # the paragraphs asked for the year

    def message(self, p: Piece, nxt: Piece | None) -> tuple[str, str, str] | None:
        """(kind, time, author) of a paragraph of the chat: a message, or the day heading over the messages
        (a paragraph standing in no section); None for a paragraph of the document around it."""
        lines = p.text.split("\n")
        day = heading_day(lines[0], self.year) if len(lines) == 1 else ""
        if day and nxt is not None and self._header(nxt.text.split("\n")[0], day):
            self.day, self.year, self.last = day, day[:4], None
            return "paragraph", "", ""
        if self.day and (said := self._header(lines[0], self.day)):
            self.last = said
            return ("message",) + said
        if self.last and p.indent == 0 and not _heading(lines[0], HEADING_WORDS) and not _UNDERLINE.match(lines[0]) \
                and not _CAPTION.match(lines[0]) and not is_log_line(lines[0]):
            return ("message",) + self.last
        if not self.year and self.read < YEAR_PARAGRAPHS:  # (a document dates itself at its top)
            self.year, self.read = written_year(p.text), self.read + 1
        self.last = None
        if _UNDERLINE.match(lines[0]) or _CAPTION.match(lines[0]) or _HASHED.match(lines[0]):
            self.day = ""  # (the document goes on under a rule: the chat ended)
        return None

    @staticmethod
    def _header(line: str, day: str) -> tuple[str, str] | None:
        said = speaker(line) or _poster(line)
        when = on_day(said[0], day) if said else ""
        return (when, said[1]) if said and when != said[0] else None


def _poster(line: str) -> tuple[str, str] | None:
    """(clock, name) of a chat message's header line under a day heading, a bot's one word too ("Workflows  08:02",
    Teams' Workflows app over an alert it posts); None for a log's line ("ERROR  08:02")."""
    m = _POSTER.match(line)
    return (m.group(2), m.group(1)) if m and not level_of(m.group(1)) else None


def _levelled(line: str) -> bool:
    return is_log_line(line) and bool(level_of(line))
