"""What one incident run reads: the incident's lines, each placed in the L0 chunk that holds it.

A stream's records (its reader's, the ones the chunker packed) are cut into incidents by ``poimen.incidents``;
every line of an incident is then found in the stream's chunks, so the card that copies it names its evidence
(the chunk's sha) and its span in that chunk, and lineage reaches the chunk, the unit and the file line as it does
for a loop's memory. Records are found in chunk order (a chunk is its records joined by the format's separator),
so a line that occurs twice is placed at the occurrence its record is. A line that cannot be placed (its record
was cut across two chunks, or the chunks were cut from another version of the source) is left out of the
incident: a card line without evidence would break the rule that every memory line names where it came from.

The rendered lines (``prompt_text``) are what the model is shown: one JSON object per line with its number, its
record (lines of one record share it), kind, time, author, level, headings, indent (the blanks that set a line
of a code block off in text, when there are any) and text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from poimen import incidents as inc
from poimen.domain import Chunk, sha256_json
from poimen.incidents.lines import Line
from poimen.inputs.records import Record


@dataclass(frozen=True)
class PlacedLine:
    line: Line
    chunk: int  # index into the stream's chunks
    start: int  # span in that chunk's text
    end: int


@dataclass(frozen=True)
class IncidentPlan:
    """One incident of one stream, ready to be shown to the model."""

    stream_id: str
    stream_sha: str
    key: str  # where the incident starts: "<episode key>@<file line>", stable while the stream is
    lines: tuple[PlacedLine, ...]
    chunks: tuple[Chunk, ...]  # the chunks of the streams read together (``PlacedLine.chunk`` indexes them)
    chunk_tokens: int | None = None
    # The other day files of its channel it was cut with (``channels``), as (stream id, stream sha): what a rebuild
    # reads again beside the stream to cut the same incident. Not a run-id input: the lines and their chunks are.
    read_with: tuple[tuple[str, str], ...] = ()

    @property
    def prompt_text(self) -> str:
        records: dict[int, int] = {}
        out = []
        for n, p in enumerate(self.lines, start=1):
            r = p.line.record
            number = records.setdefault(id(r), len(records))
            obj = {"n": n, "record": number, "kind": r.kind}
            for name, value in (("time", r.time), ("author", r.author),
                                ("level", r.level if p.line.offset == 0 else ""), ("headings", list(r.headings)),
                                ("indent", p.line.indent)):
                if value:
                    obj[name] = value
            obj["text"] = p.line.text
            out.append(json.dumps(obj, ensure_ascii=False))
        return "\n".join(out)

    @property
    def members(self) -> tuple[tuple[str, int, int], ...]:
        """The chunk lines the incident's lines stand on, as (chunk sha, first line, last line): 1-based, inclusive,
        the consecutive lines of one chunk merged. Where a raw line of the stream belongs to this incident, though
        its card keeps only a few of its lines (``poimen.read.incidents``: an error pasted as it was printed finds
        the incident it was printed in)."""
        spans: dict[int, list[tuple[int, int]]] = {}
        for p in self.lines:
            text = self.chunks[p.chunk].text
            first = text.count("\n", 0, p.start) + 1
            spans.setdefault(p.chunk, []).append((first, first + text.count("\n", p.start, p.end)))
        out: list[tuple[str, int, int]] = []
        for ci in sorted(spans):
            merged: list[list[int]] = []
            for first, last in sorted(spans[ci]):
                if merged and first <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], last)
                else:
                    merged.append([first, last])
            out += [(self.chunks[ci].sha, a, b) for a, b in merged]
        return tuple(out)

    @property
    def sha(self) -> str:
        """What the run reads: the stream it is placed in, and the lines with their places."""
        return sha256_json({"stream": self.stream_sha, "key": self.key, "prompt": self.prompt_text,
                            "places": [(self.chunks[p.chunk].sha, p.start, p.end) for p in self.lines]})


def _squash(text: str) -> str:
    return " ".join(text.split())


def place_records(records: Sequence[Record], chunks: Sequence[Chunk]) -> dict[int, tuple[int, int]]:
    """id(record) -> (chunk index, offset of the record's stripped text in that chunk's text), for the records
    found whole, in order."""
    out: dict[int, tuple[int, int]] = {}
    ci, at = 0, 0
    for record in records:
        text = record.text.strip()
        if not text:
            continue
        for cj in range(ci, len(chunks)):
            found = chunks[cj].text.find(text, at if cj == ci else 0)
            if found >= 0:
                out[id(record)] = (cj, found)
                ci, at = cj, found + len(text)
                break
    return out


def _place(line: Line, where: tuple[int, int] | None, chunks: Sequence[Chunk]) -> PlacedLine | None:
    if where is None:
        return None
    ci, base = where
    lead = len(line.record.text) - len(line.record.text.lstrip())
    start, end = base + line.start - lead, base + line.end - lead
    if start < 0 or _squash(chunks[ci].text[start:end]) != _squash(line.text):
        return None
    return PlacedLine(line, ci, start, end)


@dataclass(frozen=True)
class StreamRead:
    """One L1 stream as incidents are planned from it: its reader's records and its chunks."""

    stream_id: str
    stream_sha: str
    records: Sequence[Record]
    chunks: Sequence[Chunk]


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def channel_of(stream_id: str) -> tuple[str, str] | None:
    """The channel a day file belongs to, (folder, extension), when its name is a date: Slack's export unpacks a
    channel as ``<channel>/<YYYY-MM-DD>.json``, and a log rotated daily the same way; None for any other stream."""
    path = PurePosixPath(stream_id)
    return (str(path.parent), path.suffix) if _DAY.fullmatch(path.stem) else None


def channels(stream_ids: Sequence[str]) -> list[list[str]]:
    """The streams whose incidents are cut together: the day files of one channel folder (read at one chunk bound),
    in date order, so a thread continued after midnight and a fix posted the next day join the incident they answer;
    every other stream alone. Groups in the order of their first stream, streams sorted."""
    groups: dict[object, list[str]] = {}
    for sid in sorted(set(stream_ids)):
        groups.setdefault(channel_of(sid) or sid, []).append(sid)
    return list(groups.values())


def plan_incidents(reads: Sequence[StreamRead], chunk_tokens: int | None = None) -> list[IncidentPlan]:
    """The incidents of one stream, or of a channel's day files read together, each with its lines placed in its
    streams' chunks (incidents left with none dropped). An incident is planned in the stream it starts in."""
    places: dict[int, tuple[int, int]] = {}
    kept: dict[str, list[Record]] = {}
    base = 0
    for r in reads:
        kept[r.stream_id] = [x for x in r.records if x.text.strip()]
        places.update({k: (ci + base, at) for k, (ci, at) in place_records(kept[r.stream_id], r.chunks).items()})
        base += len(r.chunks)
    chunks = tuple(c for r in reads for c in r.chunks)
    shas = {r.stream_id: r.stream_sha for r in reads}
    plans = []
    for found in inc.incidents(kept, across_streams=len(reads) > 1):
        placed = [p for line in found.lines if (p := _place(line, places.get(id(line.record)), chunks))]
        if not placed:
            continue
        first = found.episodes[0]
        key = f"{first.key}@{first.records[0].line_start}"
        others = tuple((sid, sha) for sid, sha in shas.items() if sid != first.stream)
        plans.append(IncidentPlan(first.stream, shas[first.stream], key, tuple(placed), chunks, chunk_tokens, others))
    return plans
