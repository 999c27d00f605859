"""Tell apart the conversations of one chat channel: two incidents worked at once in the main channel, outside
threads, interleave message by message ("I'll take the rabbit one, priya stay on pg").

A channel's flow is read in order, and each message joins one of the conversations still open (spoken in within
``GAP_SECONDS``):

- a message that says it is about something else ("unrelated: the nightly terraform plan shows drift", "side
  note", "different topic") opens a new conversation;
- so does a failure that names a service, host or ticket and shares less than ``SAME`` with every open
  conversation holding a failure, when each of those has named one: the second alert of the afternoon. (The first
  failure of a channel goes on with the talk before it, and so does the error that follows a complaint naming
  nothing: "support sees failed checkouts", then "orders-api logs: FATAL …".)
- otherwise the one it shares most with: what the message names (services, hosts, tickets) and the failures it
  prints (signatures, error names), each worth ``NAMED_WEIGHT``, and its topic words, each worth 1;
- when it shares nothing with any, the conversation its author last spoke in, else the one the message before it
  is in (an "ok", a "thanks", a question with no name in it stay where the talk is).

A topic word is a word of four letters or more that is not common in English (``TOPIC_RARITY``, on ``wordfreq``'s
scale as ``poimen.relevance.terms.rarity`` gives it) or is a word of a service the channel names ("search" of
search-api), with a plural's ``s`` dropped; not an author's name, not a word in more than ``SUBJECT_SHARE`` of the
channel's messages (the channel's subject tells no two conversations apart), and not its author's template (a word
in ``TEMPLATE_SHARE`` of the messages of an author of three or more: a bot's "severity", "runbook", "firing").

A channel with one conversation is cut exactly as before (``poimen.incidents.flow.cut``, its topic rules included).
Two or more are each cut on time alone: the conversations already say what is about what. Chosen on bench/incidents8
(dev: a Postgres connection exhaustion and a RabbitMQ memory alarm worked at once); the weights are round numbers,
not tuned.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from poimen.incidents.flow import GAP_SECONDS, elapsed, is_failure, names
from poimen.incidents.kinds import signatures as _signatures
from poimen.incidents.roles import body
from poimen.incidents.times import record_seconds
from poimen.inputs.records import Record
from poimen.relevance.terms import rarity

__all__ = ["CHAT_KINDS", "conversations"]

CHAT_KINDS = frozenset({"message"})
TOPIC_RARITY = 3.5  # a word this rare or rarer (8 - zipf) can say what a message is about ("rabbit", "recon")
SUBJECT_SHARE = 1 / 3  # a word in more than this share of a channel's messages is the channel's subject
NAMED_WEIGHT = 2.0  # a shared service, host, ticket or failure says more than a shared word
SAME = 2.0  # what a failure must share with a conversation to be more of it: a name, or two words
TEMPLATE_SHARE = 0.75  # a word in this share of the messages of an author of three or more is its template
_NAMED_KINDS = frozenset({"service", "host", "ticket"})
_WORD = re.compile(r"[a-z]{4,}")
# A message that opens by saying it is about something else
ASIDE = re.compile(r"^\W*(?:(?:fyi|btw|also|ps)\W+)?(?:unrelated|(?:totally |completely )?(?:un|not )related|off[- ]topic"
                   r"|side ?note|different (?:topic|thing|issue|question)|separate (?:topic|thing|issue|question)"
                   r"|in other news)\b", re.I)


@dataclass(eq=False)  # one conversation is itself: ``in`` and ``==`` compare identity, not every record
class _Conversation:
    records: list[Record] = field(default_factory=list)
    named: set = field(default_factory=set)  # the services, hosts, tickets and failures it names
    said: set = field(default_factory=set)  # the services, hosts and tickets alone
    words: set = field(default_factory=set)
    failed: bool = False
    last: float | None = None


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _author_words(records: Sequence[Record]) -> set[str]:
    return {w for r in records for w in _WORD.findall(r.author.lower())}


def _topics(flow: Sequence[Record]) -> list[set[str]]:
    """Each message's topic words (the module docstring says which)."""
    authors = _author_words(flow)
    # the words of the services the channel names ("search" of search-api) say which one a message is about,
    # however common they are in English
    parts = {p for r in flow for kind, value in names(r, _NAMED_KINDS) if kind == "service"
             for p in value.split("-") if _WORD.fullmatch(p)}
    raw = [{_stem(w) for w in _WORD.findall(r.text.lower())
            if w not in authors and (rarity(w) >= TOPIC_RARITY or w in parts)} for r in flow]
    df = Counter(w for words in raw for w in words)
    by_author: dict[str, list[set[str]]] = {}
    for record, words in zip(flow, raw):
        by_author.setdefault(record.author, []).append(words)
    template = {a: {w for w, n in Counter(w for ws in sets for w in ws).items() if n >= TEMPLATE_SHARE * len(sets)}
                for a, sets in by_author.items() if len(sets) >= 3}
    cap = max(2, SUBJECT_SHARE * len(flow))
    return [{w for w in words if df[w] <= cap} - template.get(r.author, set()) for r, words in zip(flow, raw)]


