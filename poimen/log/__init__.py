"""The event log: the only authority. Journals while a run is live, sealed Parquet segments after."""

from poimen.log.events import Event, EventDraft, chain
from poimen.log.journal import RunJournal
from poimen.log.store import EventLog, default_root
from poimen.log.verify import VerifyReport, verify

__all__ = ["Event", "EventDraft", "EventLog", "RunJournal", "VerifyReport", "chain", "default_root", "verify"]
