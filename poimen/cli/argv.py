"""What the command line's words are, before any parser reads them: standard library only, so the front door
(``poimen.cli.front``) and the full CLI (``poimen.cli.args``) judge a word alike.

Two questions. Is a word text poimen can store? Python hands undecodable argv bytes over as lone surrogates
(surrogateescape), and the first ``encode("utf-8")`` far downstream raised a traceback, after ``mem remember`` had
made its log folder. And is a word that starts with ``-`` an option or a pasted line? BGL and Thunderbird lines
start with ``- 1131566461 2005.11.09 ...``, which click took for the option ``-``.
"""

from __future__ import annotations

import os


def utf8_problem(value: str) -> str | None:
    """Why ``value`` (as argv or the environment delivered it) is not UTF-8 text, naming the first bad byte; None
    when it is."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(value)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at {exc.start})"
        return "not valid UTF-8"  # a surrogate the decoder did not make (typed as one): no byte to name
    return None


def is_text(word: str) -> bool:
    """A word that starts with ``-`` but cannot be an option: what precedes any ``=`` holds whitespace, or no
    letter or digit follows the dashes (``- 1131566461 ...``, ``-- MARK --``, ``---``). ``-`` and ``--`` keep
    their meanings (stdin, the end of the options)."""
    if not word.startswith("-") or word in ("-", "--"):
        return False
    name = word.split("=", 1)[0]
    return any(c.isspace() for c in name) or not name.lstrip("-")[:1].isalnum()
