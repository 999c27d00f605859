"""``mem serve --http``: the CLI's lookup/context/ask through a running server equal the in-process results; the
server has no SQL and no endpoint beyond the read path; a stopped or stale server is skipped silently; and the
``/show/<sha>`` page walks the lineage in headless Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lineage_helpers import QUERY as STANDING_QUERY
from lineage_helpers import build
from poimen.cli.app import app
from poimen.serve.client import model_settings, read_env, state_path
from poimen.serve.service import ReadService
from poimen.read.shapes import context_from, context_shape, hit_from, hit_shape

REPO = Path(__file__).resolve().parents[2]
QUESTION = "how was the 413 on imports fixed?"
TOKENS: dict[str, str] = {}  # base url -> the token its server stored in serve.json (what the CLI sends)
CHROMIUM = os.environ.get("POIMEN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("serve"))


@contextlib.contextmanager
def running(log: Path, src: Path):
    """``mem serve --http`` on a free port for ``log``; yields (base url, process) once it has written serve.json."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "poimen.cli.entry", "serve", "--http", "--log", str(log),
                             "--sources", str(src)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a failure deadline on a loaded machine, not a speed check
        while not state_path(log).exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "mem serve --http wrote no serve.json"
            time.sleep(0.2)
        state = json.loads(state_path(log).read_text())
        assert state["pid"] == proc.pid
        base = f"http://127.0.0.1:{state['port']}"
        TOKENS[base] = state["token"]
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()


@pytest.fixture(scope="module")
def server(built):
    log, _, src = built
    with running(log, src) as (base, _):
        yield base


def get(url: str, body: dict | None = None) -> tuple[int, dict | str]:
    """GET (POST with ``body``) with the token of the server ``url`` names."""
    data = json.dumps(body).encode() if body is not None else None
    token = next(t for base, t in TOKENS.items() if url.startswith(base + "/"))
    request = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as resp:
            status, raw, ctype = resp.status, resp.read().decode(), resp.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        status, raw, ctype = exc.code, exc.read().decode(), exc.headers["Content-Type"]
    return status, json.loads(raw) if ctype == "application/json" else raw


def mem(*args, **env) -> str:
    res = CliRunner().invoke(app, list(args), env=env or None)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.slow
def test_cli_through_the_server_equals_in_process(built, server):
    log, _, _ = built
    commands = [
        ["lookup", "--log", str(log), "--json", "-k", "3", "413 Request Entity Too Large"],
        ["lookup", "--log", str(log), "--explain", "-k", "3", "413 Request Entity Too Large"],
        ["context", "--log", str(log), "--json", "--budget", "300", QUESTION],
        ["context", "--log", str(log), "--budget", "300", QUESTION],
        ["ask", "--log", str(log), "--json", "--budget", "300", QUESTION],
        ["ask", "--log", str(log), QUESTION],
    ]
    before = get(f"{server}/health")[1]["served"]
    warm = [mem(*c) for c in commands]
    assert get(f"{server}/health")[1]["served"] == before + len(commands)  # each one went to the server
    cold = [mem(*c, POIMEN_NO_SERVER="1") for c in commands]
    assert get(f"{server}/health")[1]["served"] == before + len(commands)  # and these did not
    assert warm == cold
    hits = [json.loads(x) for x in warm[0].splitlines()]
    assert len(hits) == 3 and all(h["lines"] and h["evidence"] for h in hits)
    assert json.loads(warm[2])["lines"] and json.loads(warm[4])["memory_shas"]
    # the JSON endpoints return the same shapes as --json
    assert get(f"{server}/lookup", {"text": "413 Request Entity Too Large", "k": 3})[1]["hits"] == hits
    assert get(f"{server}/context?question={QUESTION.replace(' ', '+')}&budget=300")[1] == json.loads(warm[2])


