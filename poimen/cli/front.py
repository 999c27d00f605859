"""``mem``'s front door: ``lookup``, ``context`` and ``ask`` handed to a running ``mem serve --http`` before typer loads.

A warm server answers a lookup in tens of milliseconds, but the full CLI spends ~0.25 s importing typer, click,
pydantic and every command module before it asks. So the console script first reads its argv here, with the
standard library and a few small poimen modules only. When the argv is one of these three commands in a plain form
(a positional, the commands' own options as separate ``--name value`` words, each at most once, values the full CLI
would accept) and ``poimen.serve.client`` finds a live server for the resolved log, index and settings, the read is
posted to it and printed by ``poimen.cli.readout``, the code the full command prints with. Anything else returns False
and the full CLI runs as if this did not exist: another command, ``--help``, an option it does not know (``--embedder``,
``--opt=value``), a value out of range, no server, a stale ``serve.json``, a server that fails or answers an error,
an ``ask`` whose model (``--model``, ``--api-base``, ``--timeout``) is not the one the server calls. The
full command then reports every problem itself, with its usual message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from poimen.cli.argv import is_text, utf8_problem
from poimen.errors import PoimenError
from poimen.settings import embedder, log_root, no_server

Parse = Callable[[str], Any]


def _int(low: int, high: int | None = None) -> Parse:
    """An integer within ``[low, high]``, as typer's ``min``/``max`` check it."""
    def parse(raw: str) -> int:
        value = int(raw)
        if value < low or (high is not None and value > high):
            raise ValueError(raw)
        return value
    return parse


def _timeout(raw: str) -> float:
    value = float(raw)
    if not value >= 0.001:
        raise ValueError(raw)
    return value


# Per command: the name of its one positional, and its options: word -> (parameter, parser; None for a flag).
# ``log``/``db`` locate the index and ``json`` picks the output; the rest are the read's own parameters.
_PATHS = {"--log": ("log", str), "--db": ("db", str)}
COMMANDS: dict[str, tuple[str, dict[str, tuple[str, Parse | None]]]] = {
    "lookup": ("text", {**_PATHS, "-k": ("k", _int(1, 1000)), "--lines": ("lines", _int(1)),
                        "--explain": ("explain", None), "--json": ("json", None)}),
    "context": ("question", {**_PATHS, "--budget": ("budget", _int(16)), "--json": ("json", None)}),
    "ask": ("question", {"--log": ("log", str), "--query": ("query", str), "--model": ("model", str),
                         "--api-base": ("api_base", str), "--timeout": ("timeout", _timeout),
                         "--budget": ("budget", _int(16)), "--json": ("json", None)}),
}
# The read's parameters when an option is not given: the full commands' defaults.
DEFAULTS = {"lookup": {"k": 10, "explain": False, "lines": 4},
            "context": {"budget": 2000},
            "ask": {"question": None, "query": None, "budget": 2000, "model": None, "api_base": None, "timeout": None}}


def parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``(command, options)`` for a plain warm-able argv, else None (the full CLI parses it)."""
    if not argv or argv[0] not in COMMANDS or any(map(utf8_problem, argv)):
        return None  # a word that is not UTF-8 text: the full command names it
    command, (positional, options) = argv[0], COMMANDS[argv[0]]
    given: dict[str, Any] = {}
    words = iter(argv[1:])
    for word in words:
        if not word.startswith("-") or is_text(word):
            name, value = positional, word
        elif word in options:
            name, parser = options[word]
            if parser is None:
                value = True
            else:
                raw = next(words, None)
                if raw is None or (raw.startswith("-") and not is_text(raw)):
                    return None
                try:
                    value = parser(raw)
                except ValueError:
                    return None
        else:
            return None
        if name in given:
            return None
        given[name] = value
    return command, given


def _embedder_id(command: str) -> str | None:
    """The query embedder the full command would insist the server uses: ``mem context`` reads ``--embedder`` from
    ``$POIMEN_EMBEDDER`` (numpy loads with its spelling, only then); lookup and ask take the server's."""
    name = embedder() if command == "context" else None
    if not name:
        return None
    from poimen.embedding.embedders import embedder_id

    return embedder_id(name)


def _request(command: str, given: dict[str, Any]) -> tuple[Path, Path, dict[str, Any]] | None:
    """The log root, the index and the read's parameters, as the full command resolves them; None when the full
    command would refuse the argv (a missing positional, a question and a query both or neither)."""
    from poimen.index import default_db

    params = {**DEFAULTS[command], **{k: v for k, v in given.items() if k not in ("log", "db", "json")}}
    if command == "ask" and (params["question"] is None) == (params["query"] is None):
        return None
    if command != "ask" and COMMANDS[command][0] not in params:
        return None
    try:
        root = log_root(given.get("log"))
    except PoimenError:  # a URI no log takes, or POIMEN_HOME naming one: the full command says so
        return None
    if not isinstance(root, Path):  # a log on an object store: the full command refuses it for a read
        return None
    db = Path(given["db"]) if given.get("db") else default_db(root)
    return root, db, params


def warm(argv: list[str]) -> bool:
    """Answer ``mem <argv>`` from a running server and print it as the full command would; False: not done here."""
    if no_server():
        return False
    parsed = parse(argv)
    request = _request(*parsed) if parsed else None
    if request is None:
        return False
    from poimen.serve.client import remote

    command, given = parsed
    root, db, params = request
    shape = remote(root, db, command, params, _embedder_id(command))
    if shape is None:
        return False
    from poimen.cli import readout

    if given.get("json"):
        readout.print_json(shape)
    elif command == "lookup":
        readout.print_hits(readout.console(), shape, params["explain"])
    elif command == "context":
        readout.print_context(readout.console(), shape, params["budget"])
    else:
        readout.print_answer(readout.console(), shape)
    return True
