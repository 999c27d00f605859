"""The errors poimen raises on purpose. Each carries a one-line message naming its input."""


class PoimenError(Exception):
    """Base class: a user-facing error whose message is one readable line."""


class SourceError(PoimenError):
    """A source cannot be read as text (missing, binary, bad UTF-8, empty, outside the root)."""


class ParseError(PoimenError):
    """A model reply does not follow the gate format; ``reason`` says how."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ModelUnavailable(PoimenError):
    """A model call failed after the client's own retries: not a gate decision; the run stops resumably."""


class ModelRefused(PoimenError):
    """The model server refused the request itself (no or a bad key, a constraint it does not accept, an unknown
    model): asking again cannot help, so the whole command stops with this one line instead of retrying."""


class LogLocked(PoimenError):
    """Another writer holds the event log's lock."""


class LogCorrupt(PoimenError):
    """The event log fails verification; the message names the first bad event."""


class ConfigError(PoimenError):
    """A configuration file (queries.yaml, a prompt template) is invalid."""