@pytest.mark.slow
def test_the_server_has_no_sql_and_refuses_what_it_does_not_know(server):
    for path in ("/sql", "/query", "/sql?q=select+1", "/index.duckdb"):
        status, body = get(f"{server}{path}")
        assert status == 404 and "no endpoint" in body["error"]
        assert get(f"{server}{path}", {"sql": "select 1"})[0] == 404
    status, body = get(f"{server}/lookup?text=x&sql=select+1")
    assert status == 400 and "unknown field 'sql'" in body["error"]
    status, body = get(f"{server}/lookup", {"text": "x", "k": "many"})
    assert status == 400 and "field 'k'" in body["error"]
    status, body = get(f"{server}/context", {})
    assert status == 400 and "missing field 'question'" in body["error"]
    status, page = get(f"{server}/show/not-a-sha")
    assert status == 404 and "no such node" in page


@pytest.mark.slow
def test_a_stopped_or_stale_server_falls_back_to_in_process(built, tmp_path):
    log, src = tmp_path / "log", built[2]
    shutil.copytree(built[0], log, ignore=shutil.ignore_patterns("serve.json"))  # the module's server is not this one
    args = ["lookup", "--log", str(log), "--json", "-k", "2", "OOMKilled"]
    with running(log, src) as (base, proc):
        warm = mem(*args)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert not state_path(log).exists()  # a clean stop removes its record
    assert mem(*args) == warm
    # a record whose port no server answers any more (its pid alive: now some other process) is passed over
    state_path(log).write_text(json.dumps({"pid": os.getpid(), "port": int(base.rsplit(":", 1)[1]),
                                           "db": str((log / "index.duckdb").resolve()),
                                           "embedder": "poimen/hash-bow-384", "env": read_env(),
                                           "model": model_settings(), "token": TOKENS[base]}))
    try:
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0 and res.output == warm
    finally:
        state_path(log).unlink()


# A `mem` process as the console script runs it (poimen.cli.entry.main, or the full typer app with "full" first); its
# stdout, and on stderr the top-level modules it loaded (the front door must not load typer).
_MEM = """
import json, sys
full = sys.argv[1] == "full"
import poimen.cli.entry
main = poimen.cli.entry.main
if full:
    import poimen.cli.app
    main = poimen.cli.app.main
sys.argv = ["mem", *sys.argv[2:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def mem_process(*args: str, full: bool = False, **env: str) -> tuple[str, set[str]]:
    run_env = {**os.environ, "PYTHONPATH": str(REPO), **env}
    proc = subprocess.run([sys.executable, "-c", _MEM, "full" if full else "front", *args], capture_output=True,
                          text=True, timeout=600, env=run_env, cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.slow
def test_the_front_door_prints_what_the_full_cli_prints(built, server):
    """lookup, context and ask, plain and --json: handed to the server without typer, the same bytes as the app."""
    log, _, _ = built
    commands = [
        ["lookup", "--log", str(log), "-k", "3", "413 Request Entity Too Large"],
        ["lookup", "--json", "--explain", "-k", "3", "--lines", "2", "413 Request Entity Too Large", "--log", str(log)],
        ["lookup", "--log", str(log), "--db", str(log / "index.duckdb"), "nothing like this anywhere zzzqqq"],
        ["context", "--log", str(log), "--budget", "300", QUESTION],
        ["context", "--log", str(log), "--json", QUESTION],
        ["ask", "--log", str(log), QUESTION],
        ["ask", "--log", str(log), "--json", "--budget", "300", QUESTION],
        ["ask", "--log", str(log), "--query", STANDING_QUERY],
    ]
    for command in commands:
        before = get(f"{server}/health")[1]["served"]
        front, front_modules = mem_process(*command)
        full, full_modules = mem_process(*command, full=True)
        assert get(f"{server}/health")[1]["served"] == before + 2, command  # both were answered by the server
        assert "typer" not in front_modules and "typer" in full_modules, command
        assert front and front == full, command


@pytest.mark.slow
def test_the_front_door_passes_what_it_does_not_parse_to_the_full_cli(built, server):
    """An option written another way (``--lines=2``) is the full CLI's to parse: the same hits, through typer."""
    log, _, _ = built
    plain, _ = mem_process("lookup", "--log", str(log), "--json", "--lines", "2", "OOMKilled")
    other, modules = mem_process("lookup", "--log", str(log), "--json", "--lines=2", "OOMKilled")
    assert "typer" in modules and other == plain


