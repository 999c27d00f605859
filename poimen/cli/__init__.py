"""The `mem` command line: the entry point, the front door, the typer app and its commands."""
