"""``mem``'s entry point (``poimen.cli:main``), kept light so that a warm read never loads typer.

``main`` first offers the argv to the front door (``poimen.front``), which hands ``lookup``, ``context`` and ``ask``
to a running ``mem serve --http``; everything else, and anything the front door declines, runs the full typer app
in ``poimen.cli_app``. The app's names (``app``, ``fail``, ``out``, the shared options) stay importable from here,
loaded on first use, so ``from poimen.cli import app`` keeps working for the command modules and the tests.
"""

from __future__ import annotations

import importlib
import sys


def main() -> None:
    from poimen.front import warm

    if warm(sys.argv[1:]):
        return
    importlib.import_module("poimen.cli_app").main()


def __getattr__(name: str):
    if name.startswith("__"):  # import machinery and tools probing the module: not the app's names
        raise AttributeError(f"module 'poimen.cli' has no attribute {name!r}")
    return getattr(importlib.import_module("poimen.cli_app"), name)


if __name__ == "__main__":
    main()
