"""A report that numbers its problems: "Two problems since then: 1. After a few hours the relay answers 500 … 2. Any
artifact not yet cached fails with 502 …", and a thread under it that answers each ("For (1): …", "(1) is ours.",
"About the 407: …"). Linked by what they share, the report, its thread and the log of both failures are one
incident, and its card would give both fixes under either error (bench/incidents16).

A person's list of two problems or more, numbered from 1 on, each item a failure signal, splits the incident it is
in. What tells the problems apart is what the people said of each: an item's own words (``_words``: words rare
enough to tell a thread's few stories apart, hosts, services and keys, status codes; none that the report said
before its list, which speaks of all of them), and the words of each comment that names one problem by its
number. Then, in the stream's order:

- a person's line that names one problem by its number or its place ("(2)", "For (1):", "**2 (cron):**", "Let me
  start with the second one") goes with that one, and so does every line of its comment that names no other;
- else a person's line after the list goes with the problem whose own words it uses most, each weighing as much
  as it is rare, more than ``ONE_WORD`` ("Closing the loop on the proxy part" after the leak's fix was confirmed);
- else with the problem the rest of its comment names ("I also rolled back to 2.13.4. The file went out at 10:30,
  so (1) is gone.");
- else it goes with the problem the thread last spoke of ("Good call. The VM ran …" after "About the 407: …"): a
  conversation stays on what it is about until it turns;
- a burst a log printed is one failure: all its lines go with the problem whose item's own words they use most,
  and its failure lines' words tell that problem too ("For the Harrow SFTP problem" under "could not open SFTP
  session");
- someone other than the reporter who pastes a failure of their own, whose words tell none of the problems, opens
  one more ("2.14.0 broke us too and it isn't the SFTP thing:" over a `NoClassDefFoundError` trace).

An exception's name counts as people say it too ("a NoHttpResponse" for `NoHttpResponseException`). A place names a
problem ("the second one") unless it is a place in time ("the first one after a few minutes of quiet").

A thread can also be split by a reply that calls a post another problem ("@dmitri.a that one is a different bug"; an
issue's "same here" post with an error of its own, bench/incidents21): ``_turned`` says how.

What none took (the report's greeting, a start-up banner) goes with none. When the thread answered two problems or
more (a person's line after the report went with each), each is an incident of its own; else, or when a line that
does something went with none ("Rolled payments back; 502s stopped and the queue drained" under "1. Checkout answers
502 2. The order queue backs up": the symptoms of one failure), the incident stays whole.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from poimen.incidents.cues import OTHER_PROBLEM
from poimen.incidents.entities import entities
from poimen.signatures import extract_signatures
from poimen.incidents.episodes import Episode
from poimen.incidents.flow import acts, fails
from poimen.incidents.lines import Line
from poimen.incidents.link import Incident
from poimen.incidents.quotes import machine as _machine
from poimen.incidents.shared import _NAMED_KINDS
from poimen.incidents.spoken import STORY_RARE, story_words
from poimen.relevance.terms import rarity
from poimen.inputs.readers.speakers import speaker

_ITEM = re.compile(r"^\(?(\d)[.)]\s+\S")  # "1. After roughly …", "(2) Any artifact …", "2) …"
# A problem named by its number: "For (1): …", "(1) is ours.", "**2 (cron):** that's a regression …", "2: …"
_NUMBERED = re.compile(r"\((\d)\)|(?:^|\s)[*_]*(\d)\s+\([^()]{1,30}\)[*_]*:|^[*_>\s]*(\d)[*_]*[:)]\s"
                       # ... or by its place: "Let me start with the second one", "the first issue is ours"; not
                       # a place in time or in a list of its own ("is the failing call always the first one after a
                       # few minutes of quiet", bench/incidents18)
                       r"|\bthe (first|second|third|fourth) (?:one|problem|issue|part|point|thing|bug)\b"
                       r"(?!\s+(?:after|before|of|in|on|at|from|to|that|which|when|where|since)\b)", re.I)
_PLACES = {"first": "1", "second": "2", "third": "3", "fourth": "4"}
_STATUS = re.compile(r"(?<![\w.])[1-5]\d\d(?![\w.])")  # "the 407", "answering 502"
_NAME = re.compile(r"[a-z0-9]+")
_THROWN = re.compile(r"([a-z][a-z0-9]{5,})(?:exception|error)")  # "nohttpresponseexception": "nohttpresponse"
# A person's line goes with the problem whose own words weigh most, and more than one word of rarity 4.0: "proxy"
# (4.27) says which, "java" (4.0, in a class name of one item and a JDK package of the other) does not (chosen on
# bench/incidents16's relay thread, a dev suite).
ONE_WORD = 1.0


def _words(line: Line) -> frozenset[str]:
    """What a line tells a problem by; nothing for a comment's header ("**mkessler** commented on Mar 4"). An
    exception's name counts as people say it too: "a NoHttpResponse" for `NoHttpResponseException`."""
    if speaker(line.text):
        return frozenset()
    words = story_words(line.text) | set(_STATUS.findall(line.text)) \
        | {e.value.lower() for e in entities(line.text) if e.kind in _NAMED_KINDS}
    return words | {m.group(1) for w in words if (m := _THROWN.fullmatch(w))}


