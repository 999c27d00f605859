"""A client that answers from a run's recorded replies: replaying a loop makes no model call.

The log keeps the raw reply of every call (a gate event holds the replies of
its failed attempts in ``attrs.replies`` and the one that parsed in ``text``;
a parse failure holds all of them; a symptom event its ``attrs.reply``), keyed
by the sha of exactly what the model was sent (``prompt_sha``). Asked the same
prompt again, this client returns the same reply, in the same order; asked a
prompt that was never sent, it raises ``ReplayMiss`` naming its sha, because
then the code that rendered it, or what it read, has changed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence

from poimen.domain import EventKind
from poimen.errors import PoimenError
from poimen.llm.client import Completion
from poimen.log import payloads as P
from poimen.log.events import Event
from poimen.llm.prompts import Rendered


class ReplayMiss(PoimenError):
    """A replayed run sent a prompt that its recorded run never sent (or sent fewer times)."""

    def __init__(self, run_id: str, prompt_sha: str):
        super().__init__(f"run {run_id[:16]}: prompt {prompt_sha[:16]} was never sent by the recorded run")
        self.run_id, self.prompt_sha = run_id, prompt_sha


def recorded_replies(events: Sequence[Event]) -> dict[str, list[str]]:
    """Every raw reply of a run, in call order, by the sha of the prompt that produced it."""
    replies: dict[str, list[str]] = defaultdict(list)
    for e in events:
        if e.kind == EventKind.GATE:
            replies[e.prompt_sha].extend([*P.Gate.from_event(e).replies, e.text])
        elif e.kind == EventKind.PARSE_FAILED:
            replies[e.prompt_sha].extend(P.ParseFailed.from_event(e).replies)
        elif e.kind == EventKind.SYMPTOM:
            replies[e.prompt_sha].append(P.Symptom.from_event(e).reply)
    return dict(replies)


class ReplayClient:
    """The model of one recorded run, played back: same model id, same replies, same reply format, no call made."""

    def __init__(self, run_id: str, model_id: str, replies: dict[str, list[str]], constrain: str | None = None):
        self.run_id, self.model_id, self.constrain = run_id, model_id, constrain
        self._replies = {sha: deque(texts) for sha, texts in replies.items()}
        self.calls = 0

    @classmethod
    def of_run(cls, events: Sequence[Event]) -> "ReplayClient":
        model_id = next((e.model_id for e in events if e.model_id), "")
        start = events[0] if events and events[0].kind == EventKind.RUN_START else None
        constrain = P.RunStart.from_event(start).constrain if start else None
        return cls(events[0].run_id if events else "", model_id, recorded_replies(events), constrain)

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        sha = Rendered("", "", system, user).sha
        queue = self._replies.get(sha)
        if not queue:
            raise ReplayMiss(self.run_id, sha)
        self.calls += 1
        return Completion(queue.popleft(), self.model_id)
