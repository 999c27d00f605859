"""Tool context: symptom projections of the accepted memories, and the failure signatures that point at them."""


import asyncio
from collections import Counter

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.memories import l1_memories, l2_memories
from poimen.domain import sha256_json
from poimen.prompts import load
from poimen.symptoms import project_log, projections
from resources import EventLogResource, LLMResource


@dg.asset(group_name="tool_context", kinds={"litellm", "parquet"}, deps=[l1_memories, l2_memories])
def symptom_projections(event_log: EventLogResource, llm: LLMResource) -> dg.MaterializeResult:
    """The errors and behaviour each accepted L1/L2 memory would explain (temperature 0, pinned prompt), as log events.

    Empty is a valid answer: a memory that explains no failure gets no symptom vector. Memories already projected by this model are skipped.
    """
    log = event_log.log()
    client = llm.get_client()
    with log.writer():
        counts = asyncio.run(project_log(log, client, llm.concurrency))
    recorded = [p for p in projections(log).values() if p.model_id == client.model_id]
    return dg.MaterializeResult(metadata={
        **counts,
        "rows": len(recorded),
        "non_empty": sum(1 for p in recorded if p.text),
        "model_id": client.model_id,
        "prompt_template_sha": load("symptom").sha,
        "content_hash": sha256_json(sorted([p.memory_sha, p.text] for p in recorded)),
    })


@dg.asset(group_name="tool_context", kinds={"duckdb"}, deps=[dg.AssetKey("memory_index")])
def failure_signatures(duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Failure signatures (HTTP status, exception + frames, exit code, errno, Kubernetes reason, log template) found in
    the L0 evidence of each current memory, pointing at that memory: the next occurrence is an exact tier-1 hit."""
    with duckdb.get_connection() as con:
        rows = con.execute("SELECT kind, tool, key, memory_sha FROM failure_signature ORDER BY key, memory_sha").fetchall()
    kinds = Counter(kind for kind, _, _, _ in rows)
    tools = Counter(tool for _, tool, _, _ in rows)
    return dg.MaterializeResult(metadata={
        "rows": len(rows),
        "keys": len({key for _, _, key, _ in rows}),
        "memories": len({memory for *_, memory in rows}),
        "kinds": dg.MetadataValue.json(dict(sorted(kinds.items()))),
        "tools": dg.MetadataValue.json(dict(sorted(tools.items()))),
        "content_hash": sha256_json([list(r) for r in rows]),
    })
