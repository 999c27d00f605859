"""``mem serve --http``: the warm read path as JSON on 127.0.0.1, and the lineage page ``/show/<sha>``.

Endpoints (the fields are the CLI's options; lookup and context take GET with query parameters or POST with a
JSON object; ``/ask`` calls a model, so it takes POST only):

- ``/lookup``  text, k, explain, lines      → ``{"hits": [hit, …]}`` (the shapes of ``mem lookup --json``)
- ``/context`` question, budget             → the shape of ``mem context --json``
- ``/ask``     question | query, budget     → the shape of ``mem ask --json`` (POST)
- ``/show/<sha>?kind=``                     → an HTML page of the lineage, read-only (GET)
- ``/health``                               → pid, index and settings (what the CLI checks before using it)

The server holds its own keys. ``/ask`` calls the model the server was started with (``--model``,
``--api-base``, ``--timeout``, else the ``POIMEN_*`` settings at start) with the server's credentials; a request
naming a model, an api_base, a timeout or a key gets 400 naming the field, before anything is called. Every
request, ``/health`` too, must carry ``Authorization: Bearer <token>``: the token ``mem serve`` generated (or read
from ``--token-file`` / ``POIMEN_SERVE_TOKEN``) and stored in ``<log>/serve.json``, mode 0600, where the CLI reads
it; else 401. A browser opens ``/show/<sha>?token=<token>`` once: the reply sets the token as an HttpOnly,
SameSite=Strict cookie scoped to the pages and redirects to the same page without it. The Host header must be
``127.0.0.1:<port>`` or ``localhost:<port>`` and an Origin, when sent, this same origin (a page elsewhere, or a
DNS-rebound name, gets 403). Pages show only the ``--ns`` namespace's typed-store writes; ``/show`` needs at least
``MIN_PREFIX`` hex digits, and a short, unknown or ambiguous prefix gets the same 404, "no such node", so error
messages walk no shas.

Nothing else: no SQL, no writes, no files beyond the index and the sources a lineage quotes. A bad request
gets ``{"error": "<one line>"}`` with status 400 (404 for an unknown path or sha). The standard library's
``ThreadingHTTPServer`` is enough here: one local user, JSON in and out, requests serialised on the warm
engines anyway, and no new dependency in the CLI's import path.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import signal
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from poimen.errors import AmbiguousSha, PoimenError, ShaNotFound
from poimen.serve.client import clear_state, model_settings, read_env, write_state
from poimen.serve.service import ReadService

HOST = "127.0.0.1"
# Each endpoint's fields, their types, and which are required: what a request may carry, and nothing else.
FIELDS: dict[str, dict[str, tuple[type, bool]]] = {
    "lookup": {"text": (str, True), "k": (int, False), "explain": (bool, False), "lines": (int, False)},
    "context": {"question": (str, True), "budget": (int, False)},
    "ask": {"question": (str, False), "query": (str, False), "budget": (int, False)},
}
POST_ONLY = frozenset({"ask"})  # what calls a model: a plain link, an <img>, a GET from anywhere never triggers it
# Fields that would choose or reach the model, or carry a key: the server's own settings, never a request's.
SERVER_SETTINGS = frozenset({"model", "api_base", "timeout", "constrain", "cache_dir", "api_key", "key", "token",
                             "authorization", "headers", "extra_headers"})
MIN_PREFIX = 8
NO_SUCH_NODE = "no such node"
_HEX = re.compile(r"^[0-9a-fA-F]+$")
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
    settings = sorted(k for k in raw if k.lower() in SERVER_SETTINGS)
    if settings:
        raise BadRequest(f"/{op}: field {settings[0]!r} is refused: the model, its api_base, timeout and keys are "
                         "the server's own settings (mem serve --http --model/--api-base/--timeout), never a request's")
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
    service: ReadService  # set on the class the server is made with, with the token and the bound port
    token: str
    port: int
    served = 0  # reads answered (what the tests check delegation with)

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature; quiet: poimen's output only
        pass

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        if not self._admitted(url.path, query):
            return
        self._route(url.path, query)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if not self._admitted(url.path, {}):
            return
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

    # -- who may ask ------------------------------------------------------------------------------------------
    def _admitted(self, path: str, query: dict) -> bool:
        """Host, then Origin (403), then the token (401); a reply is sent for a request that is not admitted."""
        host = self.headers.get("Host", "")
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            self._json(403, {"error": f"Host {host!r} refused: this server answers 127.0.0.1:{self.port} only"})
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{host}":
            self._json(403, {"error": f"Origin {origin!r} refused: only http://{host} itself may call this server"})
            return False
        page = path.startswith("/show/") and self.command == "GET"
        if page and "token" in query:  # a browser's first visit: trade the token in the URL for a cookie
            given = query.pop("token")
            if self._valid(given):
                rest = urllib.parse.urlencode(query)
                self._redirect(path + (f"?{rest}" if rest else ""), given)
                return False
        elif self._valid(self._bearer()) or (page and self._valid(self._cookie())):
            return True
        self._json(401, {"error": "missing or wrong token: send Authorization: Bearer <token>, the token mem serve "
                                  "stored in <log>/serve.json"}, {"WWW-Authenticate": "Bearer"})
        return False

    def _valid(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _bearer(self) -> str | None:
        scheme, _, value = (self.headers.get("Authorization") or "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" else None

    def _cookie_name(self) -> str:
        return f"poimen_token_{self.port}"  # cookies ignore ports: one name per server, so two never clobber

    def _cookie(self) -> str | None:
        from http.cookies import CookieError, SimpleCookie

        try:
            jar = SimpleCookie(self.headers.get("Cookie") or "")
        except CookieError:
            return None
        morsel = jar.get(self._cookie_name())
        return morsel.value if morsel else None

    # -- what they get ----------------------------------------------------------------------------------------
    def _route(self, path: str, raw: dict) -> None:
        op = path.strip("/")
        try:
            if op == "health":
                s = self.service
                return self._json(200, {"pid": os.getpid(), "db": str(s.db_path.resolve()), "root": str(s.root),
                                        "env": read_env(), "namespace": s.namespace, "served": Handler.served})
            if op.startswith("show/"):
                if self.command != "GET":
                    return self._json(405, {"error": "/show/<sha> is a page: GET only"}, {"Allow": "GET"})
                return self._page(urllib.parse.unquote(op[len("show/"):]), raw.get("kind") or None)
            if op not in FIELDS:
                return self._json(404, {"error": f"no endpoint {path!r} (lookup, context, ask, show/<sha>)"})
            if op in POST_ONLY and self.command != "POST":
                return self._json(405, {"error": f"/{op} calls a model: POST a JSON object"}, {"Allow": "POST"})
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
            if len(sha) < MIN_PREFIX or not _HEX.match(sha):
                raise ShaNotFound(sha)
            with self.service.lock:
                lin = self.service.show(sha, kind)
            self._send(200, "text/html; charset=utf-8", lineage_page(lin).encode())
        except (ShaNotFound, AmbiguousSha):  # one reply for all: which prefixes exist is not for the asking
            self._send(404, "text/html; charset=utf-8", error_page(NO_SUCH_NODE).encode())
        except PoimenError as exc:
            self._send(400, "text/html; charset=utf-8", error_page(str(exc)).encode())

    def _redirect(self, location: str, token: str) -> None:
        self._send(303, "text/plain; charset=utf-8", b"", {
            "Location": location,
            "Set-Cookie": f"{self._cookie_name()}={token}; Path=/show; HttpOnly; SameSite=Strict",
            "Cache-Control": "no-store"})

    def _json(self, status: int, body, headers: dict[str, str] | None = None) -> None:
        self._send(status, "application/json", json.dumps(body, ensure_ascii=False).encode(), headers)

    def _send(self, status: int, ctype: str, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def make_server(service: ReadService, token: str, port: int = 0) -> tuple[ThreadingHTTPServer, Path]:
    """A server bound to 127.0.0.1:``port`` (0: a free one) answering for ``service`` with ``token``, recorded
    under the log root (the path of the record returned); the caller serves it, and clears the record."""
    if not token:
        raise ValueError("serve: a token is required")
    httpd = ThreadingHTTPServer((HOST, port), Handler)
    bound = httpd.server_address[1]
    httpd.RequestHandlerClass = type("BoundHandler", (Handler,), {"service": service, "token": token, "port": bound})
    httpd.daemon_threads = True
    try:
        state = write_state(service.root, bound, service.db_path, getattr(service.embedder, "model_id", ""), token,
                            model_settings(service.model), service.namespace or "")
    except BaseException:
        httpd.server_close()
        raise
    return httpd, state


def serve(service: ReadService, token: str, port: int = 0, on_ready=None) -> None:
    """Serve ``service`` (warmed by the caller) with ``token`` on 127.0.0.1:``port`` until interrupted (Ctrl-C
    or SIGTERM), then remove the record; ``on_ready(url, record path)`` once it listens."""
    httpd, state = make_server(service, token, port)

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        if on_ready:
            on_ready(f"http://{HOST}:{httpd.server_address[1]}", state)
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        clear_state(service.root)
        httpd.server_close()
        sys.stderr.flush()
