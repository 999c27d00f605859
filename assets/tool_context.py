"""Tool context: symptom projections of the accepted memories (the failure signatures are an index table, see index)."""


import asyncio

import dagster as dg

from assets.incidents import incidents
from assets.memories import l1_memories, l2_memories
from poimen.domain import sha256_json
from poimen.llm.prompts import load
from poimen.write.symptoms import project_log, projections
from resources import WRITER_POOL, EventLogResource, LLMResource, writer_step


@dg.asset(group_name="tool_context", kinds={"litellm", "parquet"}, deps=[l1_memories, l2_memories, incidents],
          pool=WRITER_POOL)
@writer_step
def symptom_projections(event_log: EventLogResource, llm: LLMResource) -> dg.MaterializeResult:
    """The errors and behaviour each accepted L1/L2 memory would explain (temperature 0, pinned prompt), as log events.

    Empty is a valid answer: a memory that explains no failure gets no symptom vector. Memories already projected by this model are skipped.
    """
    log = event_log.log()
    client = llm.get_client(event_log.path)
    # Shared, like the loops: a symptom run's id is its memory's sha and the model, so a second writer of one finds
    # it sealed or loses its claim; the exclusive step (writer turn) keeps other pipeline writers out meanwhile.
    with log.writer(shared=True):
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

