"""A scriptable OpenAI-compatible chat server on 127.0.0.1, for driving litellm over real HTTP.

Each POST to ``/v1/chat/completions`` takes the next scripted ``Action`` (or the
default one when the script is empty) and answers with it: a reply computed by
poimen's offline engine (optionally transformed: truncated, extra tags, unicode
junk), an HTTP error status with an optional ``Retry-After``, a hang longer than
the client's timeout, a body cut off mid-JSON, or a dropped connection. Every
request is recorded, so a test can count exactly how many HTTP calls litellm
made. The server binds loopback only, its handler threads are daemons, every
wait is bounded, and it stops answering (503) after ``max_requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def engine_reply(system: str, user: str) -> str:
    """What poimen's offline engine would answer: the fake model behaves like ``poimen/extractive``."""
    from poimen.llm.offline import respond

    return respond(system, user)


@dataclass(frozen=True)
class Action:
    """What the server does with one request.

    kind: ``reply`` (200 with ``text`` or the engine's reply passed through
    ``transform``), ``status`` (an error code, ``retry_after`` seconds as a
    header), ``hang`` (sleep ``delay`` before replying, past a client timeout),
    ``cut`` (a 200 whose JSON body stops half way), ``drop`` (close the socket
    without a response).
    """

    kind: str = "reply"
    text: str | None = None
    transform: Callable[[str], str] | None = None
    status: int = 500
    retry_after: float | None = None
    delay: float = 0.0


REPLY = Action()


def status(code: int, retry_after: float | None = None) -> Action:
    return Action(kind="status", status=code, retry_after=retry_after)


def text(reply: str) -> Action:
    return Action(text=reply)


def transformed(fn: Callable[[str], str]) -> Action:
    return Action(transform=fn)


def hang(seconds: float) -> Action:
    return Action(kind="hang", delay=seconds)


CUT = Action(kind="cut")
DROP = Action(kind="drop")


@dataclass
class Request:
    model: str
    system: str
    user: str
    action: str
    at: float
    payload: dict = field(default_factory=dict)  # the request body as sent (grammar, response_format, …)


@dataclass
class FakeOpenAI:
    """Start with ``with FakeOpenAI() as server:``; litellm model ``openai/<any>`` and ``api_base=server.api_base``."""

    delay: float = 0.0  # added to every reply: a slow model, so a kill can land mid-run
    default: Action = REPLY
    max_requests: int = 100_000
    max_hang: float = 30.0
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self):
        self._script: deque[Action] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # -- scripting -----------------------------------------------------------
    def script(self, *actions: Action) -> "FakeOpenAI":
        with self._lock:
            self._script.extend(actions)
        return self

    @property
    def calls(self) -> int:
        return len(self.requests)

    def reset(self) -> None:
        """Back to a fresh server's behaviour: no script, no requests seen, the default reply."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.default = REPLY

    def _next(self, model: str, system: str, user: str, payload: dict | None = None) -> tuple[Action, int]:
        with self._lock:
            action = self._script.popleft() if self._script else self.default
            if len(self.requests) >= self.max_requests:
                action = status(503)
            self.requests.append(Request(model, system, user, action.kind, time.monotonic(), payload or {}))
            return action, len(self.requests)

    # -- lifecycle -----------------------------------------------------------
    @property
    def api_base(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "FakeOpenAI":
        handler = _handler_for(self)
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def sleep(self, seconds: float) -> None:
        self._stopping.wait(min(seconds, self.max_hang))


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # a client hanging up mid-reply is a scripted fault
        pass


def completion_body(model: str, content: str, n: int) -> dict:
    return {
        "id": f"chatcmpl-fake-{n}", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as real model servers set it: the headers and the body go out as two writes, and with Nagle's
        # algorithm the body waited for the client's delayed ACK of the headers, 40 ms added to every call.
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None, length: int | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up first (its timeout)
                self.close_connection = True

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(size) or b"{}")
            messages = payload.get("messages", [])
            system = "\n".join(m.get("content", "") for m in messages if m.get("role") == "system")
            user = "\n".join(m.get("content", "") for m in messages if m.get("role") == "user")
            model = payload.get("model", "fake")
            action, n = server._next(model, system, user, payload)
            if server.delay:
                server.sleep(server.delay)
            if action.kind == "hang":
                server.sleep(action.delay)
            if action.kind == "status":
                headers = {"Retry-After": f"{action.retry_after:g}"} if action.retry_after is not None else {}
                body = json.dumps({"error": {"message": f"fake status {action.status}", "type": "fake_error",
                                             "code": str(action.status)}}).encode()
                self._send(action.status, body, headers)
                return
            if action.kind == "drop":
                self.close_connection = True
                self.connection.close()
                return
            content = action.text if action.text is not None else engine_reply(system, user)
            if action.transform is not None:
                content = action.transform(content)
            body = json.dumps(completion_body(model, content, n), ensure_ascii=False).encode("utf-8")
            if action.kind == "cut":
                # Announce the whole body, send half, hang up: a truncated HTTP response.
                self.close_connection = True
                self._send(200, body[: len(body) // 2], length=len(body))
                self.connection.close()
                return
            self._send(200, body)

        def do_GET(self) -> None:  # /v1/models, for clients that probe
            self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())

    return Handler
