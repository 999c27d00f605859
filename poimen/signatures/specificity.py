"""How much a signature key says about *which* failure it is, from how many streams share it.

A key is meant to name one failure. One that turns up in many unrelated
streams (a bare ``NullPointerException``, the test runner's ``ERROR] <*> Time
elapsed`` line, ``exit:1``) names a family, and an exact match on it says
little more than a shared word. So a key is weighted like a rare word in
information retrieval, by its stream frequency:

- ``weight = log(1 + streams_total / streams_with_key)``: a key only one stream
  holds weighs most, a key every stream holds weighs ``log 2``.
- A key is *decisive* (it may put a doc in lookup's tier 1) only if at most
  ``max(MIN_STREAMS, GENERIC_SHARE × streams_total)`` streams hold it, and it
  has a shape: an exception key with neither a message nor frames
  (``java:java.lang.NullPointerException``), or whose message is only masked
  parameters (``python:KeyError: <STR>``), and a log template with no word
  beyond its level (``log:ERROR] ^``, a compiler's caret line) are never
  decisive. A key that is not decisive can still order docs that a decisive
  key matched.

The two constants are round numbers chosen from what the rule is for, not fitted
to a benchmark: a failure that recurs in a handful of streams is the case
"seen this before" serves (``MIN_STREAMS``), and a key in more than one stream
in a hundred is a family however large the corpus grows (``GENERIC_SHARE``).
"""

from __future__ import annotations

import math
import re

from poimen.text.line_levels import without_failure_levels

MIN_STREAMS = 3
GENERIC_SHARE = 0.01
_PLACEHOLDER = re.compile(r"<\*>|<[A-Z]+>")
_WORD = re.compile(r"[A-Za-z]{2,}")


def weight(streams_with_key: int, streams_total: int) -> float:
    """The IDF-like weight of a key held by ``streams_with_key`` of ``streams_total`` streams."""
    total = max(streams_total, streams_with_key, 1)
    return math.log(1 + total / max(streams_with_key, 1))


def has_shape(key: str, kind: str) -> bool:
    """False for an exception key that is the class alone (or with an all-parameter message), and for a log
    template that is its level alone; True for every other key."""
    body = key.split(":", 1)[1] if ":" in key else key
    if kind == "template":
        return bool(_WORD.search(without_failure_levels(_PLACEHOLDER.sub("", body))))
    if kind != "exception" or "@" in body:
        return True  # frames name where it failed
    if ": " not in body:
        return False
    return bool(_WORD.search(_PLACEHOLDER.sub("", body.split(": ", 1)[1])))


def decisive(key: str, kind: str, streams_with_key: int, streams_total: int) -> bool:
    """Whether a match on ``key`` alone may decide tier 1 (see the module docstring)."""
    limit = max(MIN_STREAMS, GENERIC_SHARE * streams_total)
    return streams_with_key <= limit and has_shape(key, kind)
