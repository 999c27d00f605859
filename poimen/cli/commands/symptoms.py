"""``mem symptoms project | show``: generate and inspect symptom projections (what a memory would explain)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from poimen.cli.options import ApiBaseOpt, JsonOpt, LogOpt, ModelOpt, TimeoutOpt, err, fail, out, root_of
from poimen.cli.terminal import print_json_lines
from poimen.errors import PoimenError

app = typer.Typer(help="Symptom projections of accepted L1/L2 memories.", no_args_is_help=True)


@app.command()
def project(
    log: Optional[Path] = LogOpt,
    model: Optional[str] = ModelOpt,
    api_base: Optional[str] = ApiBaseOpt,
    timeout: Optional[float] = TimeoutOpt,
    concurrency: int = typer.Option(4, min=1, help="Model calls in flight at once."),
) -> None:
    """Write a symptom projection for each sealed L1/L2 run's final memory that has none for this model.

    Example: mem symptoms project --log .poimen && mem rebuild --from-log --log .poimen
    """
    import asyncio

    from poimen.llm.client import client_for, reply_cache
    from poimen.settings import ModelConfig
    from poimen.log.store import EventLog
    from poimen.write.symptoms import project_log

    root = root_of(log)
    if not (root / "index.jsonl").exists():
        fail(f"{root}: no event log here (no index.jsonl); run `mem run` first or pass --log")
    try:
        client = client_for(ModelConfig(model, api_base, timeout, cache_dir=reply_cache(root)))
        event_log = EventLog(root)
        with event_log.writer(), err.status("projecting symptoms"):
            counts = asyncio.run(project_log(event_log, client, concurrency))
    except PoimenError as exc:
        fail(exc)
    out.print(" · ".join(f"{k} {v}" for k, v in counts.items()) + f" · model {client.model_id}", highlight=False)


@app.command()
def show(
    sha: str = typer.Argument(..., help="Memory sha (a unique prefix is enough)."),
    log: Optional[Path] = LogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print the symptom projection of a memory, with the model id and prompt sha that produced it.

    Examples:
      mem symptoms show 3f9e2c1a
      mem symptoms show 3f9e2c1a --json | jq -r '.symptoms[]'
    """
    from poimen.log.store import EventLog
    from poimen.write.symptoms import projections

    prefix = sha.strip().lower()
    if len(prefix) < 4:
        fail("give at least 4 hex digits of the memory sha")
    found = {s: p for s, p in projections(EventLog(root_of(log))).items() if s.startswith(prefix)}
    if not found:
        fail(f"no symptom projection for a memory sha starting {prefix} (run `mem symptoms project`)")
    if len(found) > 1:
        fail(f"{prefix} is ambiguous: " + ", ".join(s[:16] for s in sorted(found)))
    (p,) = found.values()
    if as_json:
        return print_json_lines([{**asdict(p), "symptoms": p.text.splitlines()}])
    template_sha = p.template_sha
    out.print(f"memory {p.memory_sha} ({p.level})", highlight=False, soft_wrap=True)
    out.print(f"model {p.model_id} · prompt sha {p.prompt_sha} · template sha {template_sha}", highlight=False,
              soft_wrap=True)
    if not p.text:
        out.print("(empty: the model found that this memory explains no failure; no symptom vector)",
                  highlight=False)
    for line in p.text.splitlines():
        out.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
