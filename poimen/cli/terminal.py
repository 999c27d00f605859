"""What ``mem`` draws: run progress on stderr, and tables whose ids stay whole on a narrow terminal.

rich shrinks every column of a table that is wider than the terminal, and an id cut to ``HADOOP-1…`` or
``q-59c922…`` can no longer be pasted into the next command. So a table that does not fit is printed as records
instead, one ``column  value`` line each (psql's expanded display): nothing is cut, and every id is on one line.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text


def print_json_lines(records: Iterable[dict]) -> None:
    """One JSON object per line on stdout, written as each record comes (no rich: nothing wraps or styles it)."""
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def print_table(console: Console, headers: Sequence[str], rows: Sequence[Sequence[str]], wrap: Sequence[str] = ()) -> None:
    """A table when it fits the console, else one record per row; cells print verbatim (no markup).

    Only the ``wrap`` columns (free text such as a note) may wrap inside the table; every other cell is kept
    whole, and when they cannot all be, the rows print as records."""
    table = Table()
    for header in headers:
        table.add_column(header, no_wrap=header not in wrap)
    for row in rows:
        table.add_row(*(Text(str(c)) for c in row))
    if _least_width(headers, rows, wrap) <= console.width:
        console.print(table)
        return
    label = max(len(h) for h in headers)
    for n, row in enumerate(rows, start=1):
        console.print(f"-[ {n} ]" + "-" * max(0, min(console.width, 40) - 6 - len(str(n))), highlight=False)
        for header, cell in zip(headers, row):
            console.print(f"{header:<{label}}  {cell}", highlight=False, markup=False, soft_wrap=True)


def _least_width(headers: Sequence[str], rows: Sequence[Sequence[str]], wrap: Sequence[str]) -> int:
    """The narrowest the table can be with no cell cut: whole cells, but the longest word of a ``wrap`` column
    (and of a header, which may wrap), plus a space either side of each cell and the borders between them."""
    from rich.cells import cell_len

    def longest_word(text: str) -> int:
        return max((cell_len(w) for w in str(text).split()), default=0)

    widths = [max([longest_word(h)] + [longest_word(r[i]) if h in wrap else cell_len(str(r[i])) for r in rows])
              for i, h in enumerate(headers)]
    return sum(widths) + 3 * len(headers) + 1


@contextlib.contextmanager
def run_progress(console: Console) -> Iterator[tuple]:
    """``(on_start, on_turn)`` hooks for ``run_loops`` that draw, on a terminal, one bar for all the chunks and one
    per run in flight (its query × stream, turn of total, gates opened); each run's bar goes when it has read its
    last chunk. Off a terminal they draw nothing, so piped and captured output stays clean."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False, disable=not console.is_terminal) as progress:
        overall = progress.add_task("reading", total=None)
        runs: dict[tuple, int] = {}
        opened = {"all": 0, "tokens": 0}
        per_run: dict[tuple, int] = {}

        def on_start(total: int) -> None:
            progress.update(overall, total=total)

        def on_turn(plan, turn: int, gate_opened: bool, memory_tokens: int) -> None:
            key = (plan.level, plan.query.id, plan.stream.id)
            total = len(plan.stream.chunk_shas)
            if key not in runs:
                runs[key] = progress.add_task("", total=total, completed=turn - 1)
                per_run[key] = 0
            per_run[key] += gate_opened
            opened["all"] += gate_opened
            opened["tokens"] = max(opened["tokens"], memory_tokens)
            progress.update(runs[key], completed=turn,
                            description=f"  {plan.level} {plan.query.id} × {plan.stream.id} · {per_run[key]} opened")
            progress.update(overall, advance=1, description=f"chunks read · gates opened {opened['all']} · "
                                                            f"memory ≤{opened['tokens']} tok")
            if turn >= total:
                progress.remove_task(runs.pop(key))

        yield on_start, on_turn
