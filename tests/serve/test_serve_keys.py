"""``mem serve --http`` holds its own keys: a request cannot choose the model, reach another endpoint or carry a
key; every request needs the token; a foreign Host or Origin is refused; what calls a model is POST-only; and
``/show`` serves only the server's namespace, with no way to walk shas through its replies."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from lineage_helpers import build
from typed_helpers import memory

from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections, write_manifest
from poimen.serve.client import clear_state, remote, state_path
from poimen.serve.http import make_server
from poimen.serve.service import ReadService
from poimen.settings import ModelConfig
from poimen.testing.openai_server import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
QUESTION = "how was the 413 on imports fixed?"
SECRET_KEY = "sk-test-the-servers-own-key"
TOKEN = "test-token-" + "x" * 32


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The lineage fixture's log with one typed-store write in each of two namespaces, indexed."""
    log, db, src = build(tmp_path_factory.mktemp("keys"))
    memory(log, "dana").remember("Dana prefers phone contact; account PIN hint is blue-falcon.")
    memory(log, "erin").remember("Erin's private note: the staging password rotates on Fridays.")
    stats = build_projections(log, db, HashEmbedder())
    write_manifest(log, stats, stats.row_hashes)
    with duckdb.connect(str(db), read_only=True) as con:
        shas = dict(con.execute("SELECT namespace, sha FROM store_item").fetchall())
    return log, db, src, shas


@pytest.fixture(scope="module")
def model():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(scope="module")
def listener():
    """A socket on 127.0.0.1 that only records whether anything connected: where an attacker would point /ask."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.5)

    def connected() -> bool:
        try:
            conn, _ = sock.accept()
        except TimeoutError:
            return False
        conn.close()
        return True

    yield sock.getsockname()[1], connected
    sock.close()


@pytest.fixture(scope="module")
def server(built, model):
    """The server in this process (a thread), as ``mem serve --http --ns dana --model … --api-base …`` makes it,
    with the server's own key in its environment."""
    log, db, src, _ = built
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", SECRET_KEY)
    service = ReadService(log, db, sources=[src], model=ModelConfig("openai/fake-served", model.api_base, 30),
                          namespace="dana")
    service.warm()
    httpd, _ = make_server(service, TOKEN)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        clear_state(log)
        mp.undo()
        thread.join(timeout=10)


def call(port: int, method: str, path: str, body: dict | None = None, token: str | None = TOKEN,
         headers: dict | None = None) -> tuple[int, dict | str, http.client.HTTPResponse]:
    hdrs = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    data = json.dumps(body).encode() if body is not None else None
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read().decode()
    finally:
        conn.close()
    ctype = resp.headers.get("Content-Type", "")
    return resp.status, json.loads(raw) if ctype == "application/json" else raw, resp


def test_ask_takes_no_model_endpoint_or_key_from_a_request(server, model, listener):
    port, connected = listener
    attacker = f"http://127.0.0.1:{port}/v1"
    model.reset()
    for field, value in [("api_base", attacker), ("model", "openai/attacker"), ("timeout", 1), ("api_key", "sk-x"),
                         ("API_BASE", attacker)]:
        status, body, _ = call(server, "POST", "/ask", {"question": QUESTION, field: value})
        assert status == 400 and f"field {field!r}" in body["error"], (field, body)
    status, body, resp = call(server, "GET", f"/ask?question=x&api_base={attacker}&model=openai/attacker")
    assert status == 405 and resp.headers["Allow"] == "POST", body
    status, body, _ = call(server, "GET", "/ask?question=x")
    assert status == 405  # a plain GET never calls a model, whatever it carries
    assert not connected() and model.calls == 0
    # The control: a valid /ask does call a model, the one the server was started with, and only that one.
    status, body, _ = call(server, "POST", "/ask", {"question": QUESTION, "budget": 300})
    assert status == 200 and body["text"] and body["model_id"] == "openai/fake-served" and model.calls >= 1, body
    assert model.requests[0].model == "fake-served"
    assert not connected()


