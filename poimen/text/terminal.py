"""What a terminal recording (``script``'s typescript, a tmux or asciinema dump) shows, without the bytes that
drew it: colour and cursor sequences (CSI ``ESC [ … m``), window titles (OSC ``ESC ] … BEL``), bracketed-paste
marks, other two-byte escapes, a backspace and the character it erased, and a carriage return's overwrite (the
text after the last one mid-line is what stayed on screen). A line without ``ESC``, ``\\r`` or ``\\b`` is returned
as it is.
"""

from __future__ import annotations

import re

_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CSI = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]")
_ESC = re.compile(r"\x1b[()#][0-9A-Za-z]|\x1b[@-_=>]")
_CONTROL = re.compile(r"[\x00-\x07\x0b-\x1f\x7f]")
_ERASED = re.compile(r"[^\x08]\x08")


def shown(line: str) -> str:
    """``line`` as the terminal showed it (see the module docstring)."""
    if "\x1b" not in line and "\r" not in line and "\x08" not in line:
        return line
    line = _ESC.sub("", _CSI.sub("", _OSC.sub("", line)))
    line = line.rstrip("\r")
    if "\r" in line:
        line = line.rsplit("\r", 1)[1]
    while "\x08" in line:
        erased = _ERASED.sub("", line)
        if erased == line:
            erased = line.replace("\x08", "")
        line = erased
    return _CONTROL.sub("", line)
