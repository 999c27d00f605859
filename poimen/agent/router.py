"""The write router: which one store an incoming item goes to, and why.

With no model configured (or the offline engine) the deterministic rules of
``poimen.agent.rules`` decide. With a model configured, the pinned
``prompts/router.tmpl`` goes through litellm at temperature 0 and the reply
must be exactly ``<store>NAME</store>`` with one of the four store names. A
reply that is not, or a model that does not answer, falls back to the rules;
the decision records that (``by: rules``, ``fallback: …``, the raw reply), and
the decision goes onto the write's event.

The offline engine answers the router prompt with the same rules, so the
offline path through litellm and the direct path agree.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from poimen.agent import rules
from poimen.domain import TYPED_STORES
from poimen.errors import ModelUnavailable
from poimen.llm.client import ModelClient
from poimen.llm.prompts import render, sections

_REPLY = re.compile(r"^\s*<store>\s*(working|semantic|episodic|procedural)\s*</store>\s*$")
REPLY_TOKENS = 16


@dataclass(frozen=True)
class RouteDecision:
    """Where an item goes: the store, who decided (``rules`` or ``model``), and the trace of a fallback."""

    store: str
    by: str
    reason: str
    model_id: str = ""
    prompt_sha: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def attrs(self) -> dict[str, Any]:
        return {"route": {"by": self.by, "reason": self.reason, **self.detail}}


def parse_reply(text: str) -> str | None:
    m = _REPLY.match(text or "")
    return m.group(1) if m else None


def offline_route(system: str, user: str) -> str:
    """The offline engine's answer to the router prompt (``poimen.llm.offline.TASKS``): the same rules."""
    return f"<store>{rules.route(sections(user)['item']).store}</store>"


def _run(coro):
    """Run a coroutine from sync code, also when the caller is inside an event loop (a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class Router:
    """``route(text)``: the rules, or the pinned prompt when a client is given."""

    def __init__(self, client: ModelClient | None = None):
        self.client = client

    def route(self, text: str) -> RouteDecision:
        by_rules = rules.route(text)
        if self.client is None:
            return RouteDecision(by_rules.store, "rules", by_rules.reason)
        rendered = render("router", item=text)
        base = {"model_id": self.client.model_id, "prompt_sha": rendered.sha}
        try:
            reply = _run(self.client.complete(rendered.system, rendered.user, REPLY_TOKENS)).text
        except ModelUnavailable as exc:
            return RouteDecision(by_rules.store, "rules", by_rules.reason, **base,
                                 detail={"fallback": f"model unavailable: {exc}"})
        store = parse_reply(reply)
        if store is None or store not in TYPED_STORES:
            return RouteDecision(by_rules.store, "rules", by_rules.reason, **base,
                                 detail={"fallback": "invalid model reply", "reply": reply})
        return RouteDecision(store, "model", f"model {self.client.model_id}", **base, detail={"reply": reply})
