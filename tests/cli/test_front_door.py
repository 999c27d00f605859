"""The front door's argv reading (``poimen.cli.front``): it takes only what the full command would take the same way.

A warm ``mem lookup/context/ask`` is parsed here without typer, so every argv it accepts must mean what typer makes
of it, and everything else must be left to typer, untouched (the end-to-end checks, against a running server, are
in tests/test_serve_http.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from poimen.cli import front


@pytest.mark.parametrize("argv, expected", [
    (["lookup", "413 Request"], ("lookup", {"text": "413 Request"})),
    (["lookup", "-k", "3", "--json", "x", "--log", "L", "--lines", "2", "--explain", "--db", "D"],
     ("lookup", {"k": 3, "json": True, "text": "x", "log": "L", "lines": 2, "explain": True, "db": "D"})),
    (["lookup", "-k", "1000", ""], ("lookup", {"k": 1000, "text": ""})),
    (["context", "--budget", "16", "why?"], ("context", {"budget": 16, "question": "why?"})),
    (["ask", "--query", "root-causes", "--timeout", "0.5", "--model", "openai/x", "--api-base", "http://h/v1"],
     ("ask", {"query": "root-causes", "timeout": 0.5, "model": "openai/x", "api_base": "http://h/v1"})),
])
def test_it_reads_the_plain_forms(argv, expected):
    assert front.parse(argv) == expected


@pytest.mark.parametrize("argv", [
    [], ["run", "x"], ["serve", "--http"], ["--help"], ["lookup", "--help"],
    ["lookup", "--embedder", "poimen/hash-bow-384", "x"],  # an option it does not do
    ["lookup", "--lines=2", "x"], ["lookup", "-k3", "x"], ["lookup", "--", "-x"],  # other spellings
    ["lookup", "-k", "0", "x"], ["lookup", "-k", "1001", "x"], ["lookup", "-k", "many", "x"],  # out of range
    ["lookup", "--lines", "0", "x"], ["context", "--budget", "15", "x"], ["ask", "--timeout", "0", "x"],
    ["ask", "--timeout", "nan", "x"],
    ["lookup", "-k", "2", "-k", "3", "x"], ["lookup", "x", "y"],  # repeated: typer decides
    ["lookup", "x", "-k"], ["lookup", "-k", "--json", "x"],  # a missing value
    ["context", "--explain", "x"], ["ask", "--db", "D", "x"],  # another command's option
])
def test_it_leaves_everything_else_to_typer(argv):
    assert front.parse(argv) is None


@pytest.mark.parametrize("argv", [["lookup"], ["lookup", "--json"], ["context", "--budget", "300"], ["ask"],
                                  ["ask", "why?", "--query", "root-causes"]])
def test_what_typer_would_refuse_is_typer_to_refuse(argv, monkeypatch):
    monkeypatch.delenv("POIMEN_NO_SERVER", raising=False)
    parsed = front.parse(argv)
    assert parsed is None or front._request(*parsed) is None
    assert front.warm(argv) is False


def test_it_resolves_the_log_and_index_as_the_full_command_does(monkeypatch, tmp_path):
    monkeypatch.setenv("POIMEN_HOME", str(tmp_path / "home"))
    root, db, params = front._request("lookup", {"text": "x", "json": True})
    assert (root, db) == (tmp_path / "home", tmp_path / "home" / "index.duckdb")
    assert params == {"text": "x", "k": 10, "explain": False, "lines": 4}  # the full command's defaults
    root, db, params = front._request("ask", {"question": "why?", "log": "L"})
    assert (root, db) == (Path("L"), Path("L") / "index.duckdb")
    assert params == {"question": "why?", "query": None, "budget": 2000, "model": None, "api_base": None,
                      "timeout": None}


def test_no_server_means_the_full_cli(monkeypatch, tmp_path):
    monkeypatch.setenv("POIMEN_HOME", str(tmp_path / "empty"))
    monkeypatch.delenv("POIMEN_NO_SERVER", raising=False)
    assert front.warm(["lookup", "x"]) is False  # no serve.json at all
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    assert front.warm(["lookup", "x"]) is False


def test_context_asks_for_the_embedder_the_environment_names(monkeypatch):
    """`mem context` takes --embedder from $POIMEN_EMBEDDER and uses only a server that queries with that model."""
    monkeypatch.setenv("POIMEN_EMBEDDER", "hash")
    assert front._embedder_id("context") == "poimen/hash-bow-384"
    assert front._embedder_id("lookup") is None and front._embedder_id("ask") is None
    monkeypatch.setenv("POIMEN_EMBEDDER", "")
    assert front._embedder_id("context") is None


def test_a_hit_header_is_one_line_at_any_width():
    """Piped output (no terminal: rich assumes 80 columns) must not cut a hit's header in two: scripts split on it."""
    import io

    from rich.console import Console

    from poimen.index.hits import Hit
    from poimen.cli.readout import print_hits
    from poimen.read.shapes import hit_shape

    hit = Hit(sha="4" * 64, level="L1", kind="memory", score=0.8473, tier="signature", text="uploads fail with 413",
              query_id="incident-timeline-and-root-causes", run_id="2" * 64, evidence=(), why="")
    buf = io.StringIO()
    print_hits(Console(file=buf, width=40), [hit_shape(hit)], explain=False)
    first = buf.getvalue().splitlines()[0]
    assert first.startswith("1. L1 memory 444444444444") and first.endswith("signature 0.8473")
