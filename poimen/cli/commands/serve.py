"""``mem serve``: poimen to other processes — the memory tools over MCP (stdio), or the read path over HTTP.

One command, two transports, because they answer different callers: ``--mcp`` gives an agent host one
namespace's memory tools; ``--http`` keeps lookup, context and ask warm for the CLI and for scripts (the
``mem lookup|context|ask`` commands use it by themselves when it runs) and serves the lineage page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    from poimen.cli.entry import LogOpt, err, fail
    from poimen.cli.commands.agent import ArchiveOpt, NsOpt, _memory
    from poimen.cli.commands.index import DbOpt, EmbedderOpt, _embedder, _paths
    from poimen.cli.commands.show import SourcesOpt
    from poimen.errors import PoimenError

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
    ) -> None:
        """Serve the memory tools of one namespace to an agent host (--mcp), or the read path over HTTP (--http).

        With --http the embedder and the index load once; `mem lookup`, `mem context` and `mem ask` on the same
        log then use this server instead of loading them again (and fall back by themselves when it stops).

        Examples:
          mem serve --mcp --ns dana
          mem serve --http --port 8750        (then: curl '127.0.0.1:8750/lookup?text=413', or open /show/<sha>)
        """
        if mcp == http:
            fail("choose one transport: --mcp (stdio) or --http (127.0.0.1)")
        if mcp:
            from poimen.serve.mcp import run

            return run(_memory(ns, log, archive))
        from poimen.serve.http import serve as serve_http
        from poimen.serve.service import ReadService

        root, db_path = _paths(log, db)
        service = ReadService(root, db_path, _embedder(embedder, root) if embedder else None,
                              list(sources) if sources else None)
        try:
            with err.status("loading the index and the embedder"):
                service.warm()
        except PoimenError as exc:
            fail(exc)

        def ready(url: str) -> None:
            err.print(f"serving {url} (lookup, context, ask; /show/<sha>) for {db_path}; Ctrl-C stops",
                      highlight=False, soft_wrap=True)

        try:
            serve_http(service, port, ready)
        except OSError as exc:
            fail(f"--port {port}: {exc.strerror or exc}")