def test_every_endpoint_needs_the_token(server, built):
    sha = built[3]["dana"]
    paths = [("GET", "/health"), ("GET", "/lookup?text=413"), ("POST", "/context"), ("POST", "/ask"),
             ("GET", f"/show/{sha}"), ("GET", "/sql"), ("GET", "/")]
    for method, path in paths:
        for token in (None, "wrong-" + TOKEN[6:], TOKEN + "x", ""):
            status, body, resp = call(server, method, path, {} if method == "POST" else None, token=token)
            assert status == 401 and "token" in body["error"], (method, path, token, body)
            assert resp.headers["WWW-Authenticate"] == "Bearer"
            assert str(built[0]) not in json.dumps(body)  # an unauthenticated caller learns nothing, not even paths
    status, health, _ = call(server, "GET", "/health")
    assert status == 200 and health["pid"] == os.getpid() and health["namespace"] == "dana"
    assert SECRET_KEY not in json.dumps(health) and TOKEN not in json.dumps(health)
    status, body, _ = call(server, "GET", "/lookup?text=413+Request+Entity+Too+Large&k=2")
    assert status == 200 and len(body["hits"]) == 2


def test_a_foreign_host_or_origin_is_refused(server):
    for headers in ({"Host": "evil.example"}, {"Host": f"evil.example:{server}"}, {"Host": "127.0.0.1:1"},
                    {"Host": f"127.0.0.1.nip.io:{server}"}, {"Origin": "http://evil.example"},
                    {"Origin": f"http://localhost:{server}"},  # another origin than the Host the request names
                    {"Origin": "null"}):
        for method, path in (("GET", "/health"), ("POST", "/ask")):
            status, body, _ = call(server, method, path, {"question": "x"} if method == "POST" else None,
                                   headers=headers)
            assert status == 403, (headers, path, body)
    for headers in ({"Host": f"localhost:{server}"}, {"Host": f"127.0.0.1:{server}"},
                    {"Origin": f"http://127.0.0.1:{server}"}):
        assert call(server, "GET", "/health", headers=headers)[0] == 200, headers


def test_show_serves_only_the_servers_namespace_and_walks_no_shas(server, built):
    shas = built[3]
    status, page, _ = call(server, "GET", f"/show/{shas['dana']}")
    assert status == 200 and "blue-falcon" in page
    replies = set()
    for probe in (shas["erin"], shas["erin"][:8], shas["dana"][:7], "abc", "zz-not-hex-zz", "0" * 64,
                  shas["dana"] + "?kind=nope"):
        status, page, _ = call(server, "GET", f"/show/{probe}")
        assert status == 404 and "staging password" not in page, probe
        replies.add(page)
    assert len(replies) == 1 and "no such node" in replies.pop()  # the same page, whatever was asked
    status, _, resp = call(server, "POST", f"/show/{shas['dana']}", {})
    assert status == 405 and resp.headers["Allow"] == "GET"


