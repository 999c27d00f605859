"""Where each settings rule lives (issue 26, item 2): one home each, in ``poimen/settings.py``.

- The environment: no module but settings.py reads a ``POIMEN_*`` variable (``os.environ``, ``os.getenv``), and
  none but settings.py spells a variable's name, so a variable has one reader and one default.
- The log-location rule: only settings.py says what a log root names (a folder, ``file://``, ``s3://``, ``gs://``).
- The model config: ``ModelConfig`` and the model defaults are defined in settings.py alone, and the request, the
  read service and the Dagster resource each hold one instead of their own model fields.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOME = "poimen/settings.py"
# poimen/testing hands its own child processes a kill switch in a dict (never read from os.environ): a test fixture.
EXEMPT_NAMES = {"poimen/testing/crash.py"}
PRODUCT = ("poimen", "assets", "resources", "pipelines")


def _sources():
    for top in PRODUCT:
        for path in sorted((REPO / top).rglob("*.py")):
            rel = str(path.relative_to(REPO))
            yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def _settings_constants() -> set[str]:
    """The names settings.py gives its variables (``MODEL = "POIMEN_MODEL"`` ...)."""
    tree = ast.parse((REPO / HOME).read_text(encoding="utf-8"))
    return {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            and str(n.value.value).startswith("POIMEN_") for t in n.targets if isinstance(t, ast.Name)}


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` (or a bare ``environ``)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (isinstance(node, ast.Name)
                                                                           and node.id == "environ")


def _names_a_variable(node: ast.AST, constants: set[str]) -> bool:
    """A key that is a ``POIMEN_*`` literal, or one of settings.py's names for one (``settings.MODEL``, ``MODEL``)."""
    if isinstance(node, ast.Constant):
        return str(node.value).startswith("POIMEN_")
    if isinstance(node, ast.Attribute):
        return node.attr in constants
    return isinstance(node, ast.Name) and node.id in constants


def _env_reads(tree: ast.AST, constants: set[str]) -> list[int]:
    """Lines that read a POIMEN_ variable from the environment: ``os.environ.get(K)``, ``os.environ[K]``,
    ``os.getenv(K)``, ``K in os.environ``, ``os.environ.setdefault(K, ...)``, ``os.environ.pop(K)``."""
    lines = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "setdefault", "pop") and _is_environ(node.func.value):
                key = node.args[0]
            elif node.func.attr == "getenv":
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            key = node.slice
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            key = node.left
        if key is not None and _names_a_variable(key, constants):
            lines.append(node.lineno)
    return lines


def test_no_module_but_settings_reads_a_poimen_variable():
    constants = _settings_constants()
    assert {"HOME", "NAMESPACE", "MODEL", "CHUNK_TOKENS", "EMBEDDER"} <= constants  # the scan knows their names
    readers = {f"{rel}:{line}" for rel, tree in _sources() if rel != HOME for line in _env_reads(tree, constants)}
    assert not readers, f"POIMEN_ variables read outside {HOME}: {sorted(readers)}"


def test_no_module_but_settings_spells_a_variable_name():
    """``typer.Option(envvar=...)`` and ``dg.EnvVar(...)`` name a variable too: they take settings.py's names."""
    spelled = {f"{rel}:{node.lineno}" for rel, tree in _sources() if rel != HOME and rel not in EXEMPT_NAMES
               for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
               and node.value.startswith("POIMEN_") and node.value.replace("_", "").isalnum()}
    assert not spelled, f"POIMEN_ variable names outside {HOME}: {sorted(spelled)}"


LOG_RULE = {"log_root", "local_folder", "local_dir", "default_root"}


def test_the_log_location_rule_has_one_home():
    """Only settings.py defines what a root names, and no other module looks for a scheme in one (a resource's
    ``log_root`` property hands its ``root`` to settings.py's)."""
    defined, parsed = set(), set()
    for rel, tree in _sources():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in LOG_RULE and rel != HOME:
                defined.add(f"{rel}:{node.name}")
        for node in ast.walk(tree):
            if rel == HOME:
                continue
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == "://":
                parsed.add(f"{rel}:{node.lineno}")  # "://" in root
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("startswith", "removeprefix") and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value in ("file://", "s3://", "gs://"):
                parsed.add(f"{rel}:{node.lineno}")  # root.startswith("file://")
    assert not defined, f"the log-location rule defined outside {HOME}: {sorted(defined)}"
    assert not parsed, f"a log root parsed outside {HOME}: {sorted(parsed)}"


def test_the_model_config_has_one_home():
    """``ModelConfig`` and the model defaults are defined in settings.py only; no other dataclass spells its own
    model fields; the request, the read service and the Dagster resource each hold the one ``ModelConfig``."""
    others = set()
    for rel, tree in _sources():
        if rel == HOME:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "ModelConfig":
                others.add(f"{rel}:class ModelConfig")
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") in ("DEFAULT_MODEL", "DEFAULT_TIMEOUT")
                                                    for t in node.targets) \
                    and isinstance(node.value, ast.Constant) and node.value.value in ("poimen/extractive", 600.0):
                others.add(f"{rel}:{node.lineno} model default")
            if isinstance(node, ast.ClassDef) and any(getattr(d, "id", getattr(d, "attr", "")) == "dataclass" or
                                                      getattr(getattr(d, "func", None), "id", "") == "dataclass"
                                                      for d in node.decorator_list):
                fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
                if "api_base" in fields:
                    others.add(f"{rel}:dataclass {node.name} spells api_base")
    assert not others, f"the model config spelled outside {HOME}: {sorted(others)}"

    from poimen.serve.service import ReadService
    from poimen.settings import ModelConfig
    from poimen.write.core import RunRequest
    from resources import LLMResource

    assert isinstance(RunRequest(root=Path(".")).model, ModelConfig)
    assert isinstance(ReadService(Path("."), Path("index.duckdb")).model, ModelConfig)
    assert LLMResource(model="openai/x", api_base="http://127.0.0.1:9/v1", timeout_seconds=5,
                       cache=False).client_config() == ModelConfig("openai/x", "http://127.0.0.1:9/v1", 5.0)


@pytest.mark.parametrize("root, kind", [("logs/a", Path), ("file:///tmp/l", Path), ("s3://bucket/p", str),
                                        ("gs://bucket/p", str)])
def test_one_parser_reads_a_log_root(root, kind):
    from poimen.settings import log_root

    assert isinstance(log_root(root), kind)
    assert str(log_root(root)) == (root if kind is str else root.removeprefix("file://"))


def test_a_root_no_store_takes_is_refused_in_one_line_naming_it():
    from poimen.errors import PoimenError
    from poimen.settings import log_root

    with pytest.raises(PoimenError) as err:
        log_root("ftp://host/log")
    assert str(err.value).startswith("event log root ftp://host/log: ") and "\n" not in str(err.value)
