"""Removing text: an event with its strings tombstoned, and the copies of that text outside the log.

An event keeps every field but its text: ``text`` and the string values in
``attrs`` become tombstones, except the few keys that say where and what a
thing is (source, namespace, store, block, op, time, query and run ids) and
strings that are shas already. In hash scheme 2 a tombstone hashes as the text
it replaced, so the event's hash stays; in scheme 1 the hash of the tombstoned
row is the witness the forget event records.

Outside the log the text has copies: the L0 chunk files, the model reply cache
(a reply is cached under a hash of its prompt, so it is found by its own text)
and the embedding cache (vectors by the sha of the text embedded: the text
itself, its units and lines, as the index embeds them).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from poimen.domain import canonical_json, sha256_text
from poimen.log.events import Event, is_forgotten, tombstone

KEEP_KEYS = frozenset({"source", "namespace", "store", "block", "op", "ts", "source_run_id", "query_id", "level",
                       "template_sha", "grammar_sha", "final_memory_sha", "stream_id", "kind", "by", "constrain"})
_SHA = re.compile(r"[0-9a-f]{64}")
FRAGMENT = 20  # a removed line this long or longer is searched for in cached replies


def _scrub_value(value: Any, removed: list[str]) -> Any:
    if isinstance(value, str):
        if value and not is_forgotten(value) and not _SHA.fullmatch(value):
            removed.append(value)
            return tombstone(value)
        return value
    if isinstance(value, list):
        return [_scrub_value(v, removed) for v in value]
    if isinstance(value, dict):
        return {k: v if k in KEEP_KEYS else _scrub_value(v, removed) for k, v in value.items()}
    return value


def scrubbed(e: Event, removed: list[str] | None = None) -> Event:
    """The event with its text and textual attrs tombstoned (``removed`` collects the strings taken out)."""
    removed = [] if removed is None else removed
    text = e.text
    if text and not is_forgotten(text):
        removed.append(text)
        text = tombstone(text)
    attrs = canonical_json(_scrub_value(json.loads(e.attrs), removed)) if e.attrs else e.attrs
    return replace(e, text=text, attrs=attrs)


def derived_texts(strings: Iterable[str]) -> set[str]:
    """Every text the index may have embedded from these strings: each whole, its units, its lines."""
    from poimen.relevance import embedding_text, split_units

    out: set[str] = set()
    for s in strings:
        pieces = {s, *(line.strip() for line in s.splitlines())}
        pieces.update(u.text for u in split_units(s))
        out.update(pieces)
        out.update(embedding_text(p) for p in pieces)
    out.discard("")
    return out


def scrub_chunk_files(chunk_dir: Path, shas: frozenset[str] | set[str]) -> list[str]:
    """Rewrite each chunks Parquet file without the forgotten chunks (removed when none is left); returns the files."""
    from poimen.inputs.chunk_store import CHUNK_SCHEMA

    changed = []
    for path in sorted(chunk_dir.rglob("*.parquet")) if chunk_dir.exists() else []:
        table = pq.read_table(path, schema=CHUNK_SCHEMA)
        keep = [r for r in table.to_pylist() if r["sha"] not in shas]
        if len(keep) == table.num_rows:
            continue
        changed.append(path.relative_to(chunk_dir).as_posix())
        if not keep:
            path.unlink()
            continue
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        pq.write_table(pa.Table.from_pylist(keep, schema=CHUNK_SCHEMA), tmp, compression="NONE", write_statistics=False)
        os.replace(tmp, path)
    return changed


def kept_strings(events: Iterable[Event]) -> list[str]:
    """Every string the log still holds (texts and attrs values, not tombstones or shas)."""
    out: list[str] = []
    for e in events:
        _scrub_value({"text": e.text, "attrs": json.loads(e.attrs) if e.attrs else {}}, out)
    return out


def scrub_reply_cache(cache_dir: Path, strings: list[str], kept: list[str]) -> int:
    """Delete cached model replies that are, or quote a line of, a removed string; returns how many.

    A string the log still holds elsewhere (a closed gate's reply is the same words for every source) is not
    forgotten text, so it deletes nothing.
    """
    if not cache_dir.exists() or not strings:
        return 0
    exact = {sha256_text(s) for s in strings} - {sha256_text(k) for k in kept}
    corpus = "\x00".join(kept)
    fragments = {f for f in (line.strip()[:200] for s in strings for line in s.splitlines())
                 if len(f) >= FRAGMENT and f not in corpus}
    gone = 0
    for path in cache_dir.rglob("*.json"):
        try:
            text = json.loads(path.read_text(encoding="utf-8")).get("text", "")
        except (OSError, ValueError):
            continue
        if sha256_text(text) in exact or any(f in text for f in fragments):
            path.unlink()
            gone += 1
    return gone


def scrub_embedding_cache(cache_dir: Path, texts: set[str], keep: set[str]) -> int:
    """Delete cached vectors of the given texts, but for those the rebuilt index still embeds (shas in ``keep``)."""
    if not cache_dir.exists():
        return 0
    shas = {sha256_text(t) for t in texts} - keep
    gone = 0
    for model_dir in (d for d in cache_dir.iterdir() if d.is_dir()):
        for sha in shas:
            path = model_dir / sha[:2] / f"{sha}.npy"
            if path.exists():
                path.unlink()
                gone += 1
    return gone
