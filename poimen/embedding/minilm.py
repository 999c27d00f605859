"""A BERT sentence encoder in numpy, for embedding a few query texts without importing torch.

``import sentence_transformers`` took 14-18 s on 2 loaded cores (it pulls torch, transformers and scikit-learn),
longer than a whole ``mem lookup`` should take. A lookup embeds one question, so the read path runs the same
network here: the tokenizer from ``tokenizer.json`` (the ``tokenizers`` package, Rust), the weights from
``model.safetensors`` (``safetensors.numpy``), six BERT layers in float32, mean pooling and L2 normalisation -
what the model folder's ``modules.json`` declares. Its vectors agree with sentence-transformers' to float32
rounding (``tests/test_query_encoder.py`` compares them); the vectors stored in the index are still computed by
sentence-transformers.

``load(path)`` returns None for a folder this encoder does not cover (another architecture or pooling), and the
caller falls back to sentence-transformers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

_MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
            "sentence_transformers.models.Normalize"]


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26): below float32 rounding at GELU's scale; numpy has no erf."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _covered(path: Path) -> dict | None:
    """The BERT config of a sentence-transformers folder this encoder reproduces exactly, else None."""
    try:
        modules = [m["type"] for m in json.loads((path / "modules.json").read_text())]
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
        config = json.loads((path / "config.json").read_text())
        seq = json.loads((path / "sentence_bert_config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if (modules != _MODULES or modes != {"pooling_mode_mean_tokens"} or config.get("model_type") != "bert"
            or config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute"
            or not (path / "model.safetensors").exists() or not (path / "tokenizer.json").exists()):
        return None
    return {**config, "max_seq_length": int(seq.get("max_seq_length") or config["max_position_embeddings"])}


BATCH_TEXTS = 64  # texts whose tokens go through one set of matrix products (bounds the memory it takes)


class NumpyBert:
    """Mean-pooled, L2-normalised BERT embeddings; texts are not padded, so there is no attention mask."""

    def __init__(self, path: Path, config: dict):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(min(config["max_seq_length"], int(config["max_position_embeddings"])))
        self.w = {k: v.astype(np.float32) for k, v in load_file(str(path / "model.safetensors")).items()}

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        return _layer_norm(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps)

    def _attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """One text's self-attention over its own tokens (rows of q, k, v), heads joined back."""
        n, d = len(q), self.dim // self.heads
        q, k, v = (m.reshape(n, self.heads, d).transpose(1, 0, 2) for m in (q, k, v))
        scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(d))
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        return ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, self.dim)

    def _encode_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The texts' vectors, their tokens stacked as the rows of one matrix.

        Every layer but attention works token by token, so it runs once over all the texts' tokens: one large
        matrix product instead of a small one per text, which halved the time of the answer task's ~30 context
        lines. Attention runs per text, over that text's rows only, so no text sees another's tokens and nothing
        is padded. (A row's sums may then round differently than in a smaller product: by ~1e-7, the scale at
        which these vectors already differ from sentence-transformers'.)"""
        w = self.w
        ids = [np.asarray(self.tokenizer.encode(t).ids) for t in texts]
        ends = np.cumsum([len(i) for i in ids])
        spans = [(int(e) - len(i), int(e)) for i, e in zip(ids, ends)]
        x = np.concatenate([w["embeddings.word_embeddings.weight"][i] + w["embeddings.position_embeddings.weight"][:len(i)]
                            + w["embeddings.token_type_embeddings.weight"][0] for i in ids])
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}"
            q, k, v = (self._linear(x, f"{p}.attention.self.{m}") for m in ("query", "key", "value"))
            context = np.concatenate([self._attend(q[a:b], k[a:b], v[a:b]) for a, b in spans])
            x = self._norm(self._linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = self._linear(x, f"{p}.intermediate.dense")
            h = (0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))).astype(np.float32)
            x = self._norm(self._linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = [x[a:b].mean(0) for a, b in spans]
        return [v / max(float(np.linalg.norm(v)), 1e-12) for v in pooled]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out: list[np.ndarray] = []
        with _one_blas_thread():
            for start in range(0, len(texts), BATCH_TEXTS):
                out.extend(self._encode_batch(texts[start:start + BATCH_TEXTS]))
        return np.stack(out).astype(np.float32)


def _one_blas_thread():
    """One BLAS thread: these matrices are small, and OpenBLAS's worker threads made a 13-token query take 2 s
    instead of 0.1 s on 2 cores shared with other work."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up (it comes with scikit-learn, a sentence-transformers dependency)
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def load(path: Path) -> NumpyBert | None:
    """The numpy encoder of a sentence-transformers model folder, or None when it does not cover that model."""
    config = _covered(Path(path))
    return NumpyBert(Path(path), config) if config else None
