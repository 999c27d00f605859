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
    r"i{1,3}|iv)(?![\w-])"
    # ... or written in capitals, with the area it is in before it: "EDGE ITEM 1 - new tenant custom domains not going
    # live" (a status digest's items; bench/incidents45)
    r"|^(?-i:(?:[A-Z][A-Z0-9-]+\s+)?(?:ITEM|CASE|INCIDENT|ISSUE|PROBLEM|PART|OUTAGE))\s*#?\s*\d{1,2}(?![\w-])"
    # ... or one named by its ticket, then its title: "2. WMS-INC-212: Scanner writes failing at Tilbury" (a Google Doc's
    # numbered heading, bench/incidents26), "INC-2231 - Reservations timing out"
    r"|^(?-i:[A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]{1,9})*-\d{1,7})(?::|\s+[-\u2013\u2014|])\s+\S"
    # ... or by its ticket under an addendum's label: "Addendum: INC-5127 (Friday 2025-04-11) — \"Rate exceeded\" again,
    # but from STS" (a review's second incident, told after the first; bench/incidents33)
    r"|^(?:addendum|follow-?up incident|later incident|update)\s*:\s*"
    r"(?-i:[A-Z][A-Z0-9]{1,9}(?:-[A-Z0-9]{1,9})*-\d{1,7})\b",
    re.I)
# An entry of a log people keep, headed by its day and a title set off by two blanks or a dash ("2025-01-14  CI image
# pulls failing on all runners  (SEV-2, 3 h 05 min)"); a time of day after the date makes it a log line instead
DATED_TITLE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?: {2,}|\s+[-\u2013\u2014|]\s+)(?=[A-Za-z])")
HEADING_NOISE = re.compile(r"^[\s\d.)#:*_-]+|[\s:*_.-]+$")  # numbering, markup and colons around a heading


def names_problem(heading: str) -> bool:
    """Whether ``heading`` opens a problem of its own inside a write-up (``PROBLEM``), as "Part B" does."""
    return bool(PROBLEM.match(HEADING_NOISE.sub("", heading).strip()))


# A part of a write-up named in words no template uses ("How the service was restored", "Five whys", "Incident
# questions", "Metrics", "Related items"; bench/incidents30; a problem record's "Permanent Fix", "Known Error";
# bench/incidents35): a short heading that asks how, why or what, or names a part's kind. Not an entry's title:
# those are longer, or name their problem.
PART_WORD = re.compile(r"^(?:how|why|what|when|where|who)\b|\b(?:impact|timeline|restor(?:ed|ation|ing|e)|metrics|"
                       r"questions|whys|lessons|learnings?|related|references|appendix|follow[- ]?ups?|action items?|"
                       r"detection|prevention|fix(?:es)?|workarounds?|resolution|remediation|root cause|known error|"
                       r"decisions)\b", re.I)
PART_WORD_MAX = 5


def part_by_word(name: str) -> bool:
    """Whether a heading (its numbering and markup stripped) names a part of a write-up by a part's word."""
    return len(name.split()) <= PART_WORD_MAX and bool(PART_WORD.search(name)) and not names_problem(name) and \
        not name.rstrip().endswith("?")  # (a question asked under "Incident questions" is no part of its own)


def titled_by(name: str, part: str) -> bool:
    """Whether a heading that begins with a part's name ("Resolution steps", "Root cause analysis", "Follow-up
    OPS-4472: grep the fleet …") is that part: a short one, or one that labels its item with a colon. A longer one
    is an entry's own title that begins with the word ("Fix Hadoop build on Debian 10", a ticket export's summary):
    read as a "Fix" part, it made the page's title a write-up and every ticket under it one incident."""
    return name.startswith(part + " ") and (len(name.split()) <= PART_WORD_MAX or ":" in name)
