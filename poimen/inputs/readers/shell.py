"""Terminal sessions: prompt lines with their commands, the output under each, and the operator's ``#`` notes.

A prompt is "$ cmd", "user@host:~/dir$ cmd", "root@host:/# cmd", "(venv) $ cmd", "PS C:\\> cmd" or "❯ cmd". A
line "# …" that is no root prompt is a note. Output runs until the next prompt, note or blank line, and is
threaded to the command above it, so "what did this print" and "what was run" stay one episode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from poimen.inputs.records import Record
from poimen.inputs.stream import pieces

MAX_OUTPUT_LINES = 64  # a long listing is cut into output records of this many lines

PROMPT = re.compile(r"^(?:\([\w.-]+\)\s*)?(?:(?P<who>[\w.-]+@[\w.-]+)(?::[^\s$#]*)?\s?[$#%]|[$%❯]|PS [^>]{0,80}>)\s+(?P<cmd>\S.*)$")
NOTE = re.compile(r"^#+(?:\s+\S.*)?$")


def is_prompt(line: str) -> bool:
    return bool(PROMPT.match(line))


def read(path: Path, options) -> Iterator[Record]:
    out: list[str] = []
    out_start = 0
    thread = ""
    for p in pieces(path, "\n", options.max_chars):
        line = p.text
        prompt = PROMPT.match(line)
        note = not prompt and NOTE.match(line)
        new_block = p.line_start > out_start + len(out)  # a blank line ends the output above it
        if out and (prompt or note or new_block or len(out) >= MAX_OUTPUT_LINES):
            yield Record("\n".join(out), out_start, out_start + len(out) - 1, kind="output", thread=thread)
            out = []
        if prompt:
            thread = f"command:{p.line_start}"
            attrs = (("command", prompt.group("cmd").strip()),)
            yield Record(line, p.line_start, p.line_start, kind="command", author=prompt.group("who") or "",
                         thread=thread, attrs=attrs)
        elif note:
            yield Record(line, p.line_start, p.line_start, kind="note", thread=thread)
        else:
            if not out:
                out_start = p.line_start
            out.append(line)
    if out:
        yield Record("\n".join(out), out_start, out_start + len(out) - 1, kind="output", thread=thread)
