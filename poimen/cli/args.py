"""The typer group ``mem`` runs as: every command's text arguments are checked as UTF-8 text before any command
body runs, and a pasted line that starts with ``-`` reaches the command as its positional text.

Done here, where a command is resolved, so no command repeats it and none can forget it (the word rules are
``poimen.cli.argv``'s, shared with the front door).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

from poimen.cli.argv import is_text, utf8_problem


def guard_text(cmd: Any) -> None:
    """Wrap the callback of ``cmd`` (and of every subcommand) so that a parsed string value that is not UTF-8 text
    is a usage error naming its parameter, as a bad ``-k`` is, before the command makes a folder or writes a byte.
    Paths arrive as ``Path`` and pass: a file name need not be UTF-8."""
    for sub in getattr(cmd, "commands", {}).values():
        guard_text(sub)
    if cmd.callback is None or getattr(cmd.callback, "_text_guarded", False):
        return
    cmd.callback = _checked(cmd.callback, cmd.params)


def _checked(callback: Callable[..., Any], params: list[Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(**values: Any) -> Any:
        for param in params:
            value = values.get(param.name)
            for item in value if isinstance(value, (list, tuple)) else [value]:
                problem = utf8_problem(item) if isinstance(item, str) else None
                if problem:
                    raise typer.BadParameter(problem, param=param)
        return callback(**values)

    run._text_guarded = True  # type: ignore[attr-defined]
    return run


def text_positionals(cmd: Any, ctx: Any, args: list[str]) -> list[str]:
    """``args`` with each word that is text though it starts with ``-`` (``poimen.cli.argv.is_text``) moved, with the
    other positionals in their order, behind a ``--``, so click takes it as the positional; unchanged when there is
    no such word or ``cmd`` takes no positional."""
    if not any(isinstance(p, TyperArgument) for p in cmd.params):
        return args
    takes_value = {name: False for name in ctx.help_option_names}
    for p in cmd.params:
        if isinstance(p, TyperOption):
            takes_value.update({name: not (p.is_flag or p.count) for name in (*p.opts, *p.secondary_opts)})
    kept: list[str] = []
    positional: list[str] = []
    words = iter(args)
    for word in words:
        if word == "--":
            positional.extend(words)
        elif word in takes_value:
            value = next(words, None) if takes_value[word] else None
            kept.extend([word] if value is None else [word, value])
        elif word.startswith("-") and word != "-" and not is_text(word):
            kept.append(word)
        else:
            positional.append(word)
    return [*kept, "--", *positional] if any(map(is_text, positional)) else args


class TextGroup(TyperGroup):
    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None:
            guard_text(cmd)
            if not isinstance(cmd, TyperGroup):
                rest = text_positionals(cmd, ctx, rest)
        return name, cmd, rest
