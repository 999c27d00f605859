"""The house: poimen/ is laid out by stage, and imports only run down the stages (issue 26).

The layer order is the one docs/architecture.md draws. An import (module level or inside a function, both
count: a lazy import is still a dependency) may reach its own folder or a folder below it, never one above.
Only the vocabulary sits at the top of poimen/, and no module imports itself back through others (a circle).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "poimen"
# Lowest first. A folder may import from its own layer and every layer before it.
LAYERS = [
    {"__init__", "domain", "errors", "settings", "ids"},  # the vocabulary
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
# Known import circles still to break (the modules of each), each with why it is here; the list may only shrink, and
# a circle that is gone must leave it.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module under ``root`` (a folder named poimen) by its dotted name; a package by its own name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        out[".".join(p for p in rel.parts if p != "__init__")] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """What module ``name`` imports of poimen: at module level or inside a function, and by
    ``importlib.import_module("poimen...")`` with the name written out. ``from package import module`` is an import of
    that module (the package's ``__init__`` has run already when its own modules do this)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("poimen"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("poimen"):
                base = node.module
            else:
                continue
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and str(node.args[0].value).startswith("poimen")):
            yield node.args[0].value


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module and the modules of ``modules`` it imports (itself aside)."""
    return {name: {t for t in _imports(name, path, modules) if t in modules and t != name}
            for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One walk round each import circle of ``graph`` (its first module again at the end), for each group of modules
    that all reach one another (a strongly connected component, found by Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = set(stack[stack.index(v):])
            del stack[stack.index(v):]
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return [_walk_round(graph, group) for group in groups]


def _walk_round(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest walk from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    for v in queue:
        for w in sorted(graph[v] & group):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"not a circle: {sorted(group)}")


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
    modules = _modules()
    for name, path in modules.items():
        src = _stage(name)
        for target in _imports(name, path, modules):
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


def test_the_import_graph_has_no_circle():
    circles = {frozenset(c): c for c in _circles(_graph(_modules()))}
    new = [c for group, c in circles.items() if group not in KNOWN_CIRCLES]
    assert not new, "import circles (each module imports the next):\n" + "\n".join(
        "  " + " -> ".join(c) for c in new)
    gone = [sorted(group) for group in KNOWN_CIRCLES if group not in circles]
    assert not gone, f"no longer a circle, so no longer in KNOWN_CIRCLES: {gone}"


def test_a_circle_through_lazy_and_package_imports_is_found(tmp_path):
    """The check above can fail: a circle made of a ``from package import module``, a relative import inside a
    function and an ``importlib.import_module`` is found and walked in order; without its last link it is none."""
    stage = tmp_path / "poimen" / "stage"
    stage.mkdir(parents=True)
    (tmp_path / "poimen" / "__init__.py").write_text("")
    for name, text in {"__init__": "", "a": "from poimen.stage import b\n",
                       "b": "def later():\n    from .c import thing\n",
                       "c": "import importlib\n\nA = importlib.import_module('poimen.stage.a')\n",
                       "d": "from poimen.stage.a import x\n"}.items():
        (stage / f"{name}.py").write_text(text)
    modules = _modules(tmp_path / "poimen")
    assert _circles(_graph(modules)) == [["poimen.stage.a", "poimen.stage.b", "poimen.stage.c", "poimen.stage.a"]]
    (stage / "c.py").write_text("")
    assert _circles(_graph(modules)) == []
