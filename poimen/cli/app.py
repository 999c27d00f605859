"""``mem``: poimen from the command line. A thin layer: parse options, call the core, print.

The console script enters through ``poimen.cli.entry`` (light: a warm read skips this module); this is the typer app.
It lists its command modules here, in the order ``mem --help`` shows them: each module holds one ``typer.Typer``
of module-level commands (merged into ``mem`` itself, or a named group: ``mem log``, ``mem model``,
``mem symptoms``), and takes what the commands share from ``poimen.cli.options``, never from here.

User errors print one line to stderr and exit 1; nothing prints a traceback
for a bad input.
"""

from __future__ import annotations

import sys

import typer

from poimen.cli.args import TextGroup
from poimen.cli.commands import agent, ask, context, forget, index, log, model, run, serve, show, symptoms
from poimen.cli.options import err, explain
from poimen.errors import PoimenError

app = typer.Typer(help="poimen: gated memory over long streams, with evidence.", no_args_is_help=True, cls=TextGroup,
                  add_completion=False, pretty_exceptions_enable=False)
for commands in (run.app, log.app, ask.app, agent.app, context.app, forget.app, index.app, serve.app, show.app):
    app.add_typer(commands)
app.add_typer(log.log_app, name="log")
app.add_typer(model.app, name="model")
app.add_typer(symptoms.app, name="symptoms")


def main() -> None:
    try:
        app()
    except PoimenError as exc:  # a last net: user errors never show a traceback
        err.print(f"[red]error:[/red] {explain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