def test_a_dead_servers_record_falls_back_cleanly(built, tmp_path):
    """A serve.json left by a server that died (its pid gone): the command reads in-process, no traceback."""
    log = tmp_path / "log"
    shutil.copytree(built[0], log, ignore=shutil.ignore_patterns("serve.json"))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    state_path(log).write_text(json.dumps({"pid": gone.pid, "port": 9, "db": str((log / "index.duckdb").resolve()),
                                           "embedder": "poimen/hash-bow-384", "env": read_env(),
                                           "model": model_settings(), "token": "t" * 43}))
    args = ["lookup", "--log", str(log), "--json", "-k", "2", "OOMKilled"]
    run_env = {**os.environ, "PYTHONPATH": str(REPO)}
    run_env.pop("POIMEN_NO_SERVER", None)
    proc = subprocess.run([sys.executable, "-m", "poimen.cli.entry", *args], capture_output=True, text=True, timeout=600,
                          env=run_env, cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == mem(*args, POIMEN_NO_SERVER="1")


def test_read_shapes_round_trip_without_loss(built):
    log, db, _ = built
    service = ReadService(log, db)
    hits = service.lookup("413 Request Entity Too Large", k=3, explain=True)
    assert hits and all(h["lines"] for h in hits)
    for shape in hits:
        hit, lines = hit_from(json.loads(json.dumps(shape)))
        assert hit_shape(hit, lines) == shape
    ctx = service.context(QUESTION, 300)
    assert ctx["lines"] and context_shape(context_from(json.loads(json.dumps(ctx)))) == ctx


@pytest.mark.slow
def test_show_page_in_headless_chromium(built, server):
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (scripts/bootstrap "
                                                                   "installs it; never `playwright install`)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no browser: Debian chromium not found at {CHROMIUM} (apt-get install chromium)")
    log, db, src = built
    sha = _final_memory(db)
    lin = asdict(ReadService(log, db, sources=[src]).show(sha))  # what the server (same --sources) renders
    first = lin["memory"]["lines"][0]
    chunk = first["evidence"]
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(f"{server}/show/{sha[:10]}?token={TOKENS[server]}")  # once: then the cookie
            assert "token" not in page.url  # traded for the cookie, not kept in the address
            assert page.title() == f"poimen · memory {sha[:12]}"
            assert page.locator("#lineage li[data-kind=line]").count() == len(lin["memory"]["lines"])
            sources = page.locator("#lineage li[data-kind=source]").all_inner_texts()
            where = first["unit"]["where"]
            assert any(f"{where['path']}:{where['first_line']}" in s for s in sources), sources
            # down the chain: memory → its first line
            page.locator(f'li[data-kind=line][data-sha="{first["sha"]}"] > a').click()
            page.wait_for_url(f"**/show/{first['sha']}?kind=line")
            assert page.title() == f"poimen · line {first['sha'][:12]}"
            assert first["text"] in page.locator("#lineage").inner_text()
            assert page.locator(f'a[href="/show/{sha}?kind=memory"]').count() == 1  # and back up: held by
            # → the evidence chunk it came from, which links up to the line
            page.locator(f'li[data-kind=evidence][data-sha="{chunk["sha"]}"] > a').click()
            page.wait_for_url(f"**/show/{chunk['sha']}?kind=evidence")
            assert page.title() == f"poimen · evidence {chunk['sha'][:12]}"
            assert page.locator(f'a[href="/show/{first["sha"]}?kind=line"]').count() == 1
        finally:
            browser.close()


def _final_memory(db) -> str:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT final_memory_sha FROM run WHERE level = 'L1' AND stream_id = 'channel.jsonl'"
                           ).fetchone()[0]
