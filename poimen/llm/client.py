"""One async protocol for every model call, and its three implementations.

``LiteLLMClient`` reaches any provider litellm knows (OpenAI, Anthropic,
Ollama, vLLM, an OpenAI-compatible local server) and, with no model
configured, poimen's offline engine, registered as the litellm provider
``poimen`` — so the offline path and the real path share every line after the
call. ``ScriptedClient`` returns canned replies for tests. ``CachingClient``
keys replies by (model id, template sha, rendered prompt sha).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from poimen.domain import sha256_text
from poimen.errors import ModelUnavailable

DEFAULT_MODEL = "poimen/extractive"


@dataclass(frozen=True)
class Completion:
    text: str
    model_id: str
    usage: dict = field(default_factory=dict)


class ModelClient(Protocol):
    model_id: str

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion: ...


class LiteLLMClient:
    """A litellm model string at temperature 0; transport errors are retried by litellm itself.

    A call that still fails raises ``ModelUnavailable``: it is never a gate decision.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        api_base: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        num_retries: int = 3,
        api_key: str | None = None,
    ):
        self.model = model
        self.model_id = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.api_key = api_key  # a resolved secret (e.g. from dg.EnvVar); never logged or recorded
        self.timeout = timeout
        self.num_retries = num_retries
        if model.startswith("poimen/"):
            from poimen.llm.offline import model_id, register

            register()
            self.model_id = model_id(model)

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        import litellm

        kwargs = {}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        elif self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ModelUnavailable(f"model {self.model}: environment variable {self.api_key_env} is not set")
            kwargs["api_key"] = key
        try:
            resp = await litellm.acompletion(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0,
                max_tokens=max_tokens,
                timeout=self.timeout,
                num_retries=self.num_retries,
                **kwargs,
            )
        except Exception as exc:  # litellm maps every provider failure to its own exception family
            raise ModelUnavailable(f"model {self.model}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
        text = resp.choices[0].message.content or ""
        usage = getattr(resp, "usage", None)
        usage_dict = {
            k: int(getattr(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")
        } if usage else {}
        return Completion(text=text, model_id=self.model_id, usage=usage_dict)


Reply = str | Exception | Callable[[str, str], str]


class ScriptedClient:
    """Canned replies indexed by call, for tests: a string, an exception to raise, or a function of the prompt.

    ``calls`` counts calls and ``prompts`` keeps every (system, user) it was sent.
    When the script runs out, the last entry repeats if ``repeat_last`` is set;
    otherwise the call fails loudly, so a test never silently reads past its script.
    """

    def __init__(self, replies: Sequence[Reply], model_id: str = "scripted/test", repeat_last: bool = False):
        self.replies = list(replies)
        self.model_id = model_id
        self.repeat_last = repeat_last
        self.calls = 0
        self.prompts: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        with self._lock:
            index = self.calls
            self.calls += 1
            self.prompts.append((system, user))
        if index >= len(self.replies):
            if not (self.repeat_last and self.replies):
                raise AssertionError(f"scripted client: call {index + 1} but only {len(self.replies)} replies scripted")
            index = len(self.replies) - 1
        reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        text = reply(system, user) if callable(reply) else reply
        await asyncio.sleep(0)
        return Completion(text=text, model_id=self.model_id)


class CachingClient:
    """Replies cached on disk by (model id, template sha, rendered prompt sha); a hit makes no call."""

    def __init__(self, inner: ModelClient, cache_dir: Path):
        self.inner = inner
        self.model_id = inner.model_id
        self.dir = Path(cache_dir)
        self.hits = 0

    def _path(self, system: str, user: str) -> Path:
        key = sha256_text(f"{self.model_id}\x00{sha256_text(system)}\x00{sha256_text(user)}")
        return self.dir / key[:2] / f"{key}.json"

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        path = self._path(system, user)
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            self.hits += 1
            return Completion(data["text"], data["model_id"], data.get("usage", {}))
        result = await self.inner.complete(system, user, max_tokens)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"text": result.text, "model_id": result.model_id, "usage": result.usage}), encoding="utf-8")
        tmp.replace(path)
        return result


def make_client(model: str | None = None, api_base: str | None = None, cache_dir: Path | None = None) -> ModelClient:
    """The client for a model string: ``--model``, else ``POIMEN_MODEL``, else the offline engine."""
    chosen = model or os.environ.get("POIMEN_MODEL") or DEFAULT_MODEL
    client: ModelClient = LiteLLMClient(chosen, api_base=api_base or os.environ.get("POIMEN_API_BASE"))
    return CachingClient(client, cache_dir) if cache_dir else client
