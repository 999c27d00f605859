"""Incidents: from any stream's records, the unit an on-call memory is made of.

Records (``poimen.inputs.records.Record``, one stream's in order) are cut into episodes (``episodes``), episodes
that name the same specific things link into incidents (``link``), every line of an incident gets a role
(``roles``: symptom, cause, action, verification, none) and an incident's memory is its card (``card``), built by
extraction. Pure and framework-free: no I/O, no model, deterministic.

Usage::

    from poimen import incidents
    found = incidents.incidents({"ops.md": records})   # list[Incident]
    card = incidents.build_card(found[0])
    incidents.render(card)       # the copied lines, one per line
    card.roles                   # line sha -> role
    card.summary                 # "checkout-api failed (…) because …; resolved with …."
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from poimen.incidents.card import Card, CardLine, Evidence, build_card, render
from poimen.incidents.entities import Entity, entities
from poimen.incidents.episodes import Episode, Line, episodes
from poimen.incidents.link import Incident, link
from poimen.incidents.assign import assign
from poimen.incidents import problems
from poimen.incidents.roles import ROLES, Role, Scores, score
from poimen.inputs.records import Record

__all__ = ["ROLES", "Card", "CardLine", "Entity", "Episode", "Evidence", "Incident", "Line", "Record", "Role",
           "Scores", "assign", "build_card", "cards", "entities", "episodes", "incidents", "link", "render",
           "score"]


def incidents(records_by_stream: Mapping[str, Sequence[Record]], *, across_streams: bool = False) -> list[Incident]:
    """The incidents of several streams: each stream cut into episodes, then linked (across streams if asked), and
    an incident whose report numbers its problems split into one per problem (``problems``).

    Streams are taken in sorted name order, so the result does not depend on the mapping's order.
    """
    cut = [ep for stream in sorted(records_by_stream) for ep in episodes(records_by_stream[stream], stream)]
    return [one for found in link(cut, across_streams=across_streams) for one in problems.split(found)]


def cards(records_by_stream: Mapping[str, Sequence[Record]], *, across_streams: bool = False) -> list[Card]:
    """The card of every incident of ``records_by_stream``."""
    return [build_card(incident) for incident in incidents(records_by_stream, across_streams=across_streams)]
