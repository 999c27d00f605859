"""The Dagster code location: ``pipelines.definitions`` is loaded by ``workspace.yaml`` and the CLI."""
