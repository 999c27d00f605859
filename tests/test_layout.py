"""The house: poimen/ is laid out by stage, and imports only run down the stages (issue 26).

The layer order is the one docs/architecture.md draws. An import (module level or inside a function, both
count: a lazy import is still a dependency) may reach its own folder or a folder below it, never one above.
Only the vocabulary sits at the top of poimen/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "poimen"
# Lowest first. A folder may import from its own layer and every layer before it.
LAYERS = [
    {"__init__", "_env", "domain", "errors", "settings", "ids"},  # the vocabulary
    {"text"},
    {"log"},
    {"signatures"},
    {"embedding"},
    {"relevance"},
    {"inputs"},
    {"incidents"},
    {"llm"},
    {"write"},
    {"index"},
    {"read"},
    {"agent"},
    {"forget"},
    {"serve"},
    {"cli"},
    {"testing"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
# Known upward imports still to remove, each with why it is here; the list may only shrink.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        yield ".".join(p for p in rel.parts if p != "__init__"), path


def _imports(name: str, path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("poimen"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("poimen"):
                if node.module == "poimen":
                    yield from (f"poimen.{a.name}" for a in node.names)
                else:
                    yield node.module


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_top_of_poimen_holds_only_the_vocabulary():
    loose = {p.stem for p in ROOT.glob("*.py")}
    assert loose <= LAYERS[0], f"modules at the top of poimen/ that belong in a stage folder: {sorted(loose - LAYERS[0])}"


def test_every_stage_folder_has_a_layer():
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(RANK), f"folders with no place in the layer order: {sorted(folders - set(RANK))}"


def test_imports_never_run_up_a_stage():
    upward = set()
    for name, path in _modules():
        src = _stage(name)
        for target in _imports(name, path):
            dst = _stage(target)
            if dst in RANK and src in RANK and RANK[dst] > RANK[src]:
                upward.add((name, target))
    assert upward <= KNOWN_UPWARD, "imports that run back up a stage:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(upward - KNOWN_UPWARD))


@pytest.mark.parametrize("limit", [400])
def test_modules_are_under_the_size_limit(limit):
    big = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit}
    assert not big, f"modules over {limit} lines: {big}"
