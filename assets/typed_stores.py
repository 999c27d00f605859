"""Typed memory: the pipeline's final memories filed into the store their standing query names."""

from typing import Optional
from collections import Counter

import dagster as dg

from assets.memories import l1_memories, l2_memories
from poimen import settings
from poimen.agent.facade import Memory
from poimen.agent.pipeline import import_pipeline
from poimen.domain import sha256_json
from resources import WRITER_POOL, CorpusResource, EventLogResource, writer_step


class TypedStoresConfig(dg.Config):
    """The namespace the pipeline's memories are filed under; unset: the one every entry resolves when the step runs
    (``poimen.settings.namespace``: ``POIMEN_NAMESPACE``, else ``default``)."""

    namespace: Optional[str] = None

    @property
    def resolved_namespace(self) -> str:
        return settings.namespace(self.namespace)


@dg.asset(group_name="typed_memory", kinds={"parquet"}, deps=[l1_memories, l2_memories], pool=WRITER_POOL)
@writer_step
def typed_stores(config: TypedStoresConfig, event_log: EventLogResource, corpus: CorpusResource) -> dg.MaterializeResult:
    """Each query's final memory (L2 when there is one, else each source's L1) written into the typed store named by
    queries.yaml (semantic, episodic, procedural or working) of one namespace, as store_write events in the log.

    Idempotent: a run already imported into the namespace is skipped.
    """
    namespace = config.resolved_namespace
    memory = Memory(namespace, root=event_log.log_root)
    imported = import_pipeline(memory, corpus.queries_file)
    new = [i for i in imported if not i.skipped]
    return dg.MaterializeResult(metadata={
        "namespace": namespace,
        "memories": len(imported),
        "imported": len(new),
        "skipped": len(imported) - len(new),
        "by_store": dg.MetadataValue.json(dict(sorted(Counter(i.store for i in imported).items()))),
        "content_hash": sha256_json(sorted([i.run_id, i.store, i.sha] for i in imported)),
    })
