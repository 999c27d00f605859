"""How a ``mem`` command finds a running ``mem serve --http`` and hands it the read, or reads in-process.

The server writes ``<log root>/serve.json`` (mode 0600: its pid, port, index, the settings that shape a result,
and the bearer token every request must carry); a command uses that server only when the file names the same
index, the caller's settings (``poimen.settings.READ_SETTINGS``, and for ``ask`` the model the caller would use)
match the server's,
and a quick ``/health`` request, sent with the token, is answered by that pid. Anything else — no file, a dead
pid, a port now held by someone else, a server error — and the command reads in-process, silently: the server is
an accelerator, never a dependency, and an error is then raised by the same code, with the same hint, either way.
``POIMEN_NO_SERVER=1`` turns the lookup off.

A request never names a model, an api_base, a timeout or a key: the server calls the model it was started with.
So a ``mem ask --model X`` is handed over only when X (and its api_base and timeout) is what the server uses.
"""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from typing import Any

from poimen.errors import ConfigError
from poimen.settings import ModelConfig, no_server, read_settings

STATE_FILE = "serve.json"
HEALTH_TIMEOUT = 0.5  # seconds: a live server on loopback answers /health at once
# What chooses and reaches ``ask``'s model: the server's own settings, never a request's fields.
MODEL_FIELDS = ("model", "api_base", "timeout")


def read_env() -> dict[str, str]:
    """The settings a read depends on besides its own fields: a server answers only callers configured like it."""
    return read_settings()


def model_settings(config: ModelConfig = ModelConfig()) -> dict[str, Any]:
    """The model ``ask`` would call with ``config``, its unset fields resolved as ``client_for`` resolves them: what
    the server records, and what a caller is compared with (no key: that stays put)."""
    try:
        config = config.resolved()
    except ConfigError as exc:  # a bad POIMEN_TIMEOUT: compared as said; the model client reports it in process
        return {"unresolved": str(exc)}
    return {"model": config.model, "api_base": config.api_base or "", "timeout": config.timeout}


def state_path(root: Path) -> Path:
    return Path(root) / STATE_FILE


def write_state(root: Path, port: int, db_path: Path, embedder_id: str, token: str,
                model: dict[str, Any] | None = None, namespace: str = "") -> Path:
    """Record this process as the log's server (temp file, then rename: a reader never sees half a file). The
    file holds the token, so it is created 0600: only this user's processes can send authenticated requests."""
    path = state_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"pid": os.getpid(), "port": port, "db": str(Path(db_path).resolve()), "embedder": embedder_id,
                   "env": read_env(), "model": model if model is not None else model_settings(),
                   "namespace": namespace, "token": token}, fh)
    tmp.replace(path)
    return path


def clear_state(root: Path) -> None:
    """Remove the state file if it is still this process's (a newer server may have replaced it)."""
    path = state_path(root)
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def server_for(root: Path, db_path: Path, embedder_id: str | None = None) -> tuple[str, str] | None:
    """``(base URL, token)`` of a live server for this index, these settings and (when given) this query
    embedder; None when there is none."""
    state = _state(root)
    if state is None:
        return None
    pid, port, db, env, token = state["pid"], state["port"], state["db"], state["env"], state["token"]
    if db != str(Path(db_path).resolve()) or env != read_env() or not _alive(pid):
        return None
    if embedder_id is not None and embedder_id != state.get("embedder"):
        return None
    base = f"http://127.0.0.1:{port}"
    health = _request(f"{base}/health", None, HEALTH_TIMEOUT, token)
    ok = isinstance(health, dict) and health.get("pid") == pid and health.get("db") == db
    return (base, token) if ok else None


def _state(root: Path) -> dict | None:
    if no_server():
        return None
    try:
        state = json.loads(state_path(root).read_text())
        state["pid"], state["port"] = int(state["pid"]), int(state["port"])
        if not all(isinstance(state[k], t) for k, t in (("db", str), ("env", dict), ("token", str))):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return state


def _request(url: str, body: dict | None, timeout: float | None, token: str) -> Any:
    """The JSON a 200 reply carries; None for anything else (no answer, another status, not JSON).

    ``http.client`` rather than ``urllib.request``: the server is always on loopback and plain HTTP, and
    urllib's import (its handlers, ``tempfile``, ``email``...) is a sizeable share of what a warm ``mem lookup``
    costs before the request is even sent."""
    host, _, rest = url.removeprefix("http://").partition("/")
    name, _, port = host.rpartition(":")
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(name, int(port), timeout=timeout)
    try:
        conn.request("POST" if data is not None else "GET", "/" + rest, body=data, headers=headers)
        resp = conn.getresponse()
        return json.loads(resp.read()) if resp.status == 200 else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def remote(root: Path, db_path: Path, op: str, params: dict, embedder_id: str | None = None) -> Any:
    """The shape of ``op`` (lookup, context, ask) for ``params`` from a running server for this index (and, when
    given, this query embedder); None when there is none, it calls another model than ``params`` would, or it
    failed: the caller then computes it itself."""
    params = dict(params)
    wanted = model_settings(ModelConfig(*(params.pop(k, None) for k in MODEL_FIELDS))) if op == "ask" else None
    if wanted is not None:
        state = _state(root)
        if state is None or state.get("model") != wanted:
            return None
    found = server_for(root, db_path, embedder_id)
    if found is None:
        return None
    base, token = found
    reply = _request(f"{base}/{op}", {k: v for k, v in params.items() if v is not None}, None, token)
    if not isinstance(reply, dict) or "error" in reply:
        return None
    return reply["hits"] if op == "lookup" else reply


def read(root: Path, db_path: Path, op: str, params: dict, embedder=None) -> Any:
    """The shape of ``op`` (lookup, context, ask) for ``params``: from a running server when there is one for
    this index (and ``embedder``, when given, is the model the server queries with), else computed here."""
    shape = remote(root, db_path, op, params, None if embedder is None else embedder.model_id)
    if shape is not None:
        return shape
    from poimen.serve.service import ReadService

    params = dict(params)
    model = ModelConfig(*(params.pop(k, None) for k in MODEL_FIELDS)) if op == "ask" else ModelConfig()
    return getattr(ReadService(root, db_path, embedder, model=model), op)(**params)
