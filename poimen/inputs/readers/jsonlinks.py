"""Records of one JSON document that refer to the records of another of its lists: a REST export's
{"issues": […], "comments": […]} whose comments name their issue by ``issue_url`` (GitHub), or an ``issue_id``,
``parent_id``, ``ticket_key`` … (most APIs).

Found from the values, not the names: a child list's field (nested too: Trello's "data.card.id") whose values are,
for most children, the identifier
(``url``, ``id``, ``number`` or ``key``, one per parent and unique) of a record of the other list. A record's
own identifier is never read as a reference to another's.
"""

from __future__ import annotations

from dataclasses import dataclass

from poimen.inputs.readers.fields import flat, get
from poimen.inputs.readers.jsonpos import Located

OWN_IDS = ("url", "id", "number", "key")


def key_of(value) -> str | None:
    """A value as a join key: a string or an integer; None for anything else."""
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Link:
    parents: list[Located]
    children: list[Located]
    child_field: str  # the children's field naming their parent ("issue_url")
    parent_field: str  # the parents' identifier it names ("url")

    def parent_key(self, parent: Located) -> str | None:
        return key_of(parent.value.get(self.parent_field))

    def child_key(self, child: Located) -> str | None:
        return key_of(get(child.value, self.child_field))


def _fields(parents: list[Located], children: list[Located]) -> tuple[str, str] | None:
    best: tuple[int, str, str] | None = None
    for pf in OWN_IDS:
        ids = [key_of(p.value.get(pf)) for p in parents]
        if None in ids or len(set(ids)) < len(ids):
            continue
        known = set(ids)
        flats = [flat(c.value) for c in children]
        for cf in sorted({k for f in flats for k in f if k not in OWN_IDS}):
            hits = sum(key_of(f.get(cf)) in known for f in flats)
            if hits * 2 > len(children) and (best is None or hits > best[0]):
                best = (hits, cf, pf)
    return best[1:] if best else None


def related(lists: list[tuple[str, list[Located]]]) -> list[Link]:
    """The lists that refer to the first list (in file order) any other list refers to: a board's cards with the
    actions that name their card ("data.card.id", Trello) and the checklists that do ("idCard"); [] for none."""
    for pname, parents in lists:
        links = [Link(parents, children, *found) for cname, children in lists if cname != pname
                 for found in [_fields(parents, children)] if found]
        if links:
            return links
    return []