def _weight(words: frozenset[str]) -> float:
    """How much ``words`` say which problem: each as much as it is rarer than ``STORY_RARE`` (a status code or a
    named thing as a rare word)."""
    return sum(max(rarity(w), STORY_RARE + ONE_WORD) - STORY_RARE if not w.isalpha() else rarity(w) - STORY_RARE
               for w in words)


def _listed(lines: Sequence[Line]) -> list[int] | None:
    """The indices of a person's numbered problems, 1, 2, … in order, each a failure signal; None when there are
    fewer than two."""
    for i, line in enumerate(lines):
        if _machine(line.record) or not (m := _ITEM.match(line.text)) or m.group(1) != "1":
            continue
        items = [i]
        for j in range(i + 1, len(lines)):
            nxt = _ITEM.match(lines[j].text)
            if nxt and nxt.group(1) == str(len(items) + 1) and not _machine(lines[j].record) \
                    and lines[j].record.author == line.record.author:
                items.append(j)
            elif nxt or lines[j].record is not lines[items[-1]].record:
                break  # (an item's own lines, wrapped, go on in its record)
        if len(items) >= 2 and all(fails(lines[k] for k in span) for span in _spans(lines, items)):
            return items
    return None


def _spans(lines: Sequence[Line], items: Sequence[int]) -> list[range]:
    """Each item's lines: from it to the next item, the last to the end of its record (the error an item pasted
    under it, "1. Restoring … now aborts" over "Error: FileExistsError: …", is its own)."""
    last = items[-1]
    end = next((j for j in range(last, len(lines)) if lines[j].record is not lines[last].record), len(lines))
    return [range(i, nxt) for i, nxt in zip(items, [*items[1:], end])]


def _seeds(lines: Sequence[Line], items: Sequence[int]) -> dict[int, set[int]]:
    """Each problem's item, and every line of each comment after the list that names it alone by its number."""
    spans = _spans(lines, items)
    seeds = {n: set(span) for n, span in enumerate(spans, 1)}
    named: dict[int, set[int]] = {}
    for line in lines:
        named.setdefault(id(line.record), set()).update(_numbers(line, len(items)))
    for i, line in enumerate(lines):
        if i > spans[-1][-1] and not _machine(line.record) and len(said := named[id(line.record)]) == 1:
            seeds[next(iter(said))].add(i)
        elif i > spans[-1][-1] and not _machine(line.record) and (n := _names(line, len(items))) is not None:
            seeds[n].add(i)  # a comment that speaks of two: each of its sentences that names one alone
    return seeds


def _numbers(line: Line, count: int) -> set[int]:
    """The problems of ``count`` a line names by their number or their place."""
    return {int(n) for m in _NUMBERED.findall(line.text) for n in (_PLACES.get(x.lower(), x) for x in m)
            if n and 1 <= int(n) <= count}


def _names(line: Line, count: int) -> int | None:
    """The one problem of ``count`` a line names by its number or its place, else None."""
    said = _numbers(line, count)
    return next(iter(said)) if len(said) == 1 else None


def _new_problem(lines: Sequence[Line], i: int, reporter: str, told: dict[int, frozenset[str]]) -> list[int]:
    """The lines of the post that starts at ``i`` when it reports a problem of its own: someone other than the
    reporter pastes a failure whose words tell none of the problems ``told`` (a third user's "2.14.0 broke us
    too and it isn't the SFTP thing:" over a `NoClassDefFoundError` trace, bench/incidents18); else nothing."""
    line = lines[i]
    if line.record.author in ("", reporter) or (i and (lines[i - 1].record.author, lines[i - 1].record.time) ==
                                                (line.record.author, line.record.time)):
        return []
    post = list(itertools.takewhile(lambda j: not _machine(lines[j].record) and (
        lines[j].record.author, lines[j].record.time) == (line.record.author, line.record.time), range(i, len(lines))))
    failing = [j for j in post if extract_signatures(lines[j].text) and fails([lines[j]])]
    said = frozenset().union(*(_words(lines[j]) for j in failing))
    return post if failing and all(_weight(said & w) <= ONE_WORD for w in told.values()) else []


