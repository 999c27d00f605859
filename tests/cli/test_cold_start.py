"""`mem` starts light: the heavy libraries load only in the command that uses them.

litellm took ~12 s to import on 2 loaded cores and sentence-transformers more, so a module-level import of either
anywhere under ``poimen.cli.app`` (it imports every module in ``poimen/cli/commands`` to list its commands) makes
every ``mem`` call slow. These run in a fresh interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("litellm", "torch", "sentence_transformers", "transformers", "dagster", "duckdb", "pyarrow", "asyncio")

_CHILD = """
import json, sys
args = sys.argv[1:]
import poimen.cli.entry, poimen.cli.app
if args:
    sys.argv = ["mem", *args]
    try:
        poimen.cli.entry.main()
    except SystemExit:
        pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded_after(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [(), ("--help",), ("lookup", "--help"), ("run", "--help"), ("model", "--help")],
                         ids=["import", "help", "lookup-help", "run-help", "model-help"])
def test_mem_starts_without_heavy_modules(args):
    loaded = loaded_after(*args)
    assert "poimen" in loaded and "typer" in loaded  # the child did import the CLI
    assert not loaded & set(HEAVY), f"`mem {' '.join(args)}` imported {sorted(loaded & set(HEAVY))}"


def test_the_front_door_loads_no_third_party_module():
    """``mem lookup`` with no server to hand it to: the front door reads the argv and looks for serve.json with the
    standard library and poimen alone, so a warm read costs the interpreter's start-up and the request."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(REPO / "tests" / "no-such-log")}
    env.pop("POIMEN_NO_SERVER", None)

    def loaded(code: str) -> set[str]:
        code += "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                              cwd=REPO, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return set(json.loads(proc.stderr.strip().splitlines()[-1]))

    at_start = loaded("pass")  # what the interpreter's site hooks (.pth files) load anyway
    front = loaded("import poimen.cli.front\nassert not poimen.cli.front.warm(['lookup', '-k', '3', 'x'])")
    third_party = {m for m in front - at_start if m not in sys.stdlib_module_names and m != "poimen"}
    assert "poimen" in front and not third_party, sorted(third_party)


def test_the_warm_read_path_loads_nothing_heavy():
    """What `mem lookup` / `ask` / `context` import before handing the read to a running `mem serve --http`."""
    code = ("import json, sys\nimport poimen.cli.entry\nfrom poimen.index import default_db\nfrom poimen.settings import default_root\n"
            "import poimen.serve.client, poimen.read.shapes\ndefault_db(default_root())\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert "poimen" in loaded and not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_a_cold_ask_answers_without_litellm(tmp_path):
    """`mem ask` with the offline engine reads in-process and calls the engine in process: litellm's import (most
    of a cold ask before) is for real provider models only."""
    from lineage_helpers import build

    log, _, _ = build(tmp_path)
    code = ("import json, sys\nimport poimen.cli.entry\nsys.argv = ['mem', 'ask', '--log', sys.argv[1], '--json', "
            "'how was the 413 on imports fixed?']\ntry:\n    poimen.cli.entry.main()\nexcept SystemExit as exc:\n"
            "    assert not exc.code, exc.code\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_NO_SERVER": "1"}
    env.pop("POIMEN_MODEL", None)
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["text"] and answer["memory_shas"] and answer["model_id"].startswith("poimen/extractive@")
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert not loaded & {"litellm", "openai", "torch"}, sorted(loaded & {"litellm", "openai", "torch"})


@pytest.mark.slow
def test_the_offline_answer_embeds_new_lines_without_torch(tmp_path):
    """The answer task weighs a context's lines, mostly never embedded before: with all-MiniLM-L6-v2 (not the
    tests' hash embedder) and an empty cache, they go through the numpy encoder, so `mem ask` imports no torch."""
    code = ("import json, sys\nfrom poimen.llm.offline import respond\nfrom poimen.llm.prompts import render\n"
            "r = render('answer', question='why did the uploads fail?', memory='The disk was full.\\n"
            "Uploads failed with 413 because the ingress body limit was 10k.\\nLunch was pizza.')\n"
            "print(respond(r.system, r.user))\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "POIMEN_HOME": str(tmp_path / "home")}
    env.pop("POIMEN_EMBEDDER")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          cwd=REPO, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "413 because the ingress body limit" in proc.stdout
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert not loaded & {"torch", "sentence_transformers", "transformers"}, sorted(loaded)
    assert not list((tmp_path / "home").rglob("*.npy"))  # numpy vectors are never written to the cache
