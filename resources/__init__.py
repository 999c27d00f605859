"""Dagster resources for poimen: the model, the embedder, the event log, DuckDB and the corpus folders."""

import functools
import inspect

from resources.corpus import CorpusResource, repo_root
from resources.embedder import EmbedderResource
from resources.llm import LLMResource, ScriptedLLMResource
from resources.storage import EventLogResource, IndexDatabaseResource, duckdb_resource

# Every asset (and check or op) that writes the event log or the DuckDB index, or must read them at rest, is in
# this Dagster concurrency pool; dagster.yaml limits each pool to one step at a time across all runs.
WRITER_POOL = "poimen_writer"


def writer_step(fn):
    """A step body that writes the log or the index: it runs inside ``event_log.writer_turn`` (wrap under the
    ``@dg.asset(..., pool=WRITER_POOL)`` decorator). Keeps the signature Dagster reads resources from."""
    name = fn.__name__
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def steps(*args, **kwargs):
            with kwargs["event_log"].writer_turn(name):
                yield from fn(*args, **kwargs)
        return steps

    @functools.wraps(fn)
    def step(*args, **kwargs):
        with kwargs["event_log"].writer_turn(name):
            return fn(*args, **kwargs)
    return step

__all__ = [
    "WRITER_POOL",
    "writer_step",
    "CorpusResource",
    "EmbedderResource",
    "EventLogResource",
    "IndexDatabaseResource",
    "LLMResource",
    "ScriptedLLMResource",
    "duckdb_resource",
    "repo_root",
]
