"""Sentences that tell nothing about the system, dropped before a line is scored (``says_nothing``).

- talk about the incident process (``MEETING``: "retro for last week's outage is thursday");
- a change turned down (``DECIDED_AGAINST``: "we decided not to raise max.poll.interval.ms");
- a desk's or an on-call's acknowledgement to whoever reported (``THANKS``, ``ON_IT``): "Hi Priya, thanks for the
  quick report.", "We can see the errors and are working on it now." (osTicket, bench/incidents42), "Thanks for
  getting in touch and sorry about the trouble." (Help Scout, bench/incidents44). It repeats the report's failure
  without a new fact, and it scored as a symptom beside the report. A thank-you of more than ``ACK_WORDS`` words says
  more than thanks ("thanks for the report, the disk filled because …"), and a "we are on it" with any word of its
  own beside ``ACK_FILLER`` tells the failure ("checkout-api returns 502s for everyone, we are looking into it"):
  both stay.
"""

from __future__ import annotations

import re

from poimen.incidents.cues import DECIDED_AGAINST, MEETING

ACK_WORDS = 14
THANKS = re.compile(r"\bthanks?(?: you)? for (?:the |your |this )?(?:quick |detailed |prompt )?(?:report|heads[- ]up|"
                    r"flagging|letting us know|reaching out|getting in touch|your patience)\b", re.I)
ON_IT = re.compile(r"\b(?:are|am|'re|'m|is) (?:now |still |already )?(?:working on|looking (?:in)?to|investigating|on) "
                   r"(?:it|this|that)\b(?! (?:is|was|has|had)\b)", re.I)
ACK_FILLER = frozenset("""hi hello hey we i you can see the your our errors error issue issues problem problems trouble
    and now it this that sorry about for all right ok okay yes""".split())


def says_nothing(sentence: str) -> bool:
    """Whether a ``sentence`` tells nothing about the system (see above)."""
    if MEETING.search(sentence) or DECIDED_AGAINST.search(sentence):
        return True
    if THANKS.search(sentence) and len(sentence.split()) <= ACK_WORDS:
        return True
    rest = ON_IT.sub(" ", sentence) if ON_IT.search(sentence) else None
    return rest is not None and set(re.findall(r"[a-z']+", rest.lower())) <= ACK_FILLER
