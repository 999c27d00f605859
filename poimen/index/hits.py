"""What a lookup returns — hits with their provenance — and how a hit says why it ranked where it did."""

from __future__ import annotations

from dataclasses import dataclass

RRF_K = 60  # the constant from Cormack et al. (2009): damps the head of each list
FUSED_LISTS = ("vector", "keyword")
VECTOR_KINDS = ("symptom", "text", "headline")  # the vectors whose best per doc makes the 'vector' list


@dataclass(frozen=True)
class Provenance:
    """One L0 chunk (or R chunk) behind a hit: its sha and where it was read."""

    sha: str
    source: str
    position: int


@dataclass(frozen=True)
class Hit:
    sha: str
    level: str  # L0 | L1 | L2 | R
    kind: str  # 'memory' (L1, L2) | 'evidence' (an L0 stream chunk) | 'reference' (R)
    score: float  # tier 1: summed specificity of the decisive keys matched; tier 2: the fused score (RRF)
    tier: str  # 'signature' (tier 1); else which vector found it and whether BM25 did: 'symptom+keyword', 'text' …
    text: str
    query_id: str
    run_id: str
    evidence: tuple[Provenance, ...]
    why: str
    via: tuple[str, ...] = ()  # for an L2 memory: the L1 memory shas it was built from
    signature_keys: tuple[str, ...] = ()  # tier 1: the query's signature keys this memory's evidence holds
    ranks: tuple[tuple[str, int], ...] = ()  # (list, rank) in each fused list it appeared in


def why_fused(lists: dict, score: float, explain: bool, sizes: dict[str, int], lexical: str = "bm25") -> str:
    """``lexical`` names the keyword list's scorer ('bm25', or 'cosine' for a document-sized query)."""
    fused = {name: lists[name] for name in FUSED_LISTS if name in lists}
    if not explain:
        return " + ".join(f"{name} #{rank}" for name, (rank, _, _) in fused.items())
    parts = []
    for kind in VECTOR_KINDS:
        if kind not in sizes:
            continue  # no headline list: the query is not titled
        if f"_{kind}" in lists:
            r, s, _ = lists[f"_{kind}"]
            parts.append(f"{kind} vectors rank {r}/{sizes[kind]} (cosine {s:.3f})")
        else:
            parts.append(f"no {kind} vector matched" if not sizes.get(kind) else f"not in the top {sizes[kind]} by {kind} vector")
    if "vector" in lists:
        r, _, (won,) = lists["vector"]
        parts.append(f"best vector ({won}) rank {r}/{sizes['vector']}")
    if "keyword" in lists:
        r, s, terms = lists["keyword"]
        parts.append(f"keyword rank {r}/{sizes['keyword']} ({lexical} {s:.2f}; matched {', '.join(terms)})")
    else:
        parts.append("no keyword match" if not sizes.get("keyword") else f"not in the top {sizes['keyword']} by keyword")
    terms = " + ".join(f"1/({RRF_K}+{r})" for r, _, _ in fused.values())
    return "; ".join(parts) + (f"; fused {terms} = {score:.4f}" if fused else "")


def why_signature(keys: tuple[str, ...], held: list, total: int, score: float, rank2: int | None, lists: dict,
                   sizes: dict, explain: bool, lexical: str = "bm25") -> str:
    head = f"tier 1: signature {', '.join(keys)}"
    if not explain:
        return head
    each = "; ".join(f"{key} in {n}/{total} streams, weight {w:.2f}{'' if d else ' (generic: tie-breaker only)'}"
                     for key, n, w, d in held)
    tail = f"its tier-2 rank {rank2}" if rank2 else "tier 2 (not found there)"
    fused = sum(1.0 / (RRF_K + r) for name, (r, _, _) in lists.items() if name in FUSED_LISTS)
    return (f"{head} in its L0 evidence ({each}; summed specificity {score:.2f}); ties broken by generic keys, "
            f"then {tail}; " + why_fused(lists, fused, True, sizes, lexical))
