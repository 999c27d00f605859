"""A setting's value changed, written without a verb: "PolicyDS MaxCapacity 40 -> 60", "-Xmx2g -> -Xmx4g".

Change logs, ticket fields and terse chat state a fix as a key and its old and new values. No verb of ``cues.DONE``
says it was done, so the line scored as no action. The same shape tells of a failure growing ("p99 latency 120ms ->
4s", "heap usage 61% -> 98%"), so the line counts as a change made only when the words before the old value name a
knob (a config key, a flag, a camelCase key, or a noun such as limit, replicas, timeout or pool size) and no measure
(usage, rate, latency, depth, count, …), and no negation. Chosen on the dev suites: bench/incidents36, 42 and 47
write their fixes so, and bench/incidents19 writes one it did not make ("not raising max_connections 200->400"). The
rows of ``tests/incidents/test_knobs.py`` hold both ways.
"""

from __future__ import annotations

import re

from poimen.incidents.entities import entities

_VALUE = (r"[\"'`]?(?:--?[A-Za-z][\w.-]*?[=:]?\d[\w.%]*|-?\d[\w.%/]*|true|false|on|off|enabled|disabled|none|"
          r"unlimited)[\"'`]?")
_CHANGE = re.compile(r"(?:^|(?<=[\s(,;]))(?P<key>(?:[^.;,()\[\]!?]|\.(?=\S)){0,60}?)[\s:=]*(?<![\w.-])(?P<old>"
                     + _VALUE + r")\s*(?:->|→|=>|⇒|⟶)\s*(?P<new>" + _VALUE + r")(?![\w.-])", re.I)
_KNOB = re.compile(r"(?<![a-z0-9])(?:limits?|replicas?|timeouts?|ttl|max\w*|min\w*|size|capacity|quota|threads?|"
                   r"workers?|concurrency|parallelism|batch|retries|pool|heap|requests|interval|keepalive|buffers?|"
                   r"maxmemory|xmx|xms|memory limit|cpu limit|shards?|partitions?|window|backoff)(?![a-z0-9])", re.I)
_CAMEL = re.compile(r"(?<![\w.-])[A-Za-z][a-z0-9]+[A-Z]\w*")  # MaxCapacity, maxPoolSize (not "PolicyDS": no lower)
_MEASURE = re.compile(r"(?<![a-z0-9])(?:usage|used|utili[sz]ation|rate|ratio|latency|lag|depth|count|load|p\d{2,3}|rss|"
                      r"throughput|rps|qps|tps|errors?|backlog|hits?|misses|size on disk|free|avg|mean|median|peak|"
                      r"at|was|went|grew|rose|fell|dropped|jumped|climbed)(?![a-z0-9])", re.I)

_NOT = re.compile(r"\b(?:not|never|didn't|did not|don't|won't|without|instead of|against)\b", re.I)


def changed_setting(text: str) -> bool:
    """Whether ``text`` states a knob set from one value to another (see the module docstring)."""
    for m in _CHANGE.finditer(text):
        key = m.group("key")
        if _MEASURE.search(key) or m.group("old").strip("\"'`") == m.group("new").strip("\"'`") \
                or _NOT.search(key):  # "not raising max_connections 200->400: needs a restart"
            continue
        flag = m.group("old").startswith("-") and not m.group("old")[1:2].isdigit()  # "-Xmx2g", "--workers=4"
        if flag or _KNOB.search(key) or _CAMEL.search(key) or any(e.kind == "config" for e in entities(key)):
            return True
    return False
