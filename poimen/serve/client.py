"""How a ``mem`` command finds a running ``mem serve --http`` and hands it the read, or reads in-process.

The server writes ``<log root>/serve.json`` (its pid, port, index and the settings that shape a result); a
command uses that server only when the file names the same index, the caller's settings (``READ_ENV``) match
the server's, and a quick ``/health`` request is answered by that pid. Anything else — no file, a dead pid, a
port now held by someone else, a server error — and the command reads in-process, silently: the server is an
accelerator, never a dependency, and an error is then raised by the same code, with the same hint, either way.
``POIMEN_NO_SERVER=1`` turns the lookup off.
"""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from typing import Any

STATE_FILE = "serve.json"
HEALTH_TIMEOUT = 0.5  # seconds: a live server on loopback answers /health at once
# Settings a read depends on besides its own fields: a server answers only callers configured like it.
READ_ENV = ("POIMEN_MODEL", "POIMEN_API_BASE", "POIMEN_TIMEOUT", "POIMEN_CONSTRAIN", "POIMEN_EMBEDDER",
            "POIMEN_PROMPTS")


def read_env() -> dict[str, str]:
    return {k: os.environ.get(k, "") for k in READ_ENV}


def state_path(root: Path) -> Path:
    return Path(root) / STATE_FILE


def write_state(root: Path, port: int, db_path: Path, embedder_id: str) -> Path:
    """Record this process as the log's server (temp file, then rename: a reader never sees half a file)."""
    path = state_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "port": port, "db": str(Path(db_path).resolve()),
                               "embedder": embedder_id, "env": read_env()}))
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


def server_for(root: Path, db_path: Path, embedder_id: str | None = None) -> str | None:
    """The base URL of a live server for this index, these settings and (when given) this query embedder."""
    if os.environ.get("POIMEN_NO_SERVER"):
        return None
    try:
        state = json.loads(state_path(root).read_text())
        pid, port, db, env = int(state["pid"]), int(state["port"]), state["db"], state["env"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if db != str(Path(db_path).resolve()) or env != read_env() or not _alive(pid):
        return None
    if embedder_id is not None and embedder_id != state.get("embedder"):
        return None
    base = f"http://127.0.0.1:{port}"
    health = _request(f"{base}/health", None, HEALTH_TIMEOUT)
    return base if health is not None and health.get("pid") == pid and health.get("db") == db else None


def _request(url: str, body: dict | None, timeout: float | None) -> Any:
    """The JSON a 200 reply carries; None for anything else (no answer, another status, not JSON).

    ``http.client`` rather than ``urllib.request``: the server is always on loopback and plain HTTP, and
    urllib's import (its handlers, ``tempfile``, ``email``...) is a sizeable share of what a warm ``mem lookup``
    costs before the request is even sent."""
    host, _, rest = url.removeprefix("http://").partition("/")
    name, _, port = host.rpartition(":")
    data = json.dumps(body).encode() if body is not None else None
    conn = http.client.HTTPConnection(name, int(port), timeout=timeout)
    try:
        conn.request("POST" if data is not None else "GET", "/" + rest, body=data,
                     headers={"Content-Type": "application/json"} if data is not None else {})
        resp = conn.getresponse()
        return json.loads(resp.read()) if resp.status == 200 else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def remote(root: Path, db_path: Path, op: str, params: dict, embedder_id: str | None = None) -> Any:
    """The shape of ``op`` (lookup, context, ask) for ``params`` from a running server for this index (and, when
    given, this query embedder); None when there is none, or it failed: the caller then computes it itself."""
    base = server_for(root, db_path, embedder_id)
    if base is None:
        return None
    reply = _request(f"{base}/{op}", {k: v for k, v in params.items() if v is not None}, None)
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

    return getattr(ReadService(root, db_path, embedder), op)(**params)
