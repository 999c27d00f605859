"""Terminal sessions: prompt lines with their commands, the output under each, and the operator's ``#`` notes.

A prompt is "$ cmd", "user@host:~/dir$ cmd", "root@host:/# cmd", "(venv) $ cmd", "PS C:\\> cmd" or "❯ cmd", or an
interactive client's: psql's "orders=# " / "orders=> ", "mysql> ", "MariaDB [db]> ", "sqlite> ", redis-cli's
"127.0.0.1:6379> ", Python's ">>> ". A terminal echoes "^C" before the prompt it interrupts back to. A line
"# …" that is no root prompt is a note, and so is a prompt whose command is only a comment ("$ # paging: …",
"orders=# -- the 214 idle sessions are the leak"): the operator writing down what they see. Output runs until
the next prompt, note or blank line, and is threaded to the command above it, so "what did this print" and "what
was run" stay one episode. The lines ``script`` writes around a recording ("Script started on …", "Script done
on …") are no command's output: they are ``log`` records with their time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces

MAX_OUTPUT_LINES = 64  # a long listing is cut into output records of this many lines

_CLIENT = r"[\w.-]+[=\-(][#>]|mysql>|MariaDB \[[^\]]*\]>|sqlite>|>>>|[\w.-]+:\d{2,5}(?:\[\d+\])?>"
PROMPT = re.compile(r"^(?:\^[A-Z@\[\\\]^_?])*(?:\([\w.-]+\)\s*)?(?:(?P<who>[\w.-]+@[\w.-]+)(?::[^\s$#]*)?\s?[$#%]"
                    rf"|[$%❯]|PS [^>]{{0,80}}>|{_CLIENT})\s+(?P<cmd>\S.*)$")
NOTE = re.compile(r"^#+(?:\s+\S.*)?$")
COMMENT = re.compile(r"^(?:#|--)")  # a command that is only a comment: shell's "#", SQL's "--"
SCRIPT = re.compile(r"^Script (?:started|done) on (?P<time>\S+(?: \d{1,2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:?\d{2})?)?)")


def is_prompt(line: str) -> bool:
    return bool(PROMPT.match(line))


def read(path: Path, options) -> Iterator[Record]:
    out: list[str] = []
    out_start = 0
    thread = ""
    for p in pieces(path, "\n", options.max_chars):
        line = p.text
        prompt = PROMPT.match(line)
        script = not prompt and SCRIPT.match(line)
        note = not prompt and not script and NOTE.match(line)
        new_block = p.line_start > out_start + len(out)  # a blank line ends the output above it
        if out and (prompt or note or script or new_block or len(out) >= MAX_OUTPUT_LINES):
            yield Record("\n".join(out), out_start, out_start + len(out) - 1, kind="output", thread=thread)
            out = []
        if prompt and COMMENT.match(prompt.group("cmd")):
            yield Record(line, p.line_start, p.line_start, kind="note", author=prompt.group("who") or "", thread=thread)
        elif prompt:
            thread = f"command:{p.line_start}"
            attrs = (("command", prompt.group("cmd").strip()),)
            yield Record(line, p.line_start, p.line_start, kind="command", author=prompt.group("who") or "",
                         thread=thread, attrs=attrs)
        elif script:
            yield Record(line, p.line_start, p.line_start, kind="log", time=script.group("time"))
        elif note:
            yield Record(line, p.line_start, p.line_start, kind="note", thread=thread)
        else:
            if not out:
                out_start = p.line_start
            out.append(line)
    if out:
        yield Record("\n".join(out), out_start, out_start + len(out) - 1, kind="output", thread=thread)
