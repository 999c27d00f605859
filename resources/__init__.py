"""Dagster resources for poimen: the model, the embedder, the event log, DuckDB and the corpus folders."""

from resources.corpus import CorpusResource, repo_root
from resources.embedder import EmbedderResource
from resources.llm import LLMResource, ScriptedLLMResource
from resources.storage import EventLogResource, IndexDatabaseResource, duckdb_resource

# Every asset (and check or op) that writes the event log or the DuckDB index, or must read them at rest, is in
# this Dagster concurrency pool; dagster.yaml limits each pool to one step at a time across all runs.
WRITER_POOL = "poimen_writer"

__all__ = [
    "WRITER_POOL",
    "CorpusResource",
    "EmbedderResource",
    "EventLogResource",
    "IndexDatabaseResource",
    "LLMResource",
    "ScriptedLLMResource",
    "duckdb_resource",
    "repo_root",
]
