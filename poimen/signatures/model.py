"""The signature record, kept apart so every extractor can build one without import cycles."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("http", "exception", "exit", "signal", "errno", "k8s", "template", "advisory")


@dataclass(frozen=True)
class Signature:
    """One normalised failure found in a text.

    ``key`` is what a ``failure_signature`` row is looked up by, so it holds
    only what stays the same when the failure happens again: no timestamps,
    pod-name hashes, addresses, frame line numbers or request ids. ``span`` is
    the raw text it came from, for a person reading the row.
    """

    kind: str  # 'http' | 'exception' | 'exit' | 'signal' | 'errno' | 'k8s' | 'template' | 'advisory'
    tool: str  # 'python' | 'java' | 'go' | 'javascript' | 'rust' | 'nginx' | 'http' | 'kubernetes' | 'shell' | 'posix' | 'log' | 'cve' | 'ghsa'
    key: str
    span: str


# (offset of the match in the text, signature): offsets order the output.
Found = tuple[int, Signature]