def _groups(lines: Sequence[Line], ep_of: Sequence[int], items: Sequence[int]) -> dict[int, set[int]]:
    """Each problem's lines, as the module's docstring says."""
    seeds = _seeds(lines, items)
    preamble = frozenset().union(*(_words(line) for line in lines[:items[0]] if not _machine(line.record)))
    authors = {w for line in lines for w in _NAME.findall(line.record.author.lower())}  # "@okonkwo-q" is no topic
    # A burst a log printed is one failure, told by the words of the item that reports it (the comments tell its
    # cause and fix): each word once, as a trace repeats its frames.
    described = {n: frozenset().union(*(_words(lines[i]) for i in span)) - preamble - authors
                 for n, span in enumerate(_spans(lines, items), 1)}
    described = {n: w - frozenset().union(*(v for m, v in described.items() if m != n)) for n, w in described.items()}
    printed: dict[int, list[int]] = {n: [] for n in seeds}
    for k in sorted(set(ep_of)):
        burst = [i for i, line in enumerate(lines) if ep_of[i] == k and _machine(line.record)]
        shown = frozenset().union(*(_words(lines[i]) for i in burst))
        uses = sorted(((_weight(shown & w), n) for n, w in described.items()), reverse=True)
        if burst and uses[0][0] > uses[1][0]:
            printed[uses[0][1]] += burst
    # what people said of each problem; and the failure lines its own burst printed tell it too ("For the Harrow
    # SFTP problem" under "could not open SFTP session"), not their frames ("at java.base/…", every trace's words)
    said = {n: frozenset().union(*(_words(lines[i]) for i in idx)) - preamble - authors for n, idx in seeds.items()}
    words = {n: said[n] | (frozenset().union(*(_words(lines[i]) for i in printed[n] if fails([lines[i]])))
                           - preamble - authors) for n in seeds}
    own = {n: w - frozenset().union(*(v for m, v in words.items() if m != n)) for n, w in words.items()}
    bursts = {i for idx in printed.values() for i in idx}
    groups = {n: (set(idx) - bursts) | set(printed[n]) for n, idx in seeds.items()}
    owner = {i: n for n, idx in groups.items() for i in idx}
    last = None
    told = _spans(lines, items)[-1][-1]
    for i, line in enumerate(lines):
        if i <= items[0] or _machine(line.record):
            continue
        if i > told and i not in owner and (post := _new_problem(lines, i, lines[items[0]].record.author, said)):
            n = len(groups) + 1  # "2.14.0 broke us too and it isn't the SFTP thing:" over a trace of its own
            groups[n], words[n] = set(post), frozenset().union(*(_words(lines[j]) for j in post)) - preamble - authors
            said[n] = words[n]
            own = {m: w - frozenset().union(*(v for k, v in words.items() if k != m)) for m, w in words.items()}
            owner.update((j, n) for j in post)
        if i not in owner:
            uses = sorted(((_weight(_words(line) & w), n) for n, w in own.items()), reverse=True)
            # failing that, the problem the rest of its comment names ("I also rolled back to 2.13.4. The file
            # went out at 10:30, so (1) is gone."), else the one the thread last spoke of
            ahead = next((n for j in range(i + 1, len(lines)) if lines[j].record is line.record
                          for n in [_names(lines[j], len(groups))] if n is not None), None)
            owner[i] = uses[0][1] if uses[0][0] > ONE_WORD and uses[0][0] > uses[1][0] else ahead or last
            if owner[i] is not None:
                groups[owner[i]].add(i)
        last = owner[i] if owner[i] is not None else last
    return groups


# A reply that tells someone their post is another problem: "@dmitri.a that one is a different bug, thanks for
# raising it though" under a "same here" post in an issue's thread (bench/incidents21)
_TURNED = re.compile(r"^\W{0,3}@(?P<handle>[\w.-]*\w)\b")


