"""Checks the held-out incident suite's labels against its streams.

Run: .venv/bin/python bench/incidents2/check_labels.py   (exit 1 on any error; warnings don't fail)

- every symptom/cause/fix label is an exact substring of its stream file, on one line, and (for JSON, JSONL
  and CSV streams) also a substring of one parsed string value, so escaping can't hide it from a reader;
- no probe is a substring of its stream, and no probe equals a stream line;
- every .json parses, every .jsonl line parses, every .csv parses with a constant column count;
- recurs_with pairs point at each other, live in different streams and share no fix label;
- warns when a fix label also occurs in another stream (it would be scored as a confusion there).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
KEYS = {"id", "format", "stream", "split", "symptom", "cause", "fix", "ask", "probes", "recurs_with"}


def strings(obj):
    """Every string value inside a parsed JSON document."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def parsed_values(path: Path, text: str) -> list[str] | None:
    if path.suffix == ".json":
        return list(strings(json.loads(text)))
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out += strings(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"line {n}: {e}") from e
        return out
    if path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
        widths = Counter(len(r) for r in rows)
        if len(widths) != 1:
            raise ValueError(f"ragged rows: {dict(widths)}")
        return [c for r in rows for c in r]
    return None


def main() -> int:
    errors, warnings = [], []
    data = yaml.safe_load((HERE / "suite.yaml").read_text(encoding="utf-8"))
    assert isinstance(data.get("question"), str) and data["question"].strip(), "no question"
    incidents = data["incidents"]
    ids = Counter(i["id"] for i in incidents)
    errors += [f"duplicate id {k}" for k, v in ids.items() if v > 1]
    texts, values = {}, {}
    for stream in sorted({i["stream"] for i in incidents}):
        path = HERE / stream
        if not path.is_file():
            errors.append(f"missing stream {stream}")
            continue
        texts[stream] = path.read_text(encoding="utf-8")
        try:
            values[stream] = parsed_values(path, texts[stream])
        except Exception as e:  # noqa: BLE001 - report any parse failure
            errors.append(f"{stream}: does not parse: {e}")
    by_id = {i["id"]: i for i in incidents}
    for inc in incidents:
        iid, stream = inc["id"], inc["stream"]
        extra = set(inc) - KEYS
        if extra:
            errors.append(f"{iid}: unknown keys {extra}")
        if inc.get("split") != "heldout":
            errors.append(f"{iid}: split is {inc.get('split')!r}, want heldout")
        text = texts.get(stream)
        if text is None:
            continue
        for role in ("symptom", "cause", "fix"):
            labels = inc.get(role) or []
            if not labels:
                errors.append(f"{iid}: no {role}")
            for label in labels:
                if "\n" in label:
                    errors.append(f"{iid}: {role} {label!r} spans lines")
                if label not in text:
                    errors.append(f"{iid}: {role} {label!r} is not in {stream}")
                    continue
                vals = values.get(stream)
                if vals is not None and not any(label in v for v in vals):
                    errors.append(f"{iid}: {role} {label!r} is only in the raw bytes of {stream}, not in a parsed value")
        probes = inc.get("probes") or []
        if not 1 <= len(probes) <= 2:
            errors.append(f"{iid}: {len(probes)} probes")
        lines = {ln.strip() for ln in text.splitlines()}
        for p in probes:
            if p in text or p.strip() in lines:
                errors.append(f"{iid}: probe copies the stream: {p[:80]!r}")
        if not str(inc.get("ask", "")).strip():
            errors.append(f"{iid}: no ask")
        for label in inc.get("fix") or []:
            for other, t in texts.items():
                if other != stream and label in t:
                    warnings.append(f"{iid}: fix {label!r} also occurs in {other}")
        twin_id = inc.get("recurs_with")
        if twin_id:
            twin = by_id.get(twin_id)
            if twin is None:
                errors.append(f"{iid}: recurs_with {twin_id} does not exist")
            else:
                if twin.get("recurs_with") != iid:
                    errors.append(f"{iid}: {twin_id} does not point back")
                if twin["stream"] == stream:
                    errors.append(f"{iid}: twin {twin_id} is in the same stream")
                if set(inc["fix"]) & set(twin["fix"]):
                    errors.append(f"{iid}: shares a fix label with {twin_id}")
                if not set(inc["symptom"]) & set(twin["symptom"]):
                    warnings.append(f"{iid}: no symptom label shared with {twin_id}")
    formats = Counter(i["format"] for i in incidents)
    n_probes = sum(len(i.get("probes") or []) for i in incidents)
    print(f"{len(incidents)} incidents, {n_probes} probes, {len(texts)} streams, formats {dict(formats)}")
    for w in warnings:
        print("WARN ", w)
    for e in errors:
        print("ERROR", e)
    print("ok" if not errors else f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
