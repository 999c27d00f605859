"""Sources that must be refused with one line naming the file: the bad-input tests and the reliability bench use them."""

from __future__ import annotations

import json
import os
from pathlib import Path


def bad_sources(d: Path) -> dict[str, tuple[Path, str]]:
    """Write every kind of bad source into ``d``: name → (path, what its one-line error must say)."""
    (d / "binary.log").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    (d / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    (d / "empty.md").write_bytes(b"")
    (d / "blank.md").write_text("   \n\n\t\n")
    deep = "[" * 5000 + "]" * 5000
    (d / "nested.jsonl").write_text(json.dumps({"text": "fine"}) + "\n" + json.dumps({"text": "x", "deep": json.loads("[" * 100 + "]" * 100)}) + "\n" + deep + "\n")
    os.symlink(d / "loop-b.md", d / "loop-a.md")
    os.symlink(d / "loop-a.md", d / "loop-b.md")
    (d / "image.png").write_bytes(b"\x89PNG\r\n")
    return {
        "binary": (d / "binary.log", "binary file"),
        "invalid-utf8": (d / "latin1.txt", "invalid UTF-8 at byte 3"),
        "empty": (d / "empty.md", "empty file"),
        "whitespace-only": (d / "blank.md", "no text"),
        "deeply-nested-json": (d / "nested.jsonl", "nested deeper"),
        "symlink-loop": (d / "loop-a.md", "looping symlink"),
        "missing": (d / "no-such-file.md", "no such file"),
        "unsupported-type": (d / "image.png", "unsupported type"),
        "directory": (d, "not a regular file"),
    }