def _turned(lines: Sequence[Line]) -> tuple[dict[int, set[int]], int] | None:
    """A thread one of whose posts a reply calls another problem (``_TURNED`` and ``OTHER_PROBLEM``): what came
    before that post is problem 1; the post and the reply are problem 2. Every other post after it goes, whole, with
    the problem whose poster it answers ("@hvoigt either works. …"), else its author's own (the poster of problem 2
    reporting back), else the one whose own words it uses most (as ``_groups``: a failure pasted again, "unable to
    open database file"), else the one the thread last spoke of. With the index of the reply's line; None when no
    reply does so. Posts begin at their headers ("**Dmitri Aksenov** @dmitri.a · 2025-03-03 14:30")."""
    heads = [k for k, line in enumerate(lines) if not _machine(line.record) and speaker(line.text)]
    for i, line in enumerate(lines):
        m = _TURNED.match(line.text)
        if not m or _machine(line.record) or not OTHER_PROBLEM.search(line.text):
            continue
        post = max((k for k in heads if k < i and _handles(lines[k]) & {m.group("handle")}), default=None)
        if post is None or not any(k < post for k in heads):
            continue
        reply = max(k for k in heads if k < i)
        starts = [k for k in heads if k >= post]
        groups: dict[int, set[int]] = {1: set(range(post)), 2: set()}
        last = 2
        for a, b in zip(starts, [*starts[1:], len(lines)]):
            n = 2 if a in (post, reply) else _post_of(lines, range(a, b), groups) or last
            groups[n].update(range(a, b))
            last = n
        return groups, i
    return None


def _handles(line: Line) -> set[str]:
    return {w[1:].rstrip(".,:") for w in line.text.split() if w.startswith("@") and len(w) > 1}


def _post_of(lines: Sequence[Line], post: range, groups: dict[int, set[int]]) -> int | None:
    """Which of two problems a post goes with (``_turned`` says how), None when nothing says."""
    def only(found: dict[int, bool]) -> int | None:
        return next((n for n, yes in found.items() if yes), None) if sum(found.values()) == 1 else None

    answered = set().union(*(_handles(lines[k]) for k in post if _TURNED.match(lines[k].text)))
    posters = {n: {h for k in idx if speaker(lines[k].text) for h in _handles(lines[k])} for n, idx in groups.items()}
    authors = {n: {said[1] for k in idx if (said := speaker(lines[k].text))} for n, idx in groups.items()}
    me = (speaker(lines[post.start].text) or ("", ""))[1]
    words = {n: frozenset().union(*(_words(lines[k]) for k in idx)) for n, idx in groups.items()}
    used = frozenset().union(*(_words(lines[k]) for k in post))
    weights = {n: _weight(used & (w - words[3 - n])) for n, w in words.items()}
    return only({n: bool(answered & (posters[n] - posters[3 - n])) for n in groups}) \
        or only({n: me in authors[n] - authors[3 - n] for n in groups}) \
        or only({n: weights[n] > ONE_WORD and weights[n] > weights[3 - n] for n in groups})


def split(incident: Incident) -> list[Incident]:
    """``incident`` as one incident per numbered problem (the module's docstring says when), or per problem of a
    thread a reply turned (``_turned``), else alone."""
    placed = sorted(((line, k) for k, ep in enumerate(incident.episodes) for line in ep.lines),
                    key=lambda p: (p[0].stream, p[0].record.line_start, p[0].offset))
    lines, ep_of = [p[0] for p in placed], [p[1] for p in placed]
    items = _listed(lines)
    if items is not None:
        groups = _groups(lines, ep_of, items)
        told = _spans(lines, items)[-1][-1]  # the report's last line: what comes after it answers the report
    elif (turned := _turned(lines)) is not None:
        groups, told = turned
    else:
        return [incident]
    answered = [n for n, idx in groups.items() if fails(lines[i] for i in idx)
                and (items is None or any(i > told and not _machine(lines[i].record) for i in idx))]
    taken = set().union(*groups.values())
    lost = [lines[i] for i in range(told + 1, len(lines)) if i not in taken and not _machine(lines[i].record)]
    if len(answered) < 2 or acts(lost):
        return [incident]  # one failure's symptoms, or a fix that speaks of none of them alone
    whole = answered
    out = []
    for n in whole:
        episodes = []
        for k, ep in enumerate(incident.episodes):
            mine = frozenset((lines[i].record.line_start, lines[i].offset) for i in groups[n] if ep_of[i] == k)
            if mine:
                records = tuple(r for r in ep.records if any(at == r.line_start for at, _ in mine))
                episodes.append(Episode(ep.stream, f"{ep.key}#n{n}", records, mine))
        out.append(Incident(tuple(episodes)))
    return out


__all__ = ["split"]
