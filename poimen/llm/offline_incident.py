"""The offline engine's incident task: the card of one incident, chosen by extraction.

It reads the prompt's lines (one JSON object each, as ``poimen.write.incidents`` renders them), gives every line
its role with the cues of ``poimen.incidents.roles`` and picks the card's lines with ``poimen.incidents.card``,
the same selection ``build_card`` makes, then answers in the reply format ``poimen.llm.incident_reply`` parses.
The title and the summary are assembled from the chosen lines (the service they name, the first symptom, the
cause and the fix); no word is invented.
"""

from __future__ import annotations

import json

from poimen.incidents.card import choose, service_of, summary_of, title_of
from poimen.incidents.lines import Line
from poimen.inputs.records import KINDS, Record
from poimen.llm.incident_reply import render_reply
from poimen.llm.prompts import sections


def prompt_lines(user: str) -> list[Line]:
    """The incident's lines as the prompt shows them, each on a record rebuilt from the fields shown."""
    objs = [json.loads(raw) for raw in sections(user).get("incident", "").splitlines() if raw.strip()]
    keys = [int(obj.get("record", n)) for n, obj in enumerate(objs)]
    # Each record's text: its lines as shown, each as indented as it was (a code block in a comment, ``Line.indent``)
    texts: dict[int, list[str]] = {}
    spans: list[tuple[int, int]] = []
    for key, obj in zip(keys, objs):
        written = " " * _indent(obj) + str(obj.get("text", ""))
        lines = texts.setdefault(key, [])
        at = sum(len(line) + 1 for line in lines) + _indent(obj)
        spans.append((at, at + len(str(obj.get("text", "")))))
        lines.append(written)
    out: list[Line] = []
    records: dict[int, Record] = {}
    offsets: dict[int, int] = {}
    for key, obj, (start, end) in zip(keys, objs, spans):
        if key not in records:
            kind = obj.get("kind") if obj.get("kind") in KINDS else "paragraph"
            records[key] = Record(text="\n".join(texts[key]) or " ", line_start=1, line_end=1, kind=kind,
                                  time=str(obj.get("time", "")), author=str(obj.get("author", "")),
                                  headings=tuple(str(h) for h in obj.get("headings", ())),
                                  level=str(obj.get("level", "")))
        offset = offsets.get(key, 0)
        offsets[key] = offset + 1
        out.append(Line(str(obj.get("text", "")), records[key], str(obj.get("stream", "")), offset, start, end))
    return out


def _indent(obj: dict) -> int:
    value = obj.get("indent", 0)
    return value if isinstance(value, int) and 0 <= value <= 80 else 0


def incident(system: str, user: str) -> str:
    lines = prompt_lines(user)
    chosen = choose(lines)
    card_lines = [line for _, line in chosen]
    service = service_of(lines, [line for line in card_lines if line.role == "symptom"])
    roles = {i + 1: line.role for i, line in chosen}
    if not any(role == "symptom" for role in roles.values()):
        return render_reply("", {}, "")
    return render_reply(title_of(service, card_lines), roles, summary_of(service, card_lines))
