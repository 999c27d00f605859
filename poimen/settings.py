"""poimen's settings: the one reader of the environment, and of where an event log lives.

Every ``POIMEN_*`` variable is named here and read here, nowhere else (``tests/test_settings_homes.py`` holds it):
the CLI, the Python facade, the read server and the Dagster resources all resolve an unset option through these
functions, so each entry gets the same default. Three rules live here and only here:

- the offline environment applied before any third-party import can reach the network (``offline_defaults``);
- the log-location rule: what a ``--log``, a ``root=`` or ``POIMEN_HOME`` names (``log_root``, ``local_folder``);
- the model config, what chooses and reaches a model (``ModelConfig``), with its defaults.

Standard library only, and nothing of poimen but its errors: ``mem``'s front door and ``import poimen`` load it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from poimen.errors import ConfigError, PoimenError

# The variables, each with what it sets.
HOME = "POIMEN_HOME"  # the local folder of the log, with its index and caches
NAMESPACE = "POIMEN_NAMESPACE"  # the typed-memory namespace of every entry that names none
MODEL = "POIMEN_MODEL"  # a litellm model string; unset: the offline engine
API_BASE = "POIMEN_API_BASE"
API_KEY = "POIMEN_API_KEY"  # the Dagster resource's key (the CLI takes the provider's own variable)
TIMEOUT = "POIMEN_TIMEOUT"  # seconds a model call may take
CONSTRAIN = "POIMEN_CONSTRAIN"  # constrained decoding of gate replies
EMBEDDER = "POIMEN_EMBEDDER"
PROMPTS = "POIMEN_PROMPTS"  # a folder of prompt templates instead of the repository's prompts/
CHUNK_TOKENS = "POIMEN_CHUNK_TOKENS"
INCIDENTS = "POIMEN_INCIDENTS"  # 0/off: L1 builds card no incidents (on by default)
DB = "POIMEN_DB"  # the Dagster build's DuckDB index
SOURCES = "POIMEN_SOURCES"
REFERENCE = "POIMEN_REFERENCE"
QUERIES = "POIMEN_QUERIES"
STORE_WAIT = "POIMEN_STORE_WAIT"  # seconds a typed-store write waits for a busy log
NO_SERVER = "POIMEN_NO_SERVER"  # set: the CLI never hands a read to a running `mem serve --http`
SERVE_TOKEN = "POIMEN_SERVE_TOKEN"
SQL_MEMORY_LIMIT = "POIMEN_SQL_MEMORY_LIMIT"
SQL_TIMEOUT = "POIMEN_SQL_TIMEOUT"
# What shapes a read besides its own fields: a running server answers only a caller whose values match its own.
READ_SETTINGS = (MODEL, API_BASE, TIMEOUT, CONSTRAIN, EMBEDDER, PROMPTS)

DEFAULT_HOME = ".poimen"
# One namespace for every entry that names none. "default", not the pipeline's former "team": a namespace is a user
# or an agent (docs/typed-memory.md), and an unnamed one should say that nobody was named rather than claim a team;
# a deployment that files the pipeline's memories as the team's sets POIMEN_NAMESPACE=team, and every entry follows.
DEFAULT_NAMESPACE = "default"
DEFAULT_MODEL = "poimen/extractive"
# Seconds a call may take: sized for a local model on CPU (a 1.5B model took 30-155 s a gate call on 2 cores).
DEFAULT_TIMEOUT = 600.0
DEFAULT_STORE_WAIT = 10.0

_OFFLINE = {
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
    for key, value in _OFFLINE.items():
        os.environ.setdefault(key, value)


def _get(name: str) -> str:
    """The variable as set; "" when it is not."""
    return os.environ.get(name, "")


def _path(name: str) -> Path | None:
    """The variable as a path; None when it is not set."""
    raw = _get(name).strip()
    return Path(raw) if raw else None


def is_set(name: str) -> bool:
    """True when the variable is set to something (the Dagster code location names only those as ``dg.EnvVar``)."""
    return bool(_get(name))


def read_settings() -> dict[str, str]:
    """The values of ``READ_SETTINGS`` as set ("" unset): what a server records and a caller is compared with."""
    return {name: _get(name) for name in READ_SETTINGS}


# -- where the log lives -------------------------------------------------------------------------------------------

OBJECT_STORES = ("s3", "gs")


def default_root() -> Path:
    """The event log's folder: ``POIMEN_HOME``, else ``./.poimen``.

    ``POIMEN_HOME`` is a local folder (or ``file://``): besides the log it holds what one machine derives from it
    (the index, the caches, the sources hint), which an object store cannot. A log on ``s3://`` or ``gs://`` is named
    where it is used (``--log``, ``EventLogResource(root=…, work_dir=…)``, ``Memory(root=…)``), so a URI here is
    refused in one line rather than read as a relative folder named ``s3:``."""
    home = _get(HOME) or DEFAULT_HOME
    if home.startswith("file://"):
        return Path(home[len("file://"):])
    if "://" in home:
        raise PoimenError(f"{HOME}={home}: {HOME} is a local folder (the log with its index and caches); "
                          "put a log on an object store with --log (or EventLogResource(root=..., work_dir=...))")
    return Path(home)


def log_root(value: str | Path | None = None) -> Path | str:
    """A log root as the log takes it, from what a ``--log``, a ``root=`` or a resource names.

    A local folder (a path, or ``file://``) comes back as a ``Path``; an object store (``s3://bucket/prefix``,
    ``gs://bucket/prefix``) as the URI, as written; nothing, as ``default_root()``. Any other URI is refused in one
    line naming it: read as a path, ``s3://b/p`` was the local folder ``s3:/b/p``."""
    if value is None or str(value) == "":
        return default_root()
    if isinstance(value, Path):
        return value
    if "://" not in value:
        return Path(value).expanduser()
    scheme = value.split("://", 1)[0]
    if scheme == "file":
        return Path(value[len("file://"):])
    if scheme in OBJECT_STORES:
        return value
    raise PoimenError(f"event log root {value}: only local folders, file://, s3:// and gs:// are supported")


def local_dir(root: str | Path) -> Path | None:
    """The folder of a local log root (a path or ``file://``); None for a log on an object store, beside which
    nothing of one machine (an index, a cache, a hint) is kept."""
    text = str(root)
    if text.startswith("file://"):
        return Path(text[len("file://"):])
    return None if "://" in text else Path(text).expanduser()


def local_folder(root: str | Path, needs: str) -> Path:
    """The folder of a local log root (a path or ``file://``); for an object store URI, one line saying that
    ``needs`` (what the caller keeps beside the log) wants a local folder."""
    folder = local_dir(root)
    if folder is None:
        raise PoimenError(f"event log root {root}: {needs} needs a local folder, not an object store")
    return folder


# -- the model -----------------------------------------------------------------------------------------------------

def _timeout() -> float:
    """``POIMEN_TIMEOUT`` seconds if set, else ``DEFAULT_TIMEOUT``; a bad value is one line naming the variable."""
    raw = _get(TIMEOUT)
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ConfigError(f"{TIMEOUT}={raw!r}: expected a number of seconds above 0")
    return value


@dataclass(frozen=True)
class ModelConfig:
    """Which model answers and how to reach it: the one shape the CLI's flags, ``RunRequest``, the read service, the
    Dagster ``LLMResource`` and the bench all fill, and ``client_for`` builds a client from.

    Unset fields are resolved (``resolved()``) when a client is built: ``POIMEN_MODEL`` (else the offline engine),
    ``POIMEN_API_BASE``, ``POIMEN_TIMEOUT`` (else 600 s) and ``POIMEN_CONSTRAIN``. ``api_key`` is never read from
    the environment here (the provider's own variable, e.g. ``OPENAI_API_KEY``, is the client's); ``cache_dir``
    caches the replies of a model that is called (not the offline engine's) by prompt sha.
    """

    model: str | None = None
    api_base: str | None = None
    timeout: float | None = None
    constrain: str | None = None
    api_key: str | None = None
    cache_dir: Path | None = None

    def resolved(self) -> "ModelConfig":
        """This config with every unset field taken from its variable or default (a bad timeout: ConfigError)."""
        return replace(self, model=self.model or _get(MODEL) or DEFAULT_MODEL,
                       api_base=self.api_base or _get(API_BASE) or None, timeout=self.timeout or _timeout(),
                       constrain=self.constrain or _get(CONSTRAIN) or None)


def model_name(model: str | None = None) -> str:
    """The model a config would call: ``model``, else ``POIMEN_MODEL``, else the offline engine."""
    return model or _get(MODEL) or DEFAULT_MODEL


def api_key() -> str | None:
    """``POIMEN_API_KEY``: the key the Dagster model resource sends when its config names none."""
    return _get(API_KEY) or None


# -- everything else -----------------------------------------------------------------------------------------------

def namespace(given: str | None = None) -> str:
    """The typed-memory namespace: ``given``, else ``POIMEN_NAMESPACE``, else ``DEFAULT_NAMESPACE``; the same for the
    CLI, the facade, the servers and the pipeline."""
    return given or _get(NAMESPACE) or DEFAULT_NAMESPACE


def embedder() -> str:
    """The embedder ``POIMEN_EMBEDDER`` names ("" when unset: each caller's own default applies)."""
    return _get(EMBEDDER).strip()


def prompts_dir() -> Path | None:
    """``POIMEN_PROMPTS``, the folder of prompt templates to use instead of the repository's; None when unset."""
    return _path(PROMPTS)


def chunk_tokens(default: int) -> int:
    """The chunk bound in tokens: ``POIMEN_CHUNK_TOKENS``, else ``default``; a bad value is one line naming it."""
    raw = _get(CHUNK_TOKENS)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"${CHUNK_TOKENS}={raw!r}: expected a whole number") from None


_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")


def incidents() -> bool:
    """Whether an L1 build cards its sources' incidents: ``POIMEN_INCIDENTS``, on unless set to 0/false/no/off; any
    other value is one line naming it."""
    raw = _get(INCIDENTS).strip().lower()
    if not raw or raw in _ON:
        return True
    if raw in _OFF:
        return False
    raise ConfigError(f"${INCIDENTS}={raw!r}: expected on or off (1/0, true/false, yes/no)")


def database() -> Path | None:
    """``POIMEN_DB``, the Dagster build's DuckDB index; None when unset (the index beside the log)."""
    return _path(DB)


def sources() -> Path | None:
    """``POIMEN_SOURCES``: the folder a build reads its sources from (and stream ids are relative to)."""
    return _path(SOURCES)


def reference() -> Path | None:
    """``POIMEN_REFERENCE``: the folder of reference documents a build indexes directly."""
    return _path(REFERENCE)


def queries() -> Path | None:
    """``POIMEN_QUERIES``: the standing queries' file of a build."""
    return _path(QUERIES)


def store_wait() -> float:
    """Seconds a typed-store write waits for a busy log: ``POIMEN_STORE_WAIT``, else 10 (a bad value: 10)."""
    raw = _get(STORE_WAIT)
    try:
        return float(raw) if raw else DEFAULT_STORE_WAIT
    except ValueError:
        return DEFAULT_STORE_WAIT


def no_server() -> bool:
    """``POIMEN_NO_SERVER`` is set: never hand a read to a running server."""
    return is_set(NO_SERVER)


def serve_token() -> str:
    """``POIMEN_SERVE_TOKEN``: the bearer token `mem serve --http` takes when no ``--token-file`` names one."""
    return _get(SERVE_TOKEN).strip()
