"""Which of several stretches of a stream a person's comment speaks of, by the words it shares with one alone.

A comment stream pasted under a log is placed beside what the log printed when it was written (``flow``); where two
failures had begun by then, it goes with the one whose own rare words it uses (``spoken_of``). A ticket that a comment
turned to another problem holds two stories, and each later comment goes with the story whose own words it uses
(``story_of``): between a ticket's few stories, less rare words tell them apart too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from poimen.incidents.times import record_seconds
from poimen.inputs.records import Record
from poimen.relevance.terms import rarity

_WORD = re.compile(r"[a-z]{4,}")
_TERM = re.compile(r"[a-z][a-z0-9_]{3,}")
RARE = 4.5  # a word this rare (8 - zipf, ``poimen.relevance.terms.rarity``) says what a comment is about
SPOKEN_MIN = 2  # the rare words a comment must share with one stretch alone to go with it
STORY_RARE = 3.0  # between a ticket's few stories, a word this rare says which (not "could", "first", "again")


@functools.lru_cache(maxsize=1 << 14)
def rare_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if rarity(w) >= RARE)


@functools.lru_cache(maxsize=1 << 14)
def story_words(text: str) -> frozenset[str]:
    """The words of ``text`` that tell a ticket's few stories apart: rarer than ``STORY_RARE``, digits and
    underscores inside a word kept ("nofile", "java_tool_options")."""
    return frozenset(w for w in _TERM.findall(text.lower()) if rarity(w) >= STORY_RARE)


def _authors(groups: Sequence[Sequence[Record]]) -> set[str]:
    return {w for g in groups for r in g for w in _WORD.findall(r.author.lower())}


def _words(records: Sequence[Record]) -> set[str]:
    """The rare words of ``records``, without their authors' names (each record's read once, however many comments
    ask)."""
    return set().union(*(rare_words(r.text) for r in records)) - _authors([records])


def _own_most(said: set[str], sets: Sequence[set[str]]) -> int | None:
    """The set whose own words (no other set's) ``said`` uses most, ``SPOKEN_MIN`` or more; None when none stands
    out."""
    own = [len(said & (mine - set().union(*(o for j, o in enumerate(sets) if j != i)))) for i, mine in enumerate(sets)]
    best = max(own)
    return own.index(best) if best >= SPOKEN_MIN and own.count(best) == 1 else None


def spoken_of(record: Record, stretches: Sequence[Sequence[Record]]) -> int | None:
    """Which of ``stretches`` a comment speaks of: the one whose own rare words (those no other stretch has) it
    uses most, at least ``SPOKEN_MIN`` of them ("Nordfin fixed: imported the GlobalSign R6 root …" under a log of a
    nordfin failure and then an out-of-memory one); None when none stands out."""
    return _own_most(_words([record]) - _authors(stretches), [_words(s) for s in stretches])


def story_of(record: Record | Sequence[Record], stories: Sequence[Sequence[Record]]) -> int | None:
    """Which of a ticket's stories (its comments before a comment turned it to another problem, and from there on) a
    later comment speaks of: the one whose own words (no other story's, rarer than ``STORY_RARE``) it uses most,
    ``SPOKEN_MIN`` or more ("Dunstable confirms labels are fine" with the label failures, after the tracking lag was
    turned to; bench/incidents16); None when none stands out. ``record`` can be several: a ticket page's header and
    its first comment, of which of a stream's few failures they tell (``flow``)."""
    said = [record] if isinstance(record, Record) else list(record)
    authors = _authors(stories) | _authors([said])

    def terms(records: Sequence[Record]) -> set[str]:
        return set().union(*(story_words(r.text) for r in records)) - authors

    return _own_most(terms(said), [terms(s) for s in stories])


def oldest_first(flow: Sequence[Record]) -> list[Record]:
    """``flow`` with each ticket's comments in the order they were written where the print lists them newest first
    (ServiceNow's activity stream, a journal): a ticket's timed comments, every one older than the one printed above
    it, take its comments' places in the flow oldest first, so its first comment placed (``flow.cut``) is its first
    written. A comment of several records (its paragraphs, one time) moves whole; any other order stays as printed."""
    slots: dict[str, list[int]] = {}
    for i, r in enumerate(flow):
        if r.kind in ("comment", "reply") and (ticket := dict(r.attrs).get("ticket")):
            slots.setdefault(ticket, []).append(i)
    out = list(flow)
    for places in slots.values():
        said: list[list[int]] = []  # the ticket's comments: runs of its records with one time and author
        for i in places:
            if said and (flow[i].time, flow[i].author) == (flow[said[-1][0]].time, flow[said[-1][0]].author):
                said[-1].append(i)
            else:
                said.append([i])
        times = [record_seconds(flow[c[0]].time, flow[c[0]].text, flow[c[0]].kind) for c in said]
        if len(said) < 2 or None in times or any(a <= b for a, b in zip(times, times[1:])):
            continue
        for place, i in zip(places, [i for c in reversed(said) for i in c]):
            out[place] = flow[i]
    return out
