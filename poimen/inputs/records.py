"""A record: one thing a stream says (a chat message, a log line with its trace, a Markdown paragraph, a ticket
comment, a shell command with its output), with the file lines it came from.

Readers (``poimen.inputs.readers``) turn a file into records; the chunker packs records into L0 chunks, and
the incident stage (``poimen.incidents``) groups them into episodes. ``line_start``/``line_end`` are 1-based and
inclusive, so lineage reaches ``file:line`` whatever the format (a Slack message's text is not a line of its
JSON file, but its object is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# What a record is, by the part it plays in its format. Readers use these names and no others.
KINDS = (
    "message",    # a chat message (Slack, Mattermost, JSON Lines chat)
    "reply",      # a message in a thread, replying to ``thread``
    "log",        # an application or system log line, with its multi-line trace if any
    "paragraph",  # prose: a Markdown or plain-text paragraph, a list item
    "table_row",  # a Markdown table row (rendered "header: value; …")
    "code",       # a fenced block
    "ticket",     # a ticket's summary and description (CSV export, GitHub issue)
    "comment",    # a comment on a ticket
    "command",    # a shell prompt line and its command
    "output",     # a command's output lines
    "note",       # an operator's note in a shell session (a ``#`` line)
    "record",     # a JSON record of no known shape
)


@dataclass(frozen=True)
class Record:
    """One record of a stream. ``text`` is what poimen reads and quotes; the rest places it."""

    text: str
    line_start: int
    line_end: int
    kind: str = "paragraph"
    time: str = ""  # as the source wrote it (ISO 8601 where the format has it, a Slack ts as given)
    author: str = ""
    thread: str = ""  # what groups records: a thread ts, a ticket id, a section path, a session
    headings: tuple[str, ...] = ()  # the Markdown headings a record stands under, outermost first
    level: str = ""  # a log line's level (ERROR, WARN, …) when it has one
    attrs: tuple[tuple[str, str], ...] = field(default=())  # anything else a reader knows, as sorted pairs

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"record kind {self.kind!r}: expected one of {', '.join(KINDS)}")
        if not 1 <= self.line_start <= self.line_end:
            raise ValueError(f"record lines {self.line_start}-{self.line_end}: expected 1 <= start <= end")
