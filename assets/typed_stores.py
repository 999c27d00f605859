"""Typed memory: the pipeline's final memories filed into the store their standing query names."""

import os
from collections import Counter

import dagster as dg

from assets.memories import l1_memories, l2_memories
from poimen.agent.facade import Memory
from poimen.agent.pipeline import import_pipeline
from poimen.domain import sha256_json
from resources import CorpusResource, EventLogResource


class TypedStoresConfig(dg.Config):
    namespace: str = os.environ.get("POIMEN_NAMESPACE") or "team"


@dg.asset(group_name="typed_memory", kinds={"parquet"}, deps=[l1_memories, l2_memories])
def typed_stores(config: TypedStoresConfig, event_log: EventLogResource, corpus: CorpusResource) -> dg.MaterializeResult:
    """Each query's final memory (L2 when there is one, else each source's L1) written into the typed store named by
    queries.yaml (semantic, episodic, procedural or working) of one namespace, as store_write events in the log.

    Idempotent: a run already imported into the namespace is skipped.
    """
    memory = Memory(config.namespace, root=event_log.path)
    imported = import_pipeline(memory, corpus.queries_file)
    new = [i for i in imported if not i.skipped]
    return dg.MaterializeResult(metadata={
        "namespace": config.namespace,
        "memories": len(imported),
        "imported": len(new),
        "skipped": len(imported) - len(new),
        "by_store": dg.MetadataValue.json(dict(sorted(Counter(i.store for i in imported).items()))),
        "content_hash": sha256_json(sorted([i.run_id, i.store, i.sha] for i in imported)),
    })
