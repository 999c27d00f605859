"""Benchmarks for poimen: data builders, baselines and the report they write (not timed tests)."""
