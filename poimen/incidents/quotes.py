"""A person quoting what a program printed: "same PSQLException class though: \"An I/O error occurred while sending to
the backend\"" under the log that printed it. A quote names the failure as precisely as the signature it copies, so
it links the comment's episode to the one that printed it (``poimen.incidents.link``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from poimen.incidents.entities import SHAPED_SIGNATURE, entities
from poimen.incidents.episodes import Episode

_QUOTE = re.compile(r"\"([^\"]{20,200})\"|`([^`]{20,200})`")
_MACHINE = ("log", "output", "code")


def machine(record) -> bool:
    """Whether a program printed ``record``: a log line, a command's output, a code block, or a bot's chat message
    (Slack's ``bot_id``: an alert posted to the channel, whose error a responder then quotes)."""
    return record.kind in _MACHINE or any(k == "bot_id" or (k, v) == ("subtype", "bot_message")
                                          for k, v in record.attrs)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"\d+", "0", text.lower()).split())


def quoted_in(episodes: Sequence[Episode]) -> dict[tuple[int, int], float]:
    """Pairs of episodes of one stream where a person's line in one quotes, in quotes or backticks, four words or more
    that a machine (``machine``) printed in the other ("same PSQLException class though: \"An I/O error occurred while sending to
    the backend\"" under the log that printed it; bench/incidents9): ``SHAPED_SIGNATURE`` for the pair, numbers
    aside; of several that printed them, the latest before it (``latest_before``). A quote names the failure as
    precisely as the signature it copies."""
    printed = [_norm(" ".join(line.text for line in ep.lines if machine(line.record))) for ep in episodes]
    out: dict[tuple[int, int], float] = {}
    for i, ep in enumerate(episodes):
        # a quote cut short ("`String value length (20971893) exceeds the maximum allowed (20000000, ...)`"): each
        # part it keeps, in order (bench/incidents18)
        quotes = {tuple(part for part in (_norm(p) for p in _ELLIPSIS.split(m.group(1) or m.group(2))) if part)
                  for line in ep.lines if not machine(line.record) for m in _QUOTE.finditer(line.text)}
        quotes = {q for q in quotes if q and sum(len(part.split()) for part in q) >= 4}
        for q in quotes:
            found = [j for j, text in enumerate(printed) if j != i and episodes[j].stream == ep.stream
                     and _in_order(q, text)]
            j = latest_before(episodes, found, i)
            if j is not None:
                out[(min(i, j), max(i, j))] = SHAPED_SIGNATURE
    return out


def cited_in(episodes: Sequence[Episode]) -> dict[tuple[int, int], float]:
    """Pairs of episodes of one stream where a person's line in one cites an id a machine printed in the other
    ("Example requestId=q-9e41d7c2, log excerpt above" under the log line that printed ``requestId=q-9e41d7c2``;
    bench/incidents20): one request's id names the failure as precisely as a quote of it, however long ago it was
    printed. Of several that printed it, the latest before it (``latest_before``)."""
    def ids(ep: Episode, printed: bool) -> set[str]:
        return {e.value for line in ep.lines if machine(line.record) == printed
                for e in entities(line.text) if e.kind == "id"}

    printed = [ids(ep, True) for ep in episodes]
    out: dict[tuple[int, int], float] = {}
    for i, ep in enumerate(episodes):
        for value in sorted(ids(ep, False)):
            found = [j for j, held in enumerate(printed) if j != i and value in held
                     and episodes[j].stream == ep.stream]
            j = latest_before(episodes, found, i)
            if j is not None:
                out[(min(i, j), max(i, j))] = SHAPED_SIGNATURE
    return out


_ELLIPSIS = re.compile(r"\.\.\.|\u2026")


def _in_order(parts: tuple[str, ...], text: str) -> bool:
    """Whether ``parts`` occur in ``text`` one after the other."""
    at = 0
    for part in parts:
        at = text.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


def latest_before(episodes: Sequence[Episode], found: Sequence[int], i: int) -> int | None:
    """Of the episodes that printed what episode ``i`` quotes, the one it quotes: the latest to begin before it
    ends (a person quotes the error in front of them), by time where all have one, else by order; None when none
    came before. A quote printed twice joins one of them, never both: it would bridge two incidents."""
    if any(episodes[j].start is None for j in (*found, i)):
        before = [j for j in found if j < i]
        return max(before, default=None)
    before = [j for j in found if episodes[j].start <= episodes[i].end]
    return max(before, key=lambda j: (episodes[j].start, j), default=None)


__all__ = ["cited_in", "latest_before", "machine", "quoted_in"]
