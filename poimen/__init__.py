"""poimen: gated recurrent memory with evidence-linked, hash-chained events.

The package is framework-free; the Dagster code location (``pipelines/``,
``assets/``, ``resources/``) is a thin layer over it.
"""

from poimen.settings import offline_defaults

offline_defaults()

__version__ = "0.1.0"
