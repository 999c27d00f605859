"""``mem serve --http``: the warm read path as JSON on 127.0.0.1, and the lineage page ``/show/<sha>``.

Endpoints (GET with query parameters, or POST with a JSON object; the fields are the CLI's options):

- ``/lookup``  text, k, explain, lines      → ``{"hits": [hit, …]}`` (the shapes of ``mem lookup --json``)
- ``/context`` question, budget             → the shape of ``mem context --json``
- ``/ask``     question | query, budget, model, api_base, timeout → the shape of ``mem ask --json``
- ``/show/<sha>?kind=``                     → an HTML page of the lineage, read-only
- ``/health``                               → pid, index and settings (what the CLI checks before using it)

Nothing else: no SQL, no writes, no files beyond the index and the sources a lineage quotes. A bad request
gets ``{"error": "<one line>"}`` with status 400 (404 for an unknown path or sha). The standard library's
``ThreadingHTTPServer`` is enough here: one local user, JSON in and out, requests serialised on the warm
engines anyway, and no new dependency in the CLI's import path.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from poimen.errors import AmbiguousSha, PoimenError, ShaNotFound
from poimen.serve.client import clear_state, read_env, write_state
from poimen.serve.service import ReadService

HOST = "127.0.0.1"
# Each endpoint's fields, their types, and which are required: what a request may carry, and nothing else.
FIELDS: dict[str, dict[str, tuple[type, bool]]] = {
    "lookup": {"text": (str, True), "k": (int, False), "explain": (bool, False), "lines": (int, False)},
    "context": {"question": (str, True), "budget": (int, False)},
    "ask": {"question": (str, False), "query": (str, False), "budget": (int, False), "model": (str, False),
            "api_base": (str, False), "timeout": (float, False)},
}
MAX_BODY = 1 << 20


class BadRequest(Exception):
    pass


def _coerce(name: str, kind: type, value):
    """A field's value from JSON or a query string, as its type; anything else is a bad request naming it."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "0", "false", "no", ""):
            return value.lower() in ("1", "true", "yes")
    elif kind is str and isinstance(value, str):
        return value
    elif kind in (int, float) and not isinstance(value, bool):
        try:
            return kind(value)
        except (TypeError, ValueError):
            pass
    raise BadRequest(f"field {name!r}: expected {kind.__name__}, got {value!r}")


def parse(op: str, raw: dict) -> dict:
    fields = FIELDS[op]
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise BadRequest(f"/{op}: unknown field {unknown[0]!r} (fields: {', '.join(fields)})")
    missing = [n for n, (_, required) in fields.items() if required and n not in raw]
    if missing:
        raise BadRequest(f"/{op}: missing field {missing[0]!r}")
    params = {n: _coerce(n, fields[n][0], v) for n, v in raw.items()}
    for n in ("k", "lines", "budget"):
        if n in params and params[n] < 1:
            raise BadRequest(f"field {n!r}: must be at least 1")
    return params


class Handler(BaseHTTPRequestHandler):
    service: ReadService  # set on the class the server is made with
    served = 0  # reads answered (what the tests check delegation with)

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature; quiet: poimen's output only
        pass

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        self._route(url.path, query)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                raise BadRequest(f"request body over {MAX_BODY} bytes")
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
        except (ValueError, BadRequest) as exc:
            return self._json(400, {"error": str(exc) if isinstance(exc, BadRequest) else "the body is not JSON"})
        self._route(url.path, body)

    def _route(self, path: str, raw: dict) -> None:
        op = path.strip("/")
        try:
            if op == "health":
                s = self.service
                return self._json(200, {"pid": os.getpid(), "db": str(s.db_path.resolve()), "root": str(s.root),
                                        "env": read_env(), "served": Handler.served})
            if op.startswith("show/") and self.command == "GET":
                return self._page(op[len("show/"):], raw.get("kind") or None)
            if op not in FIELDS:
                return self._json(404, {"error": f"no endpoint {path!r} (lookup, context, ask, show/<sha>)"})
            params = parse(op, raw)
            with self.service.lock:
                result = getattr(self.service, op)(**params)
                Handler.served += 1
            self._json(200, {"hits": result} if op == "lookup" else result)
        except BadRequest as exc:
            self._json(400, {"error": str(exc)})
        except PoimenError as exc:
            self._json(400, {"error": str(exc), "type": type(exc).__name__})

    def _page(self, sha: str, kind: str | None) -> None:
        from poimen.serve.page import error_page, lineage_page

        try:
            with self.service.lock:
                lin = self.service.show(urllib.parse.unquote(sha), kind)
            self._send(200, "text/html; charset=utf-8", lineage_page(lin).encode())
        except (ShaNotFound, AmbiguousSha) as exc:
            self._send(404, "text/html; charset=utf-8", error_page(str(exc)).encode())
        except PoimenError as exc:
            self._send(400, "text/html; charset=utf-8", error_page(str(exc)).encode())

    def _json(self, status: int, body) -> None:
        self._send(status, "application/json", json.dumps(body, ensure_ascii=False).encode())

    def _send(self, status: int, ctype: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)


def serve(service: ReadService, port: int = 0, on_ready=None) -> None:
    """Listen on 127.0.0.1:``port`` (0: a free one), record it under the log root, serve ``service`` (warmed by
    the caller) until interrupted (Ctrl-C or SIGTERM), then remove the record."""
    handler = type("BoundHandler", (Handler,), {"service": service})
    httpd = ThreadingHTTPServer((HOST, port), handler)
    httpd.daemon_threads = True
    bound = httpd.server_address[1]

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    write_state(service.root, bound, service.db_path, getattr(service.embedder, "model_id", ""))
    try:
        if on_ready:
            on_ready(f"http://{HOST}:{bound}")
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        clear_state(service.root)
        httpd.server_close()
        sys.stderr.flush()

