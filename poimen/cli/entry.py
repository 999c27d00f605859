"""``mem``'s entry point (``poimen.cli.entry:main``), kept light so that a warm read never loads typer.

``main`` first offers the argv to the front door (``poimen.cli.front``), which hands ``lookup``, ``context`` and ``ask``
to a running ``mem serve --http``; everything else, and anything the front door declines, runs the full typer app
in ``poimen.cli.app``, loaded only then.
"""

from __future__ import annotations

import importlib
import sys


def main() -> None:
    """Run the command, then exit with its code from outside every handler.

    A command that fails raises inside an ``except`` block, and the exit's exception chain keeps that block's
    frames, and the Arrow tables in their locals, alive into interpreter teardown; pyarrow's reader threads then
    die after its thread pool and the process aborts (``terminate called without an active exception``, exit
    134, about one run in six of ``mem ask --query`` for an unknown query). So the code is taken, the chain let
    go, and whatever it held collected while Arrow still works.
    """
    code = _run()
    if code not in (0, None):  # a collection costs ~0.1 s with the app loaded: only where the chain held frames
        import gc

        gc.collect()
    sys.exit(code)


def _run() -> int | str | None:
    from poimen.cli.front import warm

    try:
        if not warm(sys.argv[1:]):
            importlib.import_module("poimen.cli.app").main()
    except SystemExit as stop:
        return stop.code
    return 0


if __name__ == "__main__":
    main()
