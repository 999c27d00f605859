"""The lines of a record: what roles are given to and cards copy.

An episode's *lines* are what roles are given to and cards copy: a log line, a command, an output line, a table
row or a code line as written; prose (a paragraph, a chat message, a comment, a note) as the units the relevance
scorer reads (``poimen.relevance.split_units``: a hard-wrapped paragraph joined back and cut into sentences, a
short line whole), so a card line says a whole sentence and is a unit of its chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poimen.inputs.readers.speakers import FIELD_LINE, speaker
from poimen.inputs.records import Record
from poimen.relevance.units import split_units

VERBATIM_KINDS = frozenset({"log", "output", "command", "code", "table_row"})  # lines as written, never re-cut
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_WORD = re.compile(r"[A-Za-z]{4,}")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}\b")
_MONTHS = frozenset("jan feb mar apr may jun jul aug sep oct nov dec".split())
_REPLY = re.compile(r"(?:(?:re|aw|sv|vs|fw|fwd|tr|wg)\s*(?:\[\d+\])?:\s*)+", re.I)  # "RE: ", "AW: ", "Fwd: "
# A comment's title field under its header (osTicket's internal notes: "Title: found it", "Title: mitigation"): the
# author's label for the note, which its lines then say in full (bench/incidents42)
_POST_TITLE = re.compile(r"^Title\s*:\s*\S")
_BOLD = re.compile(r"^(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")


@dataclass(frozen=True)
class Line:
    """One line of a record, stripped: what a role is given to and a card copies verbatim.

    ``offset`` is the line's index among its record's lines; ``start``/``end`` are its span in ``record.text``
    (for a prose sentence joined across wrapped lines, from its first character to its last), so a caller that
    knows where the record sits in a chunk places the line exactly; ``record.line_start``-``line_end`` always
    bound it.
    """

    text: str
    record: Record
    stream: str
    offset: int
    start: int = 0
    end: int = 0

    @property
    def is_heading(self) -> bool:
        """A Markdown heading line, or a bold line its record stands under ("**2. Kafka lag on orders**")."""
        bold = _BOLD.match(self.text)
        if self.record.kind in ("note", "log", "output", "command", "code"):
            return False  # an operator's "# 03:39 shipped 4.12.3" note, a shell comment: no Markdown
        return bool(_MD_HEADING.match(self.text)) or \
            bool(bold and bold.group(1).strip().rstrip(":") in self.record.headings)

    @property
    def is_frame(self) -> bool:
        """A comment's header line: its author and time, and a word or two of the tracker's ("2024-03-02 11:52:10 -
        Jane Doe (Work notes)", "#note-2  Updated by Ben Ode 19 days ago"), and the title field under it. It says
        nothing; what the author wrote is the lines under it."""
        author = self.record.author
        if self.offset == 0 and self.record.kind == "paragraph" and "\n" not in self.record.text.strip():
            return speaker(self.text) is not None  # a thread pasted as Markdown: the header, a paragraph alone
        if self.record.kind == "comment" and self.offset == 1 and _POST_TITLE.match(self.text):
            return True
        if self.record.kind == "comment" and (field := FIELD_LINE.match(self.text)):
            # an e-mail's From:, To:, Date:; its Subject: says what, unless it is a reply's, the thread's subject again
            # ("Subject: RE: [connect] crm-contacts-sink failed again + crm-archive-s3 tasks dying" on every mail of
            # a thread that tells of two problems, bench/incidents29)
            return field.group("key").lower() != "subject" or bool(_REPLY.match(field.group("value")))
        if self.offset != 0 or not _headed(self.record, self.text):
            return False
        words = [w for w in _WORD.findall(self.text.replace(author, " ")) if w.lower()[:3] not in _MONTHS]
        said = speaker(self.text)  # (a tracker's three words around the time the reader read: "Updated by", "#note")
        return len(words) <= 2 or (said is not None and said[1] == author
                                   and len(_WORD.findall(self.text.replace(author, " ").replace(said[0], " "))) <= 3)

    @property
    def indent(self) -> int:
        """The blanks before the line on its physical line of the record: 4 or more sets a code block off in text."""
        text = self.record.text
        begin = text.rfind("\n", 0, self.start) + 1
        lead = text[begin:self.start]
        return len(lead.expandtabs(4)) if not lead.strip() else 0


def _headed(record: Record, head: str) -> bool:
    """Whether ``head``, a record's first line, may be a header line naming its author: a ticket comment's, or a chat
    message's copied as text, the author and a clock alone ("Leah Marsh  07:52" over what she wrote; not a chat
    log's "[10:05] tobiasv: found it", the words on the header's line)."""
    author = record.author
    if not author or author not in head:
        return False
    rest = head.replace(author, " ").split()
    return record.kind == "comment" or (record.kind == "message" and len(rest) <= 2 and bool(_CLOCK.search(head)))


def _physical(record: Record) -> list[tuple[str, int, int]]:
    out, at = [], 0
    for raw in record.text.split("\n"):
        if raw.strip():
            lead = len(raw) - len(raw.lstrip())
            if out and out[-1][0].endswith("[[") and len(out) == 1:  # GlassFish's and Payara's "… [levelValue: 1000] [["
                # over its message: one line, the header and what it says (bench/incidents25)
                out[-1] = (out[-1][0] + " " + raw.strip(), out[-1][1], at + len(raw.rstrip()))
            else:
                out.append((raw.strip(), at + lead, at + len(raw.rstrip())))
        at += len(raw) + 1
    return out


def record_lines(record: Record, stream: str = "") -> tuple[Line, ...]:
    """The lines of ``record``, in order: as written for logs, commands, output, tables and code; prose as units."""
    if record.kind in VERBATIM_KINDS or (record.kind == "comment" and all(
            FIELD_LINE.match(x.strip()) for x in record.text.split("\n") if x.strip())):
        spans = _physical(record)  # (an e-mail's header fields, "From: …" / "Date: …" / "Subject: …", one a line)
    else:
        text, at = record.text, 0
        head = text.split("\n", 1)[0]
        spans = []
        if _headed(record, head) and "\n" in text:
            # a comment's header line ("Sunniva Holt added a comment - 02/Mar/24 12:31 PM") is never the first line
            # of a wrapped sentence, whatever case the comment's first word has
            spans, at = [(head.strip(), len(head) - len(head.lstrip()), len(head.rstrip()))], len(head) + 1
        spans += [(u.text, at + u.start, at + u.end) for u in split_units(text[at:])]
    return tuple(Line(text, record, stream, i, start, end) for i, (text, start, end) in enumerate(spans) if text)
