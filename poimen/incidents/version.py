"""The version of the code that cuts a stream into incidents: what an incident run records it was cut by.

An incident run names one incident of a stream as the code of its day cut it. When the readers, the cut, the roles
or the card change, the same stream is cut differently: its old incident runs are history (as a source's earlier
version is), and the next build cards the stream again under the new version. ``CUT_VERSION`` is the sha256 of the
source of every module that decides a cut (the readers and records, signatures and line levels, the incidents
package, the incident plan), so no one has to remember to bump it; it changes with a comment too, which costs one
card per incident at the next build.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]  # poimen/
SHAPES_A_CUT = ("incidents", "inputs", "signatures", "text", "write/incident_plan.py")


@functools.cache
def cut_version() -> str:
    """The first 16 hex of the sha256 of the cut's source files, in path order."""
    h = hashlib.sha256()
    for part in SHAPES_A_CUT:
        path = _ROOT / part
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            h.update(file.relative_to(_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return h.hexdigest()[:16]
