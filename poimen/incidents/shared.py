"""A write-up whose problems share its parts: one postmortem, one Summary, one Timeline, one "Root causes" and one
"Resolution", and in them two unrelated faults that happened at once ("The first problem was …" / "Separately,
…"). Its section is one episode by structure, and would make one card with both faults' fixes.

Only a write-up that says it tells of several ("two unrelated faults", "both problems": ``cues.SEVERAL``) is
split: two cause paragraphs of one problem (a trigger and a contributing factor) use words of their own too.
The cause part says how many problems there are: each of its paragraphs that gives a cause in words of its own
(``SEED_MIN`` rare words or named things no other cause paragraph uses) is a problem's seed. Every other line of
the write-up goes with the seed whose own words it uses most, at least ``SPOKEN_MIN`` of them and more than any
other seed's ("The lasting fix was `ceph balancer on`" with the paragraph about the balancer); a line that uses
none, or two seeds' alike (the title, "Both problems were mitigated by 07:06"), is shared. When two or more seeds
each end up with a failure and an action, each is an episode of its own (``#p1``, ``#p2``, …) that never links to
its siblings (``poimen.incidents.link``), and the shared lines go with none: each card tells one problem (the
write-up's raw units keep them for search); else the section stays whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from poimen.incidents.cues import CAUSE_SECTION, SEVERAL
from poimen.incidents.entities import entities
from poimen.incidents.flow import SPOKEN_MIN, acts, fails, rare_words
from poimen.incidents.lines import Line
from poimen.incidents.roles import THRESHOLD, line_scores

SEED_MIN = 4  # the words of its own a cause paragraph needs to be a problem's seed

_NAMED_KINDS = frozenset({"service", "host", "config"})


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
    groups: dict[int, set[int]] = {k: set(seeds[k]) for k in own}
    shared: set[int] = set()
    seeded = {i for k in own for i in seeds[k]}
    for i, line in enumerate(lines):
        if i in seeded:
            continue
        said = _words(line.text)
        uses = {k: len(said & w) for k, w in own.items()}
        best = max(uses.values())
        top = [k for k, n in uses.items() if n == best]
        (groups[top[0]] if best >= SPOKEN_MIN and len(top) == 1 else shared).add(i)
    whole = [k for k, idx in groups.items() if _story(lines, idx)]
    if len(whole) < 2:
        return None
    for k in groups:
        if k not in whole:
            shared |= groups[k]
    return [(f"#p{n}", frozenset(groups[k])) for n, k in enumerate(sorted(whole), 1)]


def _story(lines: Sequence[Line], idx: set[int]) -> bool:
    """Whether the lines tell a whole story: a failure signal and an action."""
    return fails(lines[i] for i in idx) and acts(lines[i] for i in idx)


__all__ = ["SEED_MIN", "split"]
