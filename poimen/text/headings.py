"""Headings that open a problem of their own inside one document: what splits a write-up into incidents.

"SECOND PROBLEM: RESTART STAMPEDE", "The second issue", "Part B: ledger deadlocks", "Problem 2", "Incident #3 -
invoices timing out", "A separate failure". The readers use it to know such a line is a heading however long it
runs (``poimen.inputs.readers.text``); the episode cut gives each its own episode (``poimen.incidents.episodes``).
"""

from __future__ import annotations

import re

PROBLEM = re.compile(
    r"^(?:the\s+|a\s+|an\s+)?(?:second|third|fourth|2nd|3rd|4th|another|other|separate|secondary|follow-on|"
    r"unrelated|related|later)\s+(?:\w+\s+)?(?:problems?|issues?|incidents?|failures?|outages?|faults?)\b"
    r"|^(?:part|problem|issue|incident|phase|event|outage|failure)\s*#?\s*(?:(?-i:[A-F])|\d{1,2}|one|two|three|four|"
    r"i{1,3}|iv)(?![\w-])", re.I)
HEADING_NOISE = re.compile(r"^[\s\d.)#:*_-]+|[\s:*_.-]+$")  # numbering, markup and colons around a heading


def names_problem(heading: str) -> bool:
    """Whether ``heading`` opens a problem of its own inside a write-up (``PROBLEM``), as "Part B" does."""
    return bool(PROBLEM.match(HEADING_NOISE.sub("", heading).strip()))
