"""Reply threads inside one list of records, found from the values: a field whose values are, for most records that
have one, the identifier of another record of the list (Matrix's ``content.m.relates_to.event_id``, Microsoft
Graph's ``replyToId``, a forum's ``reply_to``). A reply is threaded to the first record of its chain, and so is that
record, so a thread's messages share one thread however far apart the export writes them. Where most messages
answered get one answer each, the replies are the channel's flow (Discord's ``reference``: "roll back?" under the
message it answers), not threads, and no record is threaded.
"""

from __future__ import annotations

from poimen.inputs.readers.fields import flat

OWN_IDS = ("id", "event_id", "gid", "uuid", "message_id", "msg_id", "guid")
SHARE = 0.8  # of the values of a field, identifiers of other records, for the field to be a reply link


def _key(value) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


def link(records: list[dict]) -> tuple[str, str] | None:
    """(the reply field, the identifier field it names), or None."""
    flats = [flat(r) for r in records]
    for own in OWN_IDS:
        ids = [_key(f.get(own)) for f in flats]
        known = {i for i in ids if i is not None}
        if len(known) < max(2, 0.9 * len(records)):
            continue
        best: tuple[int, str] | None = None
        for field in sorted({k for f in flats for k in f} - {own}):
            values = [v for v in (_key(f.get(field)) for f in flats) if v is not None]
            hits = sum(v in known for v in values)
            if len(values) >= 2 and hits >= SHARE * len(values) and (best is None or hits > best[0]):
                best = (hits, field)
        if best:
            return best[1], own
    return None


def threads(records: list[dict]) -> dict[int, str]:
    """Each record's thread by its position: the identifier of the first record of its reply chain, for the
    records of a chain (a record nobody answers and that answers nobody has none)."""
    found = link(records)
    if not found:
        return {}
    field, own = found
    flats = [flat(r) for r in records]
    index = {_key(f.get(own)): n for n, f in enumerate(flats) if _key(f.get(own)) is not None}
    parent = {n: index[p] for n, f in enumerate(flats) if (p := _key(f.get(field))) in index and index[p] != n}
    if len(set(parent.values())) * 2 > len(parent):  # one answer a message: replies in the channel's flow (Discord's
        return {}  # "reference"), not threads, which gather several answers under a message
    out: dict[int, str] = {}
    for n in set(parent) | set(parent.values()):
        root, seen = n, {n}
        while root in parent and parent[root] not in seen:
            root = parent[root]
            seen.add(root)
        out[n] = _key(flats[root].get(own)) or ""
    return out
