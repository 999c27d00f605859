"""The `mem` command line: the entry point, the front door, the typer app and its commands.

``main`` is the console script (``poimen.cli.entry:main``, the name an installed `mem` was made with); it loads only
``poimen.cli.entry``, which keeps a warm read from loading typer."""


def main() -> None:
    from poimen.cli.entry import main as run

    run()
