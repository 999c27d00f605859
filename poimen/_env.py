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
    that only needs the path — one a warm `mem serve --http` answers — does not load pyarrow to learn it).

    ``POIMEN_HOME`` is a local folder (or ``file://``): besides the log it holds what one machine derives from it
    (the index, the caches, the sources hint), which an object store cannot. A log on ``s3://`` or ``gs://`` is named
    where it is used (``--log``, ``EventLogResource(root=…, work_dir=…)``, ``Memory(root=…)``), so a URI here is
    refused in one line rather than read as a relative folder named ``s3:``."""
    home = os.environ.get("POIMEN_HOME") or ".poimen"
    if home.startswith("file://"):
        return Path(home[len("file://"):])
    if "://" in home:
        from poimen.errors import PoimenError

        raise PoimenError(f"POIMEN_HOME={home}: POIMEN_HOME is a local folder (the log with its index and caches); "
                          "put a log on an object store with --log (or EventLogResource(root=..., work_dir=...))")
    return Path(home)
