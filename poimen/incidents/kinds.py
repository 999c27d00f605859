"""What kind of failure a record prints, for telling one failure from the next in a stream (``poimen.incidents.flow``):
the error and exception names it gives, and its failure signatures with the error names it prints; and what kind of
attempt a line names or makes."""

from __future__ import annotations

import re

from poimen.inputs.records import Record
from poimen.signatures import extract_signatures

_RAISED = re.compile(r"\b\w+(?:Error|Exception|Fault)\b")
# An error's name as programs print it ("CannotPullContainerError", "SocketTimeoutException"): two failures that name
# the same one are one kind, whatever else their lines say (bench/incidents9: an ECS task's stop reason, then the
# service event that retells it after a redeploy that changed nothing).
_ERROR_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+(?:Error|Exception|Fault)\b")


def raised(record: Record) -> frozenset[str]:
    """The error and exception names a record gives ("OutOfMemoryError"): a failure's echo gives its cause's."""
    return frozenset(_RAISED.findall(record.text))


def signatures(record: Record) -> frozenset[str]:
    """What kind of failure a record prints: its failure signatures and the error names it prints."""
    return frozenset(sig.key for sig in extract_signatures(record.text)) | \
        frozenset(m.group(0) for m in _ERROR_NAME.finditer(record.text))


# The attempts people name by their kind: a note's "rollback", "restart", "redeploy" names the command that did it
ATTEMPTS = (("rollback", re.compile(r"\broll(?:ed|ing)?[ -]?back\b|\brollout\s+undo\b", re.I)),
            ("restart", re.compile(r"\brestart\w*|\brollout\s+restart\b|\bbounc(?:e|ed|ing)\b", re.I)),
            ("redeploy", re.compile(r"\bre-?deploy\w*|--force-new-deployment\b", re.I)))


def attempts(text: str) -> frozenset[str]:
    """The kinds of attempt ``text`` names or makes ("kubectl rollout restart …", "# restart bought nothing")."""
    return frozenset(name for name, attempt in ATTEMPTS if attempt.search(text))
