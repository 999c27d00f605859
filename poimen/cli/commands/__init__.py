"""The command modules of ``mem``: each holds one ``typer.Typer`` of module-level commands, which ``poimen.cli.app``
lists by name."""
