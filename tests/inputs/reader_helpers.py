"""Reader fixtures: hand-written exports under tests/fixtures/readers, copied under tmp_path before a test reads them."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "readers"


def fixture(tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    """A copy under tmp_path (a test never reads a file another may rename), optionally under another name."""
    out = tmp_path / (as_name or name)
    shutil.copy(FIXTURES / name, out)
    return out


def lines_of(path: Path, first: int, last: int) -> str:
    return "\n".join(path.read_text(encoding="utf-8").split("\n")[first - 1:last])