def test_an_ambiguous_prefix_gets_the_same_reply_as_an_unknown_one(built, tmp_path):
    """Through the real resolver: a service that asks it for one hex digit of the prefix, which many shas share."""
    log, db, src, shas = built

    class Short(ReadService):
        def show(self, sha, kind=None):
            return super().show(sha[:1], kind)

    # its record under another root: the module's server keeps the log's serve.json
    httpd, _ = make_server(Short(tmp_path, db, sources=[src], namespace="dana"), TOKEN)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = httpd.server_address[1]
        with duckdb.connect(str(db), read_only=True) as con:
            (digit, n), = con.execute("SELECT left(sha, 1), count(*) FROM evidence GROUP BY 1 ORDER BY 2 DESC "
                                      "LIMIT 1").fetchall()
        assert n > 1
        ambiguous = call(port, "GET", f"/show/{digit * 8}")
        unknown = call(port, "GET", f"/show/{'g' * 8}")
        assert ambiguous[0] == unknown[0] == 404 and ambiguous[1] == unknown[1]
        assert "ambiguous" not in ambiguous[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        clear_state(tmp_path)
        thread.join(timeout=10)


def test_a_browser_trades_the_token_for_a_page_cookie(server, built):
    sha = built[3]["dana"]
    status, _, resp = call(server, "GET", f"/show/{sha}?kind=store_write&token={TOKEN}", token=None)
    assert status == 303 and resp.headers["Location"] == f"/show/{sha}?kind=store_write"
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/show" in cookie
    jar = {"Cookie": cookie.split(";")[0]}
    assert call(server, "GET", f"/show/{sha}", token=None, headers=jar)[0] == 200
    # the cookie opens pages, nothing that computes or calls a model
    assert call(server, "GET", "/lookup?text=413", token=None, headers=jar)[0] == 401
    assert call(server, "POST", "/ask", {"question": "x"}, token=None, headers=jar)[0] == 401
    assert call(server, "GET", f"/show/{sha}?token=wrong-token-xxxxxxxx", token=None)[0] == 401


def test_the_cli_hands_ask_over_only_for_the_servers_own_model(server, built, model):
    log, db, _, _ = built
    state = json.loads(state_path(log).read_text())
    assert stat.S_IMODE(state_path(log).stat().st_mode) == 0o600 and state["token"] == TOKEN
    assert SECRET_KEY not in state_path(log).read_text()
    model.reset()
    other = remote(log, db, "ask", {"question": QUESTION, "budget": 300, "model": "openai/another"})
    elsewhere = remote(log, db, "ask", {"question": QUESTION, "budget": 300, "model": "openai/fake-served",
                                        "api_base": "http://127.0.0.1:9/v1"})
    assert other is None and elsewhere is None and model.calls == 0  # those read in-process, with their own model
    hits = remote(log, db, "lookup", {"text": "413", "k": 2})
    assert hits and len(hits) == 2


@pytest.mark.slow
def test_mem_serve_prints_where_its_token_is_and_reads_a_given_one(built, tmp_path):
    log = tmp_path / "log"
    import shutil

    shutil.copytree(built[0], log, ignore=shutil.ignore_patterns("serve.json"))
    given = tmp_path / "token"
    given.write_text(TOKEN + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_SERVE_TOKEN": "env-token-" + "y" * 20}
    for extra, expected in ((["--token-file", str(given)], TOKEN), ([], env["POIMEN_SERVE_TOKEN"])):
        with _serving(log, extra, env) as (state, stderr_lines):
            assert state["token"] == expected and state["mode"] == 0o600
        assert str(state_path(log)) in stderr_lines and expected not in stderr_lines
    env.pop("POIMEN_SERVE_TOKEN")
    with _serving(log, [], env) as (state, stderr_lines):
        assert len(state["token"]) >= 40 and state["token"] not in stderr_lines and "generated" in stderr_lines
    bad = tmp_path / "short"
    bad.write_text("abc")
    proc = subprocess.run([sys.executable, "-m", "poimen.cli.entry", "serve", "--http", "--log", str(log), "--token-file",
                           str(bad)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "--token-file" in proc.stderr and "Traceback" not in proc.stderr
    assert not state_path(log).exists()


@contextlib.contextmanager
def _serving(log: Path, extra: list[str], env: dict):
    proc = subprocess.Popen([sys.executable, "-m", "poimen.cli.entry", "serve", "--http", "--log", str(log), *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a failure deadline on a loaded machine, not a speed check
        while not state_path(log).exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(0.2)  # the line on stderr follows the record
        state = {**json.loads(state_path(log).read_text()), "mode": stat.S_IMODE(state_path(log).stat().st_mode)}
        proc.terminate()
        proc.wait(timeout=60)
        yield state, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
        proc.stderr.close()
