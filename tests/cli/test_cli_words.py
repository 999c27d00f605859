"""The command line's words: a byte that is not UTF-8 is a usage error naming its argument, and a pasted log line
that starts with ``-`` is the positional text, in the full CLI and at the front door alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from poimen.cli import front
from poimen.cli.argv import is_text, utf8_problem
from poimen.cli.app import app

BGL = Path("/work/shared/bench/failures/loghub/BGL/BGL_2k.log")
BAD = b"\xff\xfe".decode("utf-8", "surrogateescape")  # what Python makes of `$'\xff\xfe'` in argv


@pytest.mark.parametrize("argv, named", [
    (["remember", BAD], "'text'"),
    (["lookup", BAD], "'text'"),
    (["context", "a" + BAD], "'question'"),
    (["ask", BAD], "'question'"),
    (["ask", "--query", BAD], "'--query'"),
    (["run", "--query", BAD, "x.log"], "'--query'"),
    (["remember", "--ns", BAD, "hello"], "'--ns'"),
])
def test_a_byte_that_is_not_utf8_is_a_usage_error_naming_the_argument(tmp_path, argv, named):
    log = tmp_path / "log"
    res = CliRunner().invoke(app, [*argv, "--log", str(log)])
    said = " ".join(res.output.replace("│", " ").split())
    assert res.exit_code == 2, res.output
    assert f"Invalid value for {named}: not valid UTF-8 (byte 0x" in said and "Traceback" not in said
    assert not log.exists()  # refused before the command made its folder


def test_the_first_bad_byte_is_named_with_its_offset():
    assert utf8_problem("ok é") is None
    assert utf8_problem("ab" + BAD) == "not valid UTF-8 (byte 0xff at 2)"
    assert utf8_problem("é" + BAD) == "not valid UTF-8 (byte 0xff at 2)"  # a byte offset, not a character's


def test_the_front_door_leaves_a_bad_byte_to_the_full_command():
    assert front.parse(["lookup", BAD]) is None and front.parse(["ask", "--query", BAD]) is None


@pytest.mark.parametrize("word, text", [
    ("- 1131566461 2005.11.09 tbird-admin1 Nov 9 12:01:01", True), ("-- MARK --", True), ("---", True),
    ("- x", True), ("-k", False), ("--json", False), ("--lines=2", False), ("-", False), ("--", False),
    ("x - y", False), ("--name=a b", False),
])
def test_which_dash_words_are_text(word, text):
    assert is_text(word) is text


def _bgl_line(n: int) -> str:
    if not BGL.exists():
        pytest.skip(f"{BGL} is not on this machine")
    return BGL.read_text(encoding="utf-8").splitlines()[n]


def test_the_front_door_reads_a_dash_line_as_the_positional():
    line = _bgl_line(0)
    assert line.startswith("- ")
    assert front.parse(["lookup", line, "-k", "3"]) == ("lookup", {"text": line, "k": 3})
    assert front.parse(["context", "--budget", "64", line]) == ("context", {"budget": 64, "question": line})
    assert front.parse(["ask", line]) == ("ask", {"question": line})
    assert front.parse(["ask", "--query", "- a query"]) == ("ask", {"query": "- a query"})


@pytest.fixture(scope="module")
def bgl_log(tmp_path_factory):
    """A log of the first 40 BGL lines, read by the offline engine and projected into its index."""
    _bgl_line(0)
    root = tmp_path_factory.mktemp("bgl")
    src = root / "src" / "bgl.log"
    src.parent.mkdir()
    src.write_text("\n".join(BGL.read_text(encoding="utf-8").splitlines()[:40]) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["run", "--log", str(root / "log"), "--query", "What hardware errors occur?",
                                   "--chunk-tokens", "200", str(src)])
    assert res.exit_code == 0, res.output
    return root / "log"


@pytest.mark.parametrize("before", [False, True])
def test_a_pasted_bgl_line_is_looked_up_as_it_stands(bgl_log, before):
    line = _bgl_line(0)
    opts = ["--log", str(bgl_log), "-k", "2", "--json"]
    res = CliRunner().invoke(app, ["lookup", *opts, line] if before else ["lookup", line, *opts])
    assert res.exit_code == 0, res.output
    hits = [json.loads(row) for row in res.output.splitlines()]
    assert len(hits) == 2  # -k read as an option, the line as the text
    assert any("bgl.log" in json.dumps(h) for h in hits)


def test_context_and_ask_take_a_pasted_bgl_line(bgl_log):
    line = _bgl_line(0)
    res = CliRunner().invoke(app, ["context", line, "--log", str(bgl_log), "--budget", "200", "--json"])
    assert res.exit_code == 0, res.output
    assert "bgl.log" in res.output and json.loads(res.output)
    res = CliRunner().invoke(app, ["ask", line, "--log", str(bgl_log)])
    assert res.exit_code == 0, res.output


def test_an_unknown_option_is_still_refused(bgl_log):
    res = CliRunner().invoke(app, ["lookup", "--nope", "x", "--log", str(bgl_log)])
    assert res.exit_code == 2 and "No such option" in res.output
    res = CliRunner().invoke(app, ["lookup", "- a line", "- another", "--log", str(bgl_log)])
    assert res.exit_code == 2 and "unexpected extra argument" in res.output
