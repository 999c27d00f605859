"""Offline defaults applied before any third-party import can reach the network."""

import os

_DEFAULTS = {
    # litellm fetches a model price map at import time unless told not to.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "DAGSTER_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def offline_defaults() -> None:
    """Set the offline environment unless the user has chosen otherwise."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)
