"""Terminal sessions: prompt lines with their commands, the output under each, and the operator's ``#`` notes.

A prompt is "$ cmd", "user@host:~/dir$ cmd", "root@host:/# cmd", "[user@host dir]$ cmd", "user@host (context) ~ $
cmd", "host:~$ cmd", SUSE's "host:~ # cmd", "bash-5.1$ cmd", a container's "/ # cmd", oh-my-zsh's "➜ dir cmd", fish's
"user@host ~> cmd" (in vi mode "[I] user@host ~> cmd"), "(venv) $ cmd", "PS C:\\> cmd" or "❯ cmd", each after an
optional "[14:03:26] " or "[Tue 14:03] " clock (the command's time), or an interactive client's: psql's "orders=# " /
"orders=> " (in a transaction "orders=*# ", after its error "orders=!# "), "mysql> ", "MariaDB [db]> ", "sqlite> ",
redis-cli's "127.0.0.1:6379> ", Python's ">>> ". A terminal echoes "^C" before the prompt it interrupts back to. A
line "# …" that is no root prompt is a note, and so is a prompt whose command is only a comment ("$ # paging: …", "$ :
not DNS", "orders=# -- the 214 idle sessions are the leak"): the operator writing down what they see; a note stamped
with a day and a clock (a capture's banner) is at that time. Output runs until the next prompt, note or blank line,
and is threaded to the command above it, so "what did this print" and "what was run" stay one episode. The lines
``script`` writes around a recording ("Script started on …", "Script done on …") are no command's output: they are
``log`` records with their time. Nor is the clock that ``date`` prints (operators run it to stamp a session): its
output record carries that text as its time, so a session that goes quiet for hours is read as two stretches. A
recording's terminal bytes (colours, window titles, carriage-return overwrites: ``poimen.text.terminal``) are dropped,
so ``script``'s typescript reads as the session it shows, and an asciinema recording (``cast``) reads as its output
events showed it. What ``history`` lists (with HISTTIMEFORMAT, each line's time) are the session's commands and notes,
and a notes file the operator reads back (``cat ~/notes/INC-7794.md``) is a page, read as the Markdown reader reads
one, not a command's output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.readers import cast, markdown
from poimen.inputs.stream import Piece, shown_pieces

MAX_OUTPUT_LINES = 64  # a long listing is cut into output records of this many lines

_CLIENT = r"[\w.-]+[=\-(^!][*!?]?[#>]|mysql>|MariaDB \[[^\]]*\]>|sqlite>|>>>|[\w.-]+:\d{2,5}(?:\[\d+\])?>"
# A shell prompt: an optional clock, "[14:03:26] ", "[2024-07-09 14:03:26] " or "[Tue Jul 09 14:03:26 UTC] " (a PS1
# with \\t, \\d or \\D{...}), an
# optional "(venv) " or kube-ps1's "(⎈|prod:payments) ", then "user@host:dir$",
# "user@host dir $", "user@host (kube-context) ~ $", RHEL's "[user@host dir]$", or a bare "$", "%", "❯".
_WHERE = r"(?::[^\s$#]*)?(?:\s+(?:\([\w.:/@-]+\)|~[^\s$#]*|/[^\s$#]*))*\s?"
# Without a user: "cache-03:~$" / "cache-03:/etc# " (PS1 "\\h:\\w\\$"), SUSE's root "cache-03:~ #", macOS's
# "Mac-mini:~ alice$"; a bare shell's "bash-5.1$" / "sh-4.4#"; busybox's and alpine's "/ #", "/app $", "~ #" in a
# container; oh-my-zsh's "➜  infra git:(main) ✗"; fish's "user@host ~>".
_HOST_ONLY = r"(?P<host>[A-Za-z][\w.-]*):[~/][^\s$#]*(?:\s[\w.-]+)?\s?[$#]"
_BARE = r"(?:ba|z|k|da)?sh-\d+(?:\.\d+)*[$#]|[~/][^\s$#]*\s[$#]|➜\s+\S+(?:\s+git:\([^)\s]*\))?(?:\s+✗)?"
_HEAD = (r"^(?:\^[A-Z@\[\\\]^_?])*(?:\[(?P<clock>[^\]\n]{0,40}?\d{1,2}:\d{2}(?::\d{2})?[^\]\n]{0,24})\]\s*)?"
         r"(?:\[[INVR]\]\s)?(?:\([^()\n]{1,60}\)\s*)?"  # (fish's vi mode: "[I] lukas@tf-runner-02 ~/i/l/prod (main)> ")
         rf"(?:(?P<who>[\w.-]+@[\w.-]+){_WHERE}[$#%>]|\[(?P<who_rhel>[\w.-]+@[\w.-]+)(?:\s[^\]]*)?\][$#%]"
         rf"|{_HOST_ONLY}|{_BARE}|[$%❯]|PS(?: [^>]{{0,80}})?>|{_CLIENT})")
PROMPT = re.compile(_HEAD + r"\s+(?P<cmd>\S.*)$")
# A prompt with nothing typed after it (the operator pressed Enter): it ends the output above it and says nothing,
# so what ``date`` printed just before it is still the clock alone (bench/incidents9)
EMPTY_PROMPT = re.compile(_HEAD + r"\s*$")
NOTE = re.compile(r"^#+(?:\s+\S.*)?$")
# A command that is only a comment: shell's "#", SQL's "--", and the shell's no-op ":" followed by words (": restart
# does nothing, nofile is 1048576 anyway", bench/incidents33), not ": ${VAR:=default}" nor ": > file"
COMMENT = re.compile(r"^(?:#|--|:\s+(?=[A-Za-z0-9]))")
_SAID_CLOCK = re.compile(r"^(?:#+|:)\s*(\d{1,2}:\d{2})\b")  # the operator's own clock: "# 08:36 back on", ": 13:05 page"
DATE_COMMAND = re.compile(r"^date(?:\s+-[uR]|\s+--utc|\s+--rfc-3339=\w+|\s+-Iseconds)*\s*$")
SCRIPT = re.compile(r"^Script (?:started|done) on (?P<time>\S+(?: \d{1,2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:?\d{2})?)?)")


# What `history` lists, each command with its number and, under HISTTIMEFORMAT, its time ("2317  2025-08-19 08:24:40
#  # NOT directConnection=true …"; bench/incidents38): the session's commands and notes, each at its time
HISTORY = re.compile(r"^\s*\d+\*?\s+(?:(?P<time>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)\s+)?(?P<cmd>\S.*)$")
HISTORY_COMMAND = re.compile(r"^(?:\w+=\S*\s+)*(?:builtin\s+)?(?:history|fc\s+-l)\b")
# A document the operator reads back ("cat ~/notes/INC-7790.md"): their write-up, read as a page, not as output
DOCUMENT_COMMAND = re.compile(r"^(?:sudo\s+)?(?:cat|less|more|bat|batcat|glow)\s+(?:-\S+\s+)*\S+\.(?:md|markdown|txt)\s*$")


def is_prompt(line: str) -> bool:
    return bool(PROMPT.match(line))


def is_timed_history(line: str) -> bool:
    m = HISTORY.match(line)
    return bool(m and m.group("time"))


def read(path: Path, options) -> Iterator[Record]:
    with path.open(encoding="utf-8", errors="replace") as f:
        recorded = cast.is_cast(f.readline(1 << 16))
    # an asciinema recording's output events, else the file's lines (a typescript's colours and overwrites dropped)
    return read_pieces(cast.pieces(path) if recorded else shown_pieces(path, "\n", options.max_chars))


def read_pieces(found: Iterable[Piece]) -> Iterator[Record]:
    out: list[str] = []
    out_start = out_end = 0
    thread = ""
    clock = False  # whether the output being read is what `date` printed
    day = ""  # the day `script` says the recording started on
    listing = ""  # what the last command lists: "history", a "document" read back, else ""
    doc: list[Piece] = []
    who = ""
    for p in found:
        line = p.text
        prompt = PROMPT.match(line)
        empty = not prompt and EMPTY_PROMPT.match(line)
        if listing == "document" and not (prompt or empty):
            doc.append(p)
            continue
        if doc:
            yield from (replace(r, thread=thread) for r in markdown.read_pieces(_paragraphs(doc)))
            doc = []
        listed = HISTORY.match(line) if (listing == "history" or is_timed_history(line)) and not prompt else None
        script = not prompt and not listed and SCRIPT.match(line)
        note = not prompt and not script and not listed and NOTE.match(line)
        new_block = p.line_start > out_start + len(out)  # a blank line ends the output above it
        if out and (prompt or note or script or empty or listed or new_block or len(out) >= MAX_OUTPUT_LINES):
            yield _output(out, out_start, out_end, thread, clock)
            out = []
            clock = False
        if empty:
            continue
        if listed:
            cmd = listed.group("cmd")
            kind = "note" if COMMENT.match(cmd) else "command"
            thread = f"command:{p.line_start}" if kind == "command" else thread
            yield Record(line, p.line_start, p.line_start, kind=kind, author=who, thread=thread,
                         time=listed.group("time") or "", attrs=(("command", cmd),) if kind == "command" else ())
            continue
        who = (prompt.group("who") or prompt.group("who_rhel") or prompt.group("host") or "") if prompt else who
        if prompt:
            typed = prompt.group("cmd").strip()
            listing = "history" if HISTORY_COMMAND.match(typed) else "document" if DOCUMENT_COMMAND.match(typed) \
                else ""
        if prompt and COMMENT.match(prompt.group("cmd")):
            said = _SAID_CLOCK.match(prompt.group("cmd"))  # "❯ # 08:36 back on. support ticket SUP-5521: …": the
            # operator's own clock, on the recording's day (bench/incidents28)
            yield Record(line, p.line_start, p.line_start, kind="note", author=who, thread=thread,
                         time=prompt.group("clock") or (f"{day} {said.group(1)}".strip() if said else ""))
        elif prompt:
            thread = f"command:{p.line_start}"
            attrs = (("command", prompt.group("cmd").strip()),)
            clock = bool(DATE_COMMAND.match(prompt.group("cmd").strip()))
            yield Record(line, p.line_start, p.line_start, kind="command", author=who, thread=thread, attrs=attrs,
                         time=prompt.group("clock") or "")
        elif script:
            day = d.group(0) if (d := _ISO_DAY.match(script.group("time") or "")) else day
            yield Record(line, p.line_start, p.line_start, kind="log", time=script.group("time"))
        elif note:
            # a note stamped with a day and a clock (a capture's banner, "##### tcap: … 2025-04-05 22:31:40 UTC";
            # bench/incidents38) is written at that time, and the operator's clocks after it are on its day
            stamp = _NOTE_STAMP.search(line)
            day = stamp.group(1) if stamp else day
            yield Record(line, p.line_start, p.line_start, kind="note", thread=thread,
                         time=f"{stamp.group(1)} {stamp.group(2)}" if stamp else "")
        else:
            if not out:
                out_start = p.line_start
            out.append(line)
            out_end = p.line_end  # (an asciinema event prints several lines on one file line)
    if out:
        yield _output(out, out_start, out_end, thread, clock)
    if doc:
        yield from (replace(r, thread=thread) for r in markdown.read_pieces(_paragraphs(doc)))


def _paragraphs(lines: list[Piece]) -> list[Piece]:
    """A document's lines as the Markdown reader's pieces: the lines of a block are consecutive file lines."""
    found: list[list[Piece]] = []
    for p in lines:
        if found and p.line_start == found[-1][-1].line_end + 1:
            found[-1].append(p)
        else:
            found.append([p])
    return [Piece("\n".join(x.text for x in block), block[0].line_start, block[-1].line_end) for block in found]


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NOTE_STAMP = re.compile(r"\b(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?(?:\s?(?:UTC|Z|[+-]\d{2}:?\d{2}))?)(?!\S)")


def _output(lines: list[str], start: int, end: int, thread: str, clock: bool) -> Record:
    text = "\n".join(lines)
    return Record(text, start, end, kind="output", thread=thread,
                  time=lines[0].strip() if clock and len(lines) == 1 else "")
