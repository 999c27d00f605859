"""Let a multiprocess run's fork server import the code location, which is not installed in site-packages.

The code location (``pipelines``, ``assets``, ``resources``) is imported from the repository's root: Dagster's
code server, run and step processes find it through their working directory (``workspace.yaml``'s
``working_directory``, or `dg launch` / `dagster dev` run from the root). A fork server does not: it is a new
interpreter started with the launching process's environment, and on Python 3.11 it ignores the ``sys.path`` it is
handed and swallows an ``ImportError`` of a preload module. So it finds only what its working directory and
``PYTHONPATH`` hold: launched outside the repository it skipped ``pipelines.preload`` without a word, and every step
process imported Dagster, litellm and pandas itself (docs/scale.md). Light on purpose: no Dagster import here.
"""

import os
from collections.abc import MutableMapping
from pathlib import Path

# The folder this code location is imported from: the repository's root.
CODE_ROOT = Path(__file__).resolve().parents[1]


def fork_server_imports_the_code_location(environ: MutableMapping[str, str] = os.environ) -> None:
    """Put ``CODE_ROOT`` first on ``PYTHONPATH`` (once), for the fork server this process is about to start."""
    paths = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(CODE_ROOT) not in paths:
        environ["PYTHONPATH"] = os.pathsep.join([str(CODE_ROOT), *paths])
