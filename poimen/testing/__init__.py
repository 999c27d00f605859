"""Typed fakes for poimen's tests and benchmarks: a scripted gate, a loopback OpenAI-compatible server, a kill harness.

They live in the package (not under ``tests/``) because the benchmark's
reliability section drives them too; nothing in poimen's own code paths imports
this package.
"""
