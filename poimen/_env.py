"""Offline defaults applied before any third-party import can reach the network, and where the log lives."""

import os
from pathlib import Path

_DEFAULTS = {
    # litellm fetches a model price map at import time unless told not to.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "DAGSTER_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    # Loading the embedding model must not draw progress bars over the CLI's output.
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TQDM_DISABLE": "1",
}


def offline_defaults() -> None:
    """Set the offline environment unless the user has chosen otherwise."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)


def default_root() -> Path:
    """The event log's folder: ``POIMEN_HOME``, else ``./.poimen`` (here, not in the log package, so a command
    that only needs the path — one a warm `mem serve --http` answers — does not load pyarrow to learn it)."""
    return Path(os.environ.get("POIMEN_HOME") or ".poimen")