def conversations(flow: Sequence[Record], gap_seconds: float = GAP_SECONDS) -> list[list[Record]]:
    """``flow`` (a channel's messages that start no thread, in order) as its conversations, in order of their first
    message; ``[list(flow)]`` when it is not a chat flow (any record not a chat message) or holds one conversation."""
    if not flow or any(r.kind not in CHAT_KINDS for r in flow):
        return [list(flow)]
    open_: list[_Conversation] = []
    spoke_in: dict[str, _Conversation] = {}
    previous: _Conversation | None = None
    for record, words in zip(flow, _topics(flow)):
        t = record_seconds(record.time, record.text, record.kind)
        failure = is_failure(record)  # the role cues, scored once per message
        said = names(record, _NAMED_KINDS)
        mine = said | {("failure", s) for s in _signatures(record)}
        alive = [c for c in open_ if c.last is None or t is None
                 or ((d := elapsed(c.last, t)) is not None and d <= gap_seconds)]

        def shared(c: _Conversation) -> float:
            return NAMED_WEIGHT * len(mine & c.named) + len(words & c.words)

        failing = [c for c in alive if c.failed]
        home: _Conversation | None
        if ASIDE.match(body(record.text)):
            home = None  # "unrelated: …" is about something else, whatever it names
        elif failure and said and failing and all(c.said for c in failing) \
                and max(shared(c) for c in failing) < SAME:
            home = None  # a failure of its own, while another is being worked: the second alert of the afternoon
        elif failure and failing and max(shared(c) for c in failing) == 0:
            # a failure sharing nothing yet: with the story that has not named what fails (a customer's complaint,
            # then the error it was)
            home = next((c for c in reversed(failing) if not c.said), failing[-1])
        elif (best := max((shared(c) for c in alive), default=0.0)) > 0:
            # the conversation it shares most with; of equals, the one spoken in last
            home = next(c for c in reversed(alive) if shared(c) == best)
        else:
            author = spoke_in.get(record.author)
            home = author if author in alive else previous if previous in alive else (alive[-1] if alive else None)
        if home is None:
            home = _Conversation()
            open_.append(home)
        home.records.append(record)
        home.named |= mine
        home.said |= said
        home.words |= words
        home.failed = home.failed or failure
        home.last = t if t is not None else home.last
        open_.sort(key=lambda c: (c.last is None, c.last if c.last is not None else 0.0))
        if record.author:
            spoke_in[record.author] = home
        previous = home
    order = {id(r): i for i, r in enumerate(flow)}
    return sorted((c.records for c in open_), key=lambda rs: order[id(rs[0])])
