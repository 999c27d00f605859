"""Standing queries from ``queries.yaml``: id, text, the typed store they feed, ``use_exit_gate``."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from poimen.domain import TYPED_STORES, Query
from poimen.errors import ConfigError

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def load_queries(path: str | Path) -> list[Query]:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such queries file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    items = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{path}: expected a top-level 'queries:' list")
    out, seen = [], set()
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
            raise ConfigError(f"{path}: query {i} needs a string 'id' and 'text'")
        unknown = set(item) - {"id", "text", "store", "use_exit_gate"}
        if unknown:
            raise ConfigError(f"{path}: query {item['id']}: unknown keys {sorted(unknown)}")
        if not _ID.match(item["id"]) or item["id"] in seen:
            raise ConfigError(f"{path}: query id {item['id']!r} must be unique, lowercase letters, digits, - or _")
        store = item.get("store", "semantic")
        if store not in TYPED_STORES:
            raise ConfigError(f"{path}: query {item['id']}: store must be one of {', '.join(TYPED_STORES)}")
        exit_gate = item.get("use_exit_gate", False)
        if not isinstance(exit_gate, bool):
            raise ConfigError(f"{path}: query {item['id']}: use_exit_gate must be true or false")
        seen.add(item["id"])
        out.append(Query(item["id"], item["text"].strip(), store, exit_gate))
    return out


def adhoc_query(text: str) -> Query:
    """A query given on the command line: its id is derived from its text."""
    from poimen.domain import sha256_text

    if not text.strip():
        raise ConfigError("--query: empty query text")
    return Query(f"q-{sha256_text(text.strip())[:12]}", text.strip())
