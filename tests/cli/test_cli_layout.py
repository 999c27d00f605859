"""The CLI's imports run one way (issue 26, item 4): entry -> app -> commands -> options, with no circle.

``poimen.cli.app`` lists its command modules by name: no package scan; ``poimen.cli.entry`` forwards no names to the
app; and every command is a module-level function of a module-level ``typer.Typer``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import typer

CLI = Path(__file__).resolve().parents[2] / "poimen" / "cli"
# Who may import the modules above the commands: the package's main() loads entry, entry loads app.
ALLOWED = {"poimen.cli.entry": {"poimen.cli"}, "poimen.cli.app": {"poimen.cli.entry"}}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args \
                and isinstance(node.args[0], ast.Constant):
            found.add(node.args[0].value)
    return found


def _module(path: Path) -> str:
    parts = path.relative_to(CLI.parent.parent).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def test_only_the_entry_loads_the_app_and_only_the_package_loads_the_entry():
    for path in CLI.rglob("*.py"):
        name, imported = _module(path), _imports(path)
        for target, importers in ALLOWED.items():
            if target in imported:
                assert name in importers, f"{name} imports {target}: the CLI's imports run entry -> app -> commands"


def test_the_app_lists_its_commands_and_nothing_forwards_or_scans():
    app_src = (CLI / "app.py").read_text(encoding="utf-8")
    assert "pkgutil" not in app_src and "iter_modules" not in app_src
    for path in CLI.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert "__getattr__" not in top, f"{path.name} forwards names through __getattr__"
        assert "register" not in top, f"{path.name} registers its commands in a closure"


def test_every_command_is_a_module_level_function_of_a_module_level_typer():
    for path in sorted((CLI / "commands").glob("*.py")):
        if path.name == "__init__.py":
            continue
        module = importlib.import_module(_module(path))
        typers = [v for v in vars(module).values() if isinstance(v, typer.Typer)]
        assert typers, f"{path.name} has no module-level typer.Typer"
        for t in typers:
            for info in t.registered_commands:
                assert getattr(module, info.callback.__name__, None) is info.callback, \
                    f"{path.name}: {info.callback.__qualname__} is not a module-level function"
