"""Failure signatures: normalised keys for the failures a text shows.

A signature is what lets the next occurrence of a failure find the memory that
explained the last one by exact match (a ``failure_signature`` row) instead of
by vector search. So a key keeps what identifies the failure (status code,
exception class, message shape, innermost frames, errno, reason, log template)
and drops whatever differs between occurrences (timestamps, pod-name hashes,
addresses, frame line numbers, request ids).

Usage::

    from poimen import signatures
    signatures.signature_keys(curl_trace)   # ['http:413']
    signatures.signature_keys("bump jackson for CVE-2020-8840")   # ['cve:CVE-2020-8840']
"""

from __future__ import annotations

from poimen.signatures import advisories, exceptions, status, templates
from poimen.signatures.markup import strip_markup
from poimen.signatures.model import KINDS, Found, Signature

__all__ = ["KINDS", "Signature", "extract_signatures", "signature_keys"]


def extract_signatures(text: str) -> list[Signature]:
    """Every failure signature in ``text``, de-duplicated by key, in order of first appearance.

    Deterministic and total: any string (evidence chunk, pasted error, prose)
    is accepted, and a text with no failure in it gives ``[]``. Markup around
    pasted code (``{code}``, fences, ``<pre>``) is removed first (``markup``),
    so a wrapped trace keys like the bare one.
    """
    if not text or not text.strip():
        return []
    text = strip_markup(text.replace("\r\n", "\n").replace("\r", "\n"))
    found: list[Found] = []
    consumed: list[tuple[int, int]] = []
    for reader in (
        exceptions.python_tracebacks,
        exceptions.java_traces,
        exceptions.go_panics,
        exceptions.javascript_errors,
        exceptions.rust_panics,
    ):
        hits, spans = reader(text)
        found.extend(hits)
        consumed.extend(spans)
    bare = exceptions.bare_exceptions(text, consumed)
    found.extend(bare)
    consumed.extend((offset, offset + len(sig.span)) for offset, sig in bare)
    for reader in (status.http_statuses, status.exits_and_signals, status.errnos, status.k8s_reasons,
                   advisories.advisories):
        found.extend(reader(text))
    for offset, shaped, raw in templates.log_templates(text, consumed):
        found.append((offset, Signature("template", "log", f"log:{shaped}", raw)))

    # sorted() is stable, so signatures found at the same offset keep the
    # order their reader gave them (an exit code before the signal it encodes).
    seen: set[str] = set()
    out: list[Signature] = []
    for _, sig in sorted(found, key=lambda hit: hit[0]):
        if sig.key not in seen:
            seen.add(sig.key)
            out.append(sig)
    return out


def signature_keys(text: str) -> list[str]:
    """The keys of :func:`extract_signatures`, in the same order."""
    return [sig.key for sig in extract_signatures(text)]
