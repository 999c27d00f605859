"""An incident card as the read path holds it: its lines by role, each with where it was copied from
(``poimen.read.incidents`` reads them from the index and shows them)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from poimen.read.context_lines import Origin

SHOWN = {"symptom": 1, "cause": 2, "action": 4, "verification": 1}
_WORD = re.compile(r"[A-Za-z][A-Za-z_.-]{2,}")
_NAMING = ("service", "host", "ticket", "class")


@dataclass(frozen=True)
class IncidentLine:
    role: str
    text: str
    origin: Origin

    def render(self) -> str:
        return f"{self.text}  [{self.origin.tag()}]"


@dataclass(frozen=True)
class IncidentView:
    """One card: what it is called, where and when it happened, and its lines by role, in the card's order."""

    sha: str
    title: str
    summary: str
    stream: str
    first_time: str
    last_time: str
    lines: tuple[IncidentLine, ...]
    members: tuple[tuple[str, int, int], ...] = ()  # the chunk lines its whole incident stands on (chunk sha, from, to)
    printed: IncidentLine | None = None  # the raw line of its incident that prints a question's message (``rank_cards``)

    @functools.cached_property
    def names(self) -> frozenset[tuple[str, str]]:
        """The specific services, hosts, tickets and classes the card's lines name (``named``), and the raw line of
        its incident that printed the question's message, when one did: a thread dump's health check names the
        monitor's class where the card kept only the diagnosis."""
        said = self.lines + ((self.printed,) if self.printed else ())
        return frozenset(named("\n".join(line.text for line in said)))

    def of(self, role: str) -> list[IncidentLine]:
        return [line for line in self.lines if line.role == role]

    @property
    def explains(self) -> bool:
        """Whether the card says why it happened or what was done, not only what was seen."""
        return any(line.role in ("cause", "action") for line in self.lines)

    def matched_symptom(self, question: str) -> IncidentLine | None:
        """The symptom line that shares most words with ``question`` (the first symptom on a tie)."""
        symptoms = self.of("symptom")
        if not symptoms:
            return None
        asked = set(_words(question))
        return max(symptoms, key=lambda line: (len(asked & set(_words(line.text))), -symptoms.index(line)))

    def shown(self, question: str) -> list[IncidentLine]:
        """What a lookup shows of the card: the matched symptom (the raw line that printed the question's message,
        when that is what matched), then up to ``SHOWN`` causes, fixes, verification."""
        matched = self.printed or self.matched_symptom(question)
        out = [matched] if matched else []
        for role in ("cause", "action", "verification"):
            out.extend(self.of(role)[:SHOWN[role]])
        return out

    def when(self) -> str:
        return span(self.first_time, self.last_time)


_EPOCH = re.compile(r"^\d{9,10}(?:\.\d+)?$")


def shown_time(value: str) -> str:
    """A record's time as a person reads it: a Slack or Unix epoch stamp ("1719906595.810595") as UTC ISO
    ("2024-07-02 07:49:55Z"); any other stamp as written."""
    if not _EPOCH.match(value):
        return value
    from datetime import datetime, timezone

    return datetime.fromtimestamp(float(value), timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def span(first: str, last: str) -> str:
    """An incident's time span as shown: "" without a time, one time, or "first – last"."""
    if not first:
        return ""
    return shown_time(first) if first == last else f"{shown_time(first)} – {shown_time(last)}"


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def named(text: str) -> dict[tuple[str, str], float]:
    """The specific things ``text`` names that say which incident it is about: services (a pod's suffix dropped),
    hosts, tickets and the program's own classes, by their linking weight (``poimen.incidents.entities``; generic
    names left out)."""
    from poimen.incidents.entities import entities

    return {(e.kind, e.value): e.weight for e in entities(text) if e.kind in _NAMING and e.weight >= 0.5}
