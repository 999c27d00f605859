"""Checks bench/incidents3/suite.yaml against its streams.

    /work/main/.venv/bin/python bench/incidents3/check_suite.py

Every symptom/cause/fix label is an exact substring of one line of its stream (for JSON files: of the raw bytes and
of one decoded string's line); no probe is a substring of its stream nor contains a whole stream line; every JSON
stream parses; recurs_with pairs point at each other across different streams; no fix label occurs in another
incident's stream (except the recurs_with twin).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FORMATS = {"slack", "pagerduty", "java", "github", "shell", "postmortem"}
KEYS = {"id", "format", "stream", "split", "symptom", "cause", "fix", "ask", "probes", "recurs_with"}


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def main() -> int:
    data = yaml.safe_load((HERE / "suite.yaml").read_text())
    errors: list[str] = []
    assert isinstance(data["question"], str) and data["question"].strip()
    incidents = data["incidents"]
    ids = Counter(i["id"] for i in incidents)
    errors += [f"duplicate id {k}" for k, n in ids.items() if n > 1]
    by_id = {i["id"]: i for i in incidents}
    raw: dict[str, str] = {}
    decoded_lines: dict[str, list[str]] = {}
    for inc in incidents:
        s = inc["stream"]
        if s in raw:
            continue
        text = (HERE / s).read_text(encoding="utf-8")
        raw[s] = text
        if s.endswith(".json"):
            try:
                obj = json.loads(text)
            except ValueError as e:
                errors.append(f"{s}: JSON does not parse: {e}")
                obj = []
            decoded_lines[s] = [line for v in strings(obj) for line in v.splitlines()]
        else:
            decoded_lines[s] = text.splitlines()
    for inc in incidents:
        iid, s = inc["id"], inc["stream"]
        extra = set(inc) - KEYS
        missing = (KEYS - {"recurs_with"}) - set(inc)
        if extra or missing:
            errors.append(f"{iid}: keys extra={extra} missing={missing}")
        if inc["format"] not in FORMATS:
            errors.append(f"{iid}: unknown format {inc['format']}")
        if inc["split"] != "blind":
            errors.append(f"{iid}: split is {inc['split']}")
        for key in ("symptom", "cause", "fix"):
            if not inc[key]:
                errors.append(f"{iid}: empty {key}")
            for label in inc[key]:
                if "\n" in label or "\r" in label:
                    errors.append(f"{iid}: {key} label spans lines: {label!r}")
                if not any(label in line for line in raw[s].splitlines()):
                    errors.append(f"{iid}: {key} label not on one raw line of {s}: {label!r}")
                if not any(label in line for line in decoded_lines[s]):
                    errors.append(f"{iid}: {key} label not in one decoded line of {s}: {label!r}")
        if not 1 <= len(inc["probes"]) <= 2:
            errors.append(f"{iid}: {len(inc['probes'])} probes")
        for probe in inc["probes"]:
            if probe in raw[s] or any(probe in line for line in decoded_lines[s]):
                errors.append(f"{iid}: probe is a substring of its stream: {probe[:60]!r}")
            copied = [line for line in decoded_lines[s] if len(line.strip()) >= 25 and line.strip() in probe]
            if copied:
                errors.append(f"{iid}: probe contains a whole stream line: {copied[0][:80]!r}")
        twin = inc.get("recurs_with")
        if twin:
            other = by_id.get(twin)
            if other is None or other.get("recurs_with") != iid or other["stream"] == s:
                errors.append(f"{iid}: recurs_with {twin} is not a mutual pair across two streams")
        for label in inc["fix"]:
            for other in incidents:
                if other["id"] in (iid, twin) or other["stream"] == s:
                    continue
                if label in raw[other["stream"]]:
                    errors.append(f"{iid}: fix label {label!r} also occurs in {other['stream']}")
    probes = sum(len(i["probes"]) for i in incidents)
    per_format = Counter(i["format"] for i in incidents)
    print(f"{len(incidents)} incidents, {len(raw)} streams, {probes} probes; per format: {dict(per_format)}")
    print(f"recurrence pairs: {sorted({tuple(sorted((i['id'], i['recurs_with']))) for i in incidents if i.get('recurs_with')})}")
    for e in errors:
        print("ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
