"""Dagster resources for poimen: the model, the embedder, the event log, DuckDB and the corpus folders."""

from resources.corpus import CorpusResource, repo_root
from resources.embedder import EmbedderResource
from resources.llm import LLMResource, ScriptedLLMResource
from resources.storage import EventLogResource, duckdb_resource

__all__ = [
    "CorpusResource",
    "EmbedderResource",
    "EventLogResource",
    "LLMResource",
    "ScriptedLLMResource",
    "duckdb_resource",
    "repo_root",
]
