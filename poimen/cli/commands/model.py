"""``mem model serve``: a local OpenAI-compatible model server (xllamacpp, the ``poimen[local]`` extra)."""

from __future__ import annotations

from typing import Optional

import typer

from poimen.cli.options import err, fail, out
from poimen.errors import PoimenError
from poimen.llm import local

app = typer.Typer(help="A local model engine: no key, no network.", no_args_is_help=True)


@app.command()
def serve(
    model: Optional[str] = typer.Option(None, help=f"A GGUF file, a folder with one, or an installed package "
                                                   f"that ships one (default: {local.DEFAULT_PACKAGE})."),
    port: int = typer.Option(local.DEFAULT_PORT, min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."),
    ctx_size: int = typer.Option(local.DEFAULT_CTX, min=512, help="Context tokens: a chunk, the memory, the "
                                                                 "template and the reply must fit."),
    threads: int = typer.Option(0, min=0, help="CPU threads (0: every core this process may use)."),
    verbose: bool = typer.Option(False, "--verbose", help="Show the server's own log."),
) -> None:
    """Serve a GGUF model on 127.0.0.1 with an OpenAI-compatible API until Ctrl-C.

    Example (then, in another shell, the command it prints):
      mem model serve --model ~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf --port 8080
    """
    try:
        path = local.resolve_model(model)
        name = f"openai/{local.alias(path)}"

        def ready(api_base: str) -> None:
            out.print(f"{local.READY}{api_base}", highlight=False, soft_wrap=True)
            err.print(f"serving {path.name} · Ctrl-C stops it · use it with:\n  mem run --model {name} "
                      f"--api-base {api_base} --constrain llamacpp ...", highlight=False, soft_wrap=True)
            out.file.flush()

        local.serve(local.ServeConfig(path, port, ctx_size, threads, verbose), ready)
    except PoimenError as exc:
        fail(exc)
