"""A write-up whose problems share its parts: one postmortem, one Summary, one Timeline, one "Root causes" and one
"Resolution", and in them two unrelated faults that happened at once ("The first problem was …" / "Separately,
…"). Its section is one episode by structure, and would make one card with both faults' fixes.

Only a write-up that says it tells of several is split (``cues.SEVERAL``: "two unrelated faults", "both
problems", "a second, smaller problem", a sentence opening "Separately,", "both were handled …"): two cause
paragraphs of one problem (a trigger and a contributing factor) use words of their own too. A write-up that gives
each problem a heading of its own ("SECOND PROBLEM: …") has told them apart already and is not split again
(``poimen.incidents.episodes``). The cause part says how many problems there are: each of its paragraphs that
gives a cause in words of its own (``SEED_MIN`` rare words or named things no other cause paragraph uses) is a
problem's seed. Every other line of the write-up goes with the seed whose own words it uses most, at least
``SPOKEN_MIN`` of them (or one host, service or key no other seed names) and more than any other seed's ("The
lasting fix was `ceph balancer on`" with the paragraph about the balancer); then each problem's own words are
those of every line it took, and the lines are gathered again (``ROUNDS`` in all). A line a problem's line
introduces ("01:02  pg-core-r2 log, every 5 s:" over the error it pasted) goes with it, up to the timeline's next
entry (from bench/incidents8). A line that uses none, or two seeds' alike (the title, "Both problems were
mitigated by 07:06"), is shared. When two or more seeds each end up with a failure and an action, each is an
episode of its own (``#p1``, ``#p2``, …) that never links to its siblings (``poimen.incidents.link``), and the
shared lines go with none: each card tells one problem (the write-up's raw units keep them for search); else the
section stays whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from poimen.incidents.cues import CAUSE_SECTION, SEVERAL
from poimen.incidents.entities import entities
from poimen.incidents.flow import SPOKEN_MIN, acts, fails, rare_words
from poimen.incidents.lines import Line
from poimen.incidents.roles import THRESHOLD, line_scores

SEED_MIN = 4  # the words of its own a cause paragraph needs to be a problem's seed
ROUNDS = 2  # how often a problem's own words are gathered again from the lines it took

_NAMED_KINDS = frozenset({"service", "host", "config"})
# a timeline's next entry: "01:10  …", "29 Oct 00:40"
_ENTRY = re.compile(r"^\W*(?:\d{1,2}\s+\w{3}\s+)?\d{1,2}:\d{2}\b")


def _words(text: str) -> frozenset[str]:
    return rare_words(text) | {e.value.lower() for e in entities(text) if e.kind in _NAMED_KINDS}


def split(lines: Sequence[Line]) -> list[tuple[str, frozenset[int]]] | None:
    """The problems of a write-up's ``lines`` as (suffix, indices of its lines); None when it holds one."""
    if not any(SEVERAL.search(line.text) for line in lines):
        return None  # two cause paragraphs of one problem: a trigger and a contributing factor
    seeds: dict[int, list[int]] = {}  # a cause paragraph (its record's first line) -> its lines
    for i, line in enumerate(lines):
        heads = line.record.headings
        if heads and CAUSE_SECTION.search(heads[-1]) and not line.is_heading:
            seeds.setdefault(line.record.line_start, []).append(i)
    if len(seeds) < 2:
        return None
    words = {k: frozenset().union(*(_words(lines[i].text) for i in idx)) for k, idx in seeds.items()}
    own = {k: w - frozenset().union(*(v for j, v in words.items() if j != k)) for k, w in words.items()}
    own = {k: w for k, w in own.items() if len(w) >= SEED_MIN and any(
        line_scores(lines[i]).cause >= THRESHOLD for i in seeds[k])}
    if len(own) < 2:
        return None
    seeded = {i for k in own for i in seeds[k]}
    for _ in range(ROUNDS):  # a problem's words are its cause paragraph's, then those of every line it gathered
        groups, shared = _gather(lines, seeds, own, seeded)
        grown = {k: frozenset().union(*(_words(lines[i].text) for i in idx)) for k, idx in groups.items()}
        own = {k: w - frozenset().union(*(v for j, v in grown.items() if j != k)) for k, w in grown.items()}
    whole = [k for k, idx in groups.items() if _story(lines, idx)]
    if len(whole) < 2:
        return None
    for k in groups:
        if k not in whole:
            shared |= groups[k]
    return [(f"#p{n}", frozenset(groups[k])) for n, k in enumerate(sorted(whole), 1)]


def _gather(lines: Sequence[Line], seeds: dict[int, list[int]], own: dict[int, frozenset[str]],
            seeded: set[int]) -> tuple[dict[int, set[int]], set[int]]:
    """Each line with the seed whose ``own`` words it uses most (at least ``SPOKEN_MIN``, more than any other's);
    the rest shared."""
    groups: dict[int, set[int]] = {k: set(seeds[k]) for k in own}
    shared: set[int] = set()
    pasted: set[int] = set()
    for i, line in enumerate(lines):
        if i in seeded:
            continue
        said = _words(line.text)
        uses = {k: len(said & w) for k, w in own.items()}
        best = max(uses.values())
        top = [k for k, n in uses.items() if n == best]
        # one named thing of one problem's alone ("pg-core-r2 was rebuilt with pg_basebackup …") says whose it is
        named = best == 1 and said & own[top[0]] <= {e.value.lower() for e in entities(line.text)
                                                     if e.kind in _NAMED_KINDS}
        (groups[top[0]] if (best >= SPOKEN_MIN or named) and len(top) == 1 else shared).add(i)
    # what a line introduces ("01:02  pg-core-r2 log, repeated every 5 s:" over the error it pasted) is its problem's,
    # up to the timeline's next entry
    owner = {i: k for k, idx in groups.items() for i in idx}
    for i in range(1, len(lines)):
        k = owner.get(i - 1)
        if i in shared and k is not None and (lines[i - 1].text.rstrip().endswith(":") or i - 1 in pasted) \
                and lines[i].record is lines[i - 1].record and not _ENTRY.match(lines[i].text):
            shared.discard(i)
            groups[k].add(i)
            owner[i] = k
            pasted.add(i)
    return groups, shared


def _story(lines: Sequence[Line], idx: set[int]) -> bool:
    """Whether the lines tell a whole story: a failure signal and an action."""
    return fails(lines[i] for i in idx) and acts(lines[i] for i in idx)


__all__ = ["SEED_MIN", "split"]
