"""Reading the index database: a read-only connection, the vector columns, and the queries lookup runs."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np

from poimen.errors import IndexAltered, IndexMissing, PoimenError

DOCS_SQL = """
WITH finals AS (
    SELECT m.sha, m.query_id, m.run_id, m.text,
           row_number() OVER (PARTITION BY m.sha
                              ORDER BY CASE m.level WHEN 'L2' THEN 0 ELSE 1 END, m.query_id, m.run_id) AS rn
    FROM memory m JOIN run r ON r.run_id = m.run_id AND r.final_memory_sha = m.sha AND r.current
)
SELECT v.sha, v.level, v.model_id, v.vector,
       COALESCE(f.text, e.text, '') AS text,
       COALESCE(f.query_id, '') AS query_id,
       COALESCE(f.run_id, rr.run_id, '') AS run_id,
       COALESCE(e.source, '') AS source,
       COALESCE(e.position, 0) AS position
FROM memory_vector v
LEFT JOIN finals f ON f.sha = v.sha AND f.rn = 1 AND v.level NOT IN ('R', 'L0')
LEFT JOIN evidence e ON e.sha = v.sha AND v.level IN ('R', 'L0')
LEFT JOIN run rr ON rr.level = v.level AND rr.current AND rr.stream_id = e.source
WHERE v.kind = 'text'
ORDER BY v.sha
"""

# Everything a memory was derived from: its chunks, the memories it replaced, and at L2 the L1
# memories it read and theirs in turn. UNION (not UNION ALL) makes the walk stop on cycles.
# 'via' rows are the L1 memories an L2 run read (the chunks of its 'evidence' edges).
WALK_SQL = """
WITH RECURSIVE walk(sha) AS (
    SELECT CAST(? AS VARCHAR)
    UNION
    SELECT e.parent_sha FROM edge e JOIN walk w ON e.child_sha = w.sha
)
SELECT 'evidence' AS what, ev.sha, ev.source, ev.position FROM walk JOIN evidence ev ON ev.sha = walk.sha
WHERE ev.level = 'L0'
UNION
SELECT 'via', e.parent_sha, '', 0 FROM walk
JOIN edge e ON e.child_sha = walk.sha AND e.kind = 'evidence'
JOIN run r ON r.run_id = e.run_id AND r.level = 'L2'
ORDER BY what, source, position, sha
"""

# The vectors of one kind besides 'text': 'symptom' (a memory's symptom projection) or 'headline' (a titled doc's title).
KIND_VECTORS_SQL = "SELECT sha, model_id, vector FROM memory_vector WHERE kind = ? ORDER BY sha"
SIGNATURE_SQL = "SELECT key, kind, memory_sha, streams FROM failure_signature ORDER BY key, memory_sha"
# The streams a key's stream count is out of: each current L0 stream, or (a log from before streams were
# recorded) each stream an L1 run read.
STREAMS_SQL = "SELECT count(DISTINCT stream_id) FROM run WHERE current AND level IN ('L0', 'L1')"


def vector_matrix(table, default_dim: int = 0) -> np.ndarray:
    """The ``vector`` column of an Arrow table as a C-ordered float32 matrix (``default_dim`` when it is empty)."""
    n = table.num_rows
    if not n:
        return np.zeros((0, default_dim), dtype=np.float32)
    col = table.column("vector").combine_chunks()
    flat = col.flatten()
    if flat.null_count or flat.type.bit_width != 32:
        values = flat.to_numpy(zero_copy_only=False)
    else:  # straight from the Arrow buffer: to_numpy would import pandas, a second of a cold lookup
        values = np.frombuffer(flat.buffers()[1], dtype=np.float32, count=len(flat), offset=flat.offset * 4)
    return np.array(values.reshape(n, col.type.list_size), dtype=np.float32, order="C")


def connect_read_only(db_path: Path, files: bool = True, config: dict[str, str] | None = None
                      ) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the index; ``files=False`` also turns off DuckDB's access to any other file or URL
    (``read_text``, ``read_csv``, ``ATTACH``, httpfs), which ad hoc SQL must not reach. ``config``: more DuckDB
    settings fixed at open (fixed before any statement can run)."""
    if not Path(db_path).exists():
        raise IndexMissing(db_path)
    try:
        config = {**(config or {}), **({} if files else {"enable_external_access": False})}
        return duckdb.connect(str(db_path), read_only=True, config=config)
    except duckdb.Error as exc:
        raise PoimenError(f"{db_path}: cannot open the index ({str(exc).splitlines()[0]})") from None


def trusted_text(db_path: Path, table: str, key: str, text: str, sha: str, tombstones: bool = True) -> str:
    """``text`` when it hashes to ``sha``, else ``IndexAltered``: a reader shows no text an edit of index.duckdb put
    there unnoticed (an edit that also rewrote the sha is ``mem verify``'s to find). ``tombstones``: the sha is the
    one a forgotten text's tombstone names (evidence and memory rows), not the hash of the tombstone (a unit's)."""
    from poimen.domain import sha256_text
    from poimen.log.events import content_sha

    if (content_sha(text) if tombstones else sha256_text(text)) != sha:
        raise IndexAltered(db_path, table, key)
    return text
