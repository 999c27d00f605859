"""The offline engine's answer to the symptom prompt: failure clauses and error strings, nothing invented.

For each sentence of the memory that describes a failure it keeps the
observable part (the clause before "because", "due to", "fixed by" …), and for
each failure signature in the memory it adds the error string as a user sees it
(the raw span, and the standard wording for an HTTP status, errno, signal or
Kubernetes reason). A memory with no failure cue gets an empty projection.
Like the rest of the offline engine it is a baseline, not a language model: it
cannot name symptoms the memory does not mention.
"""

from __future__ import annotations

import errno
import http
import os
import re

from poimen.llm.prompts import escape, sections
from poimen.signatures import extract_signatures
from poimen.text.words import split_sentences

_FAILURE = re.compile(
    r"\b(fail\w*|error\w*|exception|crash\w*|refus\w*|time[sd]? ?out|timeout|oom\w*|killed|panic\w*|segfault\w*|"
    r"segmentation|reject\w*|denied|unavailable|unreachable|restart\w*|backoff|leak\w*|outage|broke\w*|broken|"
    r"cannot|can't|unable|stuck|hang\w*|too large|exceed\w*|no space|[45]\d\d|exit code|evicted|throttl\w*|"
    r"spik\w*|degrad\w*|slow\w*|latenc\w*)\b",
    re.I,
)
_EXPLANATION = re.compile(r"\s*(?:[,;:]\s*)?\b(?:because|due to|caused by|root cause|fixed by|resolved (?:by|with)|"
                          r"mitigated by|so we|which we|after we)\b.*", re.I | re.S)
_FIX_ONLY = re.compile(r"^\s*(?:fixed|resolved|mitigated|rolled back|we (?:fixed|set|rolled|changed)|fix:)", re.I)
_SIGNALS = {"SIGSEGV": "Segmentation fault (core dumped)", "SIGKILL": "Killed", "SIGABRT": "Aborted (core dumped)",
            "SIGTERM": "Terminated", "SIGBUS": "Bus error (core dumped)"}
_K8S = {"OOMKilled": "Last State: Terminated, Reason: OOMKilled", "CrashLoopBackOff": "Back-off restarting failed container",
        "ImagePullBackOff": "Back-off pulling image", "ErrImagePull": "Failed to pull image", "Evicted": "The node was low on resource"}


def _standard_wording(key: str) -> str | None:
    kind, _, value = key.partition(":")
    if kind == "http" and value.isdigit():
        try:
            return f"HTTP {value} {http.HTTPStatus(int(value)).phrase}"
        except ValueError:
            return None
    if kind == "errno" and hasattr(errno, value):
        return f"{value}: {os.strerror(getattr(errno, value))}"
    if kind == "signal":
        return _SIGNALS.get(value)
    if kind == "k8s":
        return _K8S.get(value)
    if kind == "exit":
        return f"exited with code {value}"
    return None


def symptom_lines(memory: str) -> list[str]:
    lines: dict[str, None] = {}
    failing = [s for s in split_sentences(memory) if _FAILURE.search(s)]
    if not failing:
        return []
    for sentence in failing:
        observable = _EXPLANATION.sub("", sentence).strip(" .;,:")
        if observable and not _FIX_ONLY.match(sentence) and _FAILURE.search(observable):
            lines.setdefault(observable, None)
    for sig in extract_signatures("\n".join(failing)):
        span = sig.span.strip().splitlines()[0][:200] if sig.span.strip() else ""
        for line in (span, _standard_wording(sig.key)):
            if line and line.strip(" .") not in lines:
                lines.setdefault(line.strip(" ."), None)
    return list(lines)[:12]


def symptom(system: str, user: str) -> str:
    lines = symptom_lines(sections(user).get("memory", ""))
    return "<symptoms>" + escape("\n".join(lines)) + "</symptoms>"

