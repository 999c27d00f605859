"""Dagster resources for poimen: the model, the embedder, the event log, DuckDB and the corpus folders."""

import functools
import inspect

from resources.corpus import CorpusResource, repo_root
from resources.embedder import EmbedderResource
from resources.llm import LLMResource, ScriptedLLMResource
from resources.storage import EventLogResource, IndexDatabaseResource, duckdb_resource

# Every asset (and check or op) that needs the event log or the DuckDB index to itself, or must read them at rest,
# is in this Dagster concurrency pool; dagster.yaml limits each pool to one step at a time across all runs. Steps
# that only append runs (the shards of chunks and l1_memories, reference_docs, l2_memories) are not: they share.
WRITER_POOL = "poimen_writer"


def _in_turn(fn, shared: bool):
    name = fn.__name__
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def steps(*args, **kwargs):
            with kwargs["event_log"].writer_turn(name, shared=shared):
                yield from fn(*args, **kwargs)
        return steps

    @functools.wraps(fn)
    def step(*args, **kwargs):
        with kwargs["event_log"].writer_turn(name, shared=shared):
            return fn(*args, **kwargs)
    return step


def writer_step(fn):
    """A step body that needs the log or the index to itself: it runs inside an exclusive ``event_log.writer_turn``
    (wrap under the ``@dg.asset(..., pool=WRITER_POOL)`` decorator). Keeps the signature Dagster reads resources from."""
    return _in_turn(fn, shared=False)


def appender_step(fn):
    """A step body that only appends runs to the log: it shares the writer turn with other appenders (runs are claimed
    one by one, the index commit is safe for concurrent writers) and waits only for exclusive steps."""
    return _in_turn(fn, shared=True)

__all__ = [
    "WRITER_POOL",
    "writer_step",
    "appender_step",
    "CorpusResource",
    "EmbedderResource",
    "EventLogResource",
    "IndexDatabaseResource",
    "LLMResource",
    "ScriptedLLMResource",
    "duckdb_resource",
    "repo_root",
]
