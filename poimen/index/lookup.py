"""The read path: ``lookup(text)`` finds memories and reference chunks, each with its evidence.

Tiers are tried in order and their hits concatenated (a sha appears once):

1. exact failure signatures      — filled by the tool-context work (``_tier_signature``)
2. symptom vectors               — filled by the tool-context work (``_tier_symptom``)
3. text vectors + BM25 keywords, fused by reciprocal rank fusion (``_tier_text``)

Vectors are loaded once into a normalised float32 matrix and searched brute
force (one matrix-vector product), which at 100k × 384 is as fast as numpy
gets and exact. Provenance is read per search with a short read-only DuckDB
connection, so an open index holds no lock on the database between searches.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from poimen.errors import PoimenError
from poimen.index.keyword import BM25

RRF_K = 60  # the constant from Cormack et al. (2009): damps the head of each list
MIN_COSINE = 0.0  # a vector candidate must score above this: orthogonal or opposite texts are not matches


@dataclass(frozen=True)
class Provenance:
    """One L0 evidence chunk (or R chunk) behind a hit: its sha and where it was read."""

    sha: str
    source: str
    position: int


@dataclass(frozen=True)
class Hit:
    sha: str
    level: str  # L1 | L2 | R
    kind: str  # 'memory' | 'reference'
    score: float  # the fused score (reciprocal rank fusion)
    tier: str  # 'text' | 'keyword' | 'text+keyword' (later also 'signature', 'symptom')
    text: str
    query_id: str
    run_id: str
    evidence: tuple[Provenance, ...]
    why: str
    via: tuple[str, ...] = ()  # for an L2 memory: the L1 memory shas it was built from


_DOCS_SQL = """
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
LEFT JOIN finals f ON f.sha = v.sha AND f.rn = 1 AND v.level <> 'R'
LEFT JOIN evidence e ON e.sha = v.sha AND v.level = 'R'
LEFT JOIN run rr ON rr.level = 'R' AND rr.current AND rr.stream_id = e.source
WHERE v.kind = 'text'
ORDER BY v.sha
"""

# Everything a memory was derived from: its chunks, the memories it replaced, and at L2 the L1
# memories it read and theirs in turn. UNION (not UNION ALL) makes the walk stop on cycles.
# 'via' rows are the L1 memories an L2 run read (the chunks of its 'evidence' edges).
_WALK_SQL = """
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


def embedder_for(model_id: str, dim: int = 0, cache_dir: Path | None = None):
    """The embedder a model id names (the one an index recorded): ``poimen/hash-bow-<dim>`` or a
    sentence-transformers model (``sentence-transformers/all-MiniLM-L6-v2`` or a local model folder)."""
    from poimen.embedding import DEFAULT_MODEL, HashEmbedder, SentenceTransformerEmbedder

    prefix = "poimen/hash-bow-"
    if model_id.startswith(prefix):
        suffix = model_id[len(prefix):]
        return HashEmbedder(int(suffix) if suffix.isdigit() else dim or 384)
    if model_id in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return SentenceTransformerEmbedder(DEFAULT_MODEL, cache_dir=cache_dir)
    return SentenceTransformerEmbedder(model_id, cache_dir=cache_dir)


def _connect(db_path: Path) -> duckdb.DuckDBPyConnection:
    if not Path(db_path).exists():
        raise PoimenError(f"{db_path}: no index here; build it with `mem rebuild --from-log`")
    try:
        return duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error as exc:
        raise PoimenError(f"{db_path}: cannot open the index ({str(exc).splitlines()[0]})") from None


