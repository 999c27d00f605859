"""``mem serve``: poimen to other processes — the memory tools over MCP (stdio), or the read path over HTTP.

One command, two transports, because they answer different callers: ``--mcp`` gives an agent host one
namespace's memory tools; ``--http`` keeps lookup, context and ask warm for the CLI and for scripts (the
``mem lookup|context|ask`` commands use it by themselves when it runs) and serves the lineage page.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.commands.agent import open_memory
from poimen.cli.options import (ApiBaseOpt, ArchiveOpt, DbOpt, EmbedderOpt, LogOpt, ModelOpt, NsOpt, SourcesOpt,
                                TimeoutOpt, err, fail, index_embedder, index_paths)
from poimen.errors import PoimenError
from poimen import settings

app = typer.Typer()

_TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{16,}")  # what a header and a cookie carry unquoted


def server_token(token_file: Optional[Path]) -> tuple[str, str]:
    """(token, where it came from): ``--token-file``, else ``$POIMEN_SERVE_TOKEN``, else a fresh random one."""
    if token_file is not None:
        try:
            token, source = token_file.read_text().strip(), f"--token-file {token_file}"
        except (OSError, UnicodeDecodeError) as exc:
            raise PoimenError(f"--token-file {token_file}: {getattr(exc, 'strerror', None) or exc}") from None
    elif settings.serve_token():
        token, source = settings.serve_token(), f"${settings.SERVE_TOKEN}"
    else:
        return secrets.token_urlsafe(32), "generated"
    if not _TOKEN.fullmatch(token):
        raise PoimenError(f"{source}: a token is at least 16 characters of A-Z a-z 0-9 . _ ~ + / = -")
    return token, source


@app.command()
def serve(
    mcp: bool = typer.Option(False, "--mcp", help="Serve one namespace's memory tools over MCP on stdio."),
    http: bool = typer.Option(False, "--http", help="Serve lookup, context, ask (JSON) and /show/<sha> pages "
                                                    "on 127.0.0.1, warm."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="--http: the port (default: a free one; "
                                                                 "mem finds it through <log>/serve.json)."),
    ns: Optional[str] = NsOpt,
    log: Optional[Path] = LogOpt,
    archive: Optional[str] = ArchiveOpt,
    db: Optional[Path] = DbOpt,
    embedder: Optional[str] = EmbedderOpt,
    sources: Optional[list[Path]] = SourcesOpt,
    model: Optional[str] = ModelOpt,
    api_base: Optional[str] = ApiBaseOpt,
    timeout: Optional[float] = TimeoutOpt,
    token_file: Optional[Path] = typer.Option(None, "--token-file", help=f"--http: read the bearer token from "
                                              f"this file (default: ${settings.SERVE_TOKEN}, else a random one)."),
) -> None:
    """Serve the memory tools of one namespace to an agent host (--mcp), or the read path over HTTP (--http).

    With --http the embedder and the index load once; `mem lookup`, `mem context` and `mem ask` on the same
    log then use this server instead of loading them again (and fall back by themselves when it stops).
    Every request carries the server's token (in <log>/serve.json, mode 0600); /ask calls the model this
    command was started with (--model, --api-base, --timeout), with this process's keys, never one a
    request names; /show pages show the --ns namespace's typed-store writes only.

    Examples:
      mem serve --mcp --ns dana
      mem serve --http --port 8750
      curl -H "Authorization: Bearer $(jq -r .token .poimen/serve.json)" '127.0.0.1:8750/lookup?text=413'
    """
    if mcp == http:
        fail("choose one transport: --mcp (stdio) or --http (127.0.0.1)")
    if mcp:
        from poimen.serve.mcp import run

        return run(open_memory(ns, log, archive))
    from poimen.serve.http import serve as serve_http
    from poimen.serve.service import ReadService

    root, db_path = index_paths(log, db)
    namespace = settings.namespace(ns)
    try:
        token, token_source = server_token(token_file)
    except PoimenError as exc:
        fail(exc)
    service = ReadService(root, db_path, index_embedder(embedder, root) if embedder else None,
                          list(sources) if sources else None, model=settings.ModelConfig(model, api_base, timeout),
                          namespace=namespace)
    try:
        with err.status("loading the index and the embedder"):
            service.warm()
    except PoimenError as exc:
        fail(exc)

    def ready(url: str, state: Path) -> None:
        where = "generated" if token_source == "generated" else f"from {token_source}"
        err.print(f"serving {url} (lookup, context, ask; /show/<sha>) for {db_path}, namespace {namespace}; "
                  f"token {where}, stored in {state} (mode 0600): send Authorization: Bearer <token>, or open "
                  f"{url}/show/<sha>?token=<token> once in a browser; Ctrl-C stops",
                  highlight=False, soft_wrap=True)

    try:
        serve_http(service, token, port, ready)
    except OSError as exc:
        fail(f"--port {port}: {exc.strerror or exc}")
