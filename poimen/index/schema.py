"""What a projection is: a named table with a fixed Arrow schema, a row key, and a function of the log.

A projection's rows are sorted by its key, so the same log gives the same
rows in the same order; the DuckDB DDL is derived from the Arrow schema, so a
table has exactly one definition. Each row has a hash over its column hashes,
and each table a content hash over its row hashes: a rebuild can then name the
row, and the column, that changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from poimen.domain import canonical_json
from poimen.errors import ProjectionError
from poimen.log.runs import Run, current, read_runs
from poimen.log.store import EventLog

Rows = list[dict[str, Any]]


@dataclass
class BuildContext:
    """The sealed log, read once, and what earlier projections produced."""

    runs: list[Run]
    embedder: Any
    built: dict[str, pa.Table] = field(default_factory=dict)
    log_root: Any = None
    load: Callable[[str], pa.Table] | None = None  # an incremental update reads the tables it did not rebuild

    @classmethod
    def from_log(cls, log_root, embedder, upto: int | None = None) -> "BuildContext":
        """The sealed runs of the log, or only its first ``upto`` (the log as a manifest once saw it)."""
        runs = read_runs(EventLog(log_root))
        return cls(runs if upto is None else runs[:upto], embedder, log_root=log_root)

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def table(self, name: str) -> pa.Table:
        if name not in self.built and self.load is not None:
            self.built[name] = self.load(name)
        return self.built[name]

    def events(self, *kinds: str):
        for run in self.runs:
            for e in run.events:
                if e.kind in kinds:
                    yield run, e

    @cached_property
    def current_runs(self) -> set[str]:
        """The latest sealed loop run per (level, query, stream): the ones lookup should read."""
        return {run.run_id for run in current(self.runs).values()}


@dataclass(frozen=True)
class Projection:
    """One projection table.

    ``schema`` takes the embedding dimension (only vector columns use it).
    ``key`` names a row and orders the table; it must be unique.
    ``build`` reads the log (through the context) and returns the rows, in any order.
    ``ignores`` names the event kinds that can never change its rows: runs made only of those kinds leave the
    table as it is, so the index update after them skips it. Empty (every kind matters) is always safe; a
    projection that reads another table must not ignore a kind that table reads.
    """

    name: str
    schema: Callable[[int], pa.Schema]
    key: tuple[str, ...]
    build: Callable[[BuildContext], Rows]
    doc: str = ""
    ignores: frozenset[str] = frozenset()

    def reads_any(self, kinds: set[str]) -> bool:
        """Whether runs holding these event kinds can change this table."""
        return bool(set(kinds) - self.ignores)


def fixed(*fields: tuple[str, pa.DataType]) -> Callable[[int], pa.Schema]:
    """A schema that does not depend on the embedding dimension."""
    schema = pa.schema(list(fields))
    return lambda _dim: schema


def vector(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


def duckdb_type(t: pa.DataType) -> str:
    if pa.types.is_string(t):
        return "VARCHAR"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_fixed_size_list(t):
        return f"{duckdb_type(t.value_type)}[{t.list_size}]"
    if pa.types.is_list(t):
        return f"{duckdb_type(t.value_type)}[]"
    raise TypeError(f"no DuckDB type for {t}")


def create_table_sql(name: str, schema: pa.Schema, key: Sequence[str]) -> str:
    """DDL from code constants only (table and column names are never data)."""
    cols = ", ".join(f'"{f.name}" {duckdb_type(f.type)}' for f in schema)
    pk = ", ".join(f'"{k}"' for k in key)
    return f'CREATE TABLE "{name}" ({cols}, PRIMARY KEY ({pk}))'


def _sort_value(v: Any) -> tuple:
    # None sorts first; bools and numbers and strings never share a key column.
    return (0, "") if v is None else (1, v)


def to_table(rows: Rows, schema: pa.Schema, key: Sequence[str], name: str) -> pa.Table:
    """Rows sorted by key (checked unique), as an Arrow table of exactly ``schema``."""
    rows = sorted(rows, key=lambda r: tuple(_sort_value(r[k]) for k in key))
    for a, b in zip(rows, rows[1:]):
        if all(a[k] == b[k] for k in key):
            raise ProjectionError(f"projection {name}: duplicate key {row_key(a, key)}")
    columns = {}
    for f in schema:
        values = [r.get(f.name) for r in rows]
        if pa.types.is_fixed_size_list(f.type):
            dim = f.type.list_size
            flat = np.asarray(values, dtype=np.float32).reshape(len(values), dim) if values else np.zeros((0, dim), np.float32)
            columns[f.name] = pa.FixedSizeListArray.from_arrays(pa.array(flat.ravel(), pa.float32()), dim)
        else:
            columns[f.name] = pa.array(values, f.type)
    return pa.table(columns, schema=schema)


def row_key(row: dict[str, Any], key: Sequence[str]) -> str:
    return "|".join("" if row[k] is None else str(row[k]) for k in key)


def _value_hash(value: Any) -> str:
    if isinstance(value, np.ndarray):
        # float32 little-endian bytes: exact, so a changed model shows as a changed vector.
        return hashlib.sha256(value.astype("<f4").tobytes()).hexdigest()
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RowHash:
    key: str
    hash: str
    columns: dict[str, str]  # column -> first 16 hex of its value hash (enough to name what changed)


def row_hashes(table: pa.Table, key: Sequence[str]) -> list[RowHash]:
    """One hash per row, over its column hashes, in table order."""
    names = table.column_names
    cols: dict[str, list] = {}
    for name in names:
        col = table.column(name)
        if pa.types.is_fixed_size_list(col.type):
            dim = col.type.list_size
            flat = col.combine_chunks().values.to_numpy(zero_copy_only=False)
            cols[name] = list(flat.reshape(len(col), dim)) if len(col) else []
        else:
            cols[name] = col.to_pylist()
    out = []
    for i in range(table.num_rows):
        per = {n: _value_hash(cols[n][i]) for n in names}
        h = hashlib.sha256(canonical_json([[n, per[n]] for n in names]).encode()).hexdigest()
        out.append(RowHash(row_key({k: cols[k][i] for k in key}, key), h, {n: v[:16] for n, v in per.items()}))
    return out


def content_hash(hashes: Sequence[RowHash]) -> str:
    digest = hashlib.sha256()
    for h in hashes:
        digest.update(f"{h.key}\x00{h.hash}\n".encode())
    return digest.hexdigest()


NEW_ROW = "new row (not in the manifest)"


def compare_rows(table: str, stored: dict[str, RowHash], new: list[RowHash]) -> list[tuple[str, str, str]]:
    """``(table, key, what)`` for each row of ``new`` that is not the row ``stored`` has under its key, and for each
    stored row not rebuilt: a rebuild's check against the manifest and an audit's against a build both read these."""
    out = []
    seen = set()
    for h in new:
        seen.add(h.key)
        old = stored.get(h.key)
        if old is None:
            out.append((table, h.key, NEW_ROW))
        elif old.hash != h.hash:
            cols = [c for c in h.columns if old.columns.get(c) != h.columns[c]]
            out.append((table, h.key, "changed: " + ", ".join(cols) if cols else "changed"))
    out.extend((table, key, "missing (in the manifest, not rebuilt)") for key in stored if key not in seen)
    return out