class MemoryIndex:
    """Text vectors and keywords of every final memory and reference chunk, ready to search."""

    def __init__(self, db_path: Path, embedder, shas: list[str], meta: list[dict], matrix: np.ndarray, model_id: str):
        self.db_path = Path(db_path)
        self.embedder = embedder
        self.shas = shas
        self.meta = meta
        self.matrix = matrix
        self.model_id = model_id
        self._bm25: BM25 | None = None
        self._position = {sha: i for i, sha in enumerate(shas)}

    @classmethod
    def open(cls, db_path: Path, embedder=None) -> "MemoryIndex":
        """Load the 'text' vectors once. ``embedder=None`` uses the one that built the index."""
        con = _connect(db_path)
        try:
            try:
                table = con.sql(_DOCS_SQL).to_arrow_table()
            except duckdb.CatalogException:
                raise PoimenError(f"{db_path}: not a poimen index (no projection tables); run `mem rebuild --from-log`") from None
        finally:
            con.close()
        n = table.num_rows
        col = table.column("vector").combine_chunks()
        dim = col.type.list_size if n else int(getattr(embedder, "dim", 0) or 0)
        matrix = np.array(col.values.to_numpy(zero_copy_only=False).reshape(n, dim), dtype=np.float32, order="C") if n \
            else np.zeros((0, dim), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        model_ids = sorted(set(table.column("model_id").to_pylist()))
        if len(model_ids) > 1:
            raise PoimenError(f"{db_path}: text vectors from several models {model_ids}; rebuild the index")
        model_id = model_ids[0] if model_ids else getattr(embedder, "model_id", "")
        if embedder is None:
            embedder = embedder_for(model_id, dim) if model_id else None
        elif model_ids and embedder.model_id != model_id:
            raise PoimenError(f"{db_path}: index vectors are from {model_id}, but the query embedder is "
                              f"{embedder.model_id}; rebuild the index or use the same model")
        cols = {name: table.column(name).to_pylist() for name in ("sha", "level", "text", "query_id", "run_id", "source", "position")}
        meta = [{name: cols[name][i] for name in cols} for i in range(n)]
        return cls(db_path, embedder, cols["sha"], meta, matrix, model_id)

    def __len__(self) -> int:
        return len(self.shas)

    # -- ranked lists --------------------------------------------------------
    def search_vector(self, vector: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
        """Top ``k`` (doc index, cosine) for a query vector, best first; ties broken by doc index."""
        n = len(self.shas)
        if not n or k <= 0:
            return []
        scores = self.matrix @ np.asarray(vector, dtype=np.float32)
        if k < n:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(n)
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(i), float(scores[i])) for i in top]

    def search_keyword(self, text: str, k: int = 10) -> list[tuple[int, float, tuple[str, ...]]]:
        if self._bm25 is None:
            self._bm25 = BM25([m["text"] for m in self.meta])
        return self._bm25.search(text, k)

    # -- tiers ---------------------------------------------------------------
    def _tier_signature(self, text: str, k: int, explain: bool) -> list[Hit]:
        """Tier 1: exact failure-signature hits (normalise ``text`` into signatures, look them up in
        ``failure_signature``). Empty until the tool-context projections fill that table."""
        return []

    def _tier_symptom(self, text: str, k: int, explain: bool) -> list[Hit]:
        """Tier 2: nearest ``memory_vector`` rows of kind 'symptom'. Empty until the tool-context work."""
        return []

    def _tier_text(self, text: str, k: int, explain: bool) -> list[Hit]:
        """Tier 3: text vectors and BM25, fused by reciprocal rank fusion."""
        depth = max(50, 5 * k)
        query = self.embedder.embed([text])[0]
        vec = [(i, score) for i, score in self.search_vector(query, depth) if score > MIN_COSINE]
        kw = self.search_keyword(text, depth)
        fused: dict[int, dict] = {}
        for rank, (i, score) in enumerate(vec, start=1):
            fused.setdefault(i, {})["text"] = (rank, score, ())
        for rank, (i, score, terms) in enumerate(kw, start=1):
            fused.setdefault(i, {})["keyword"] = (rank, score, terms)
        scored = sorted(((sum(1.0 / (RRF_K + r) for r, _, _ in lists.values()), i, lists) for i, lists in fused.items()),
                        key=lambda t: (-t[0], t[1]))
        hits = []
        for score, i, lists in scored[:k]:
            tier = "+".join(name for name in ("text", "keyword") if name in lists)
            hits.append(self._hit(i, score, tier, _why(lists, score, explain, len(vec), len(kw))))
        return hits

    def _hit(self, i: int, score: float, tier: str, why: str) -> Hit:
        m = self.meta[i]
        kind = "reference" if m["level"] == "R" else "memory"
        return Hit(m["sha"], m["level"], kind, score, tier, m["text"], m["query_id"], m["run_id"], (), why)

    def _with_provenance(self, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return hits
        from dataclasses import replace

        out = []
        con = _connect(self.db_path)
        try:
            for h in hits:
                if h.kind == "reference":
                    m = self.meta[self._position[h.sha]]
                    out.append(replace(h, evidence=(Provenance(h.sha, m["source"], int(m["position"])),)))
                    continue
                rows = con.execute(_WALK_SQL, [h.sha]).fetchall()
                evidence = tuple(Provenance(sha, src, int(pos)) for what, sha, src, pos in rows if what == "evidence")
                via = tuple(sha for what, sha, _, _ in rows if what == "via" and sha != h.sha) if h.level == "L2" else ()
                out.append(replace(h, evidence=evidence, via=via))
        finally:
            con.close()
        return out

    def search(self, text: str, k: int = 10, explain: bool = False) -> list[Hit]:
        """The ``k`` best hits for ``text``, each with its provenance; ``explain`` makes ``why`` detailed."""
        if not text.strip() or not self.shas or k <= 0:
            return []
        hits: list[Hit] = []
        seen: set[str] = set()
        for tier in (self._tier_signature, self._tier_symptom, self._tier_text):
            for h in tier(text, k, explain):
                if h.sha not in seen:
                    seen.add(h.sha)
                    hits.append(h)
            if len(hits) >= k:
                break
        return self._with_provenance(hits[:k])


def _why(lists: dict, score: float, explain: bool, n_vec: int, n_kw: int) -> str:
    if not explain:
        return " + ".join(f"{name} #{rank}" for name, (rank, _, _) in lists.items())
    parts = []
    if "text" in lists:
        r, s, _ = lists["text"]
        parts.append(f"text vectors rank {r}/{n_vec} (cosine {s:.3f})")
    else:
        parts.append(f"not in the top {n_vec} by text vector")
    if "keyword" in lists:
        r, s, terms = lists["keyword"]
        parts.append(f"keyword rank {r}/{n_kw} (bm25 {s:.2f}; matched {', '.join(terms)})")
    else:
        parts.append("no keyword match" if n_kw == 0 else f"not in the top {n_kw} by keyword")
    terms = " + ".join(f"1/({RRF_K}+{r})" for r, _, _ in lists.values())
    return "; ".join(parts) + f"; fused {terms} = {score:.4f}"


def lookup(db_path: Path, text: str, k: int = 10, embedder=None, explain: bool = False) -> list[Hit]:
    """Search the index at ``db_path`` once; ``embedder=None`` uses the model that built it."""
    return MemoryIndex.open(db_path, embedder).search(text, k, explain)
