"""The model behind every gate: any litellm model string, the offline engine by default, or a script in tests."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import dagster as dg
from pydantic import PrivateAttr

from poimen.llm.client import DEFAULT_MODEL, CachingClient, LiteLLMClient, ModelClient, Reply, ScriptedClient
from poimen.log.store import default_root


class LLMResource(dg.ConfigurableResource):
    """A litellm model at temperature 0 with a concurrency limit; ``poimen/extractive`` is the offline engine.

    The offline engine is an honest extractive baseline (relevance scoring and
    sentence selection), not an LLM. Replies are cached on disk by (model id,
    prompt shas) so an interrupted build resumes without paying twice. Pass the
    API key as ``dg.EnvVar(...)``; it is never written to the log.
    """

    # Unset fields fall back, when a client is built (never when the code location loads), to POIMEN_MODEL,
    # POIMEN_API_BASE and POIMEN_API_KEY; a key set in config should be a dg.EnvVar so it is never shown.
    model: Optional[str] = None
    api_base: Optional[str] = None
    api_key: Optional[str] = None
    concurrency: int = 4
    timeout_seconds: float = 120.0
    cache_dir: Optional[str] = None
    cache: bool = True

    @property
    def model_name(self) -> str:
        return self.model or os.environ.get("POIMEN_MODEL") or DEFAULT_MODEL

    def get_client(self) -> ModelClient:
        client: ModelClient = LiteLLMClient(self.model_name, api_base=self.api_base or os.environ.get("POIMEN_API_BASE"),
                                            api_key=self.api_key or os.environ.get("POIMEN_API_KEY"),
                                            timeout=self.timeout_seconds)
        if not self.cache:
            return client
        return CachingClient(client, Path(self.cache_dir) if self.cache_dir else default_root() / "cache" / "llm")


class ScriptedLLMResource(LLMResource):
    """Canned gate replies for tests, as config (``replies``) or, through ``of``, a live ``ScriptedClient``.

    Each ``get_client`` call returns a fresh client from ``replies`` (so each
    asset starts the script from its first reply), unless a live client was
    given, which is then shared so a test can count its calls.
    """

    model: str = "scripted/test"
    replies: list[str] = []
    repeat_last: bool = True
    _client: Optional[ScriptedClient] = PrivateAttr(default=None)

    def get_client(self) -> ModelClient:
        return self._client or ScriptedClient(self.replies, model_id=self.model_name, repeat_last=self.repeat_last)

    @classmethod
    def of(cls, replies: Sequence[Reply] | ScriptedClient, concurrency: int = 4) -> dg.ResourceDefinition:
        """A resource definition that hands out one live scripted client (replies may be functions of the prompt).

        Dagster re-creates configurable resources from their config, which would
        drop a live client; a hardcoded resource keeps this very instance.
        """
        client = replies if isinstance(replies, ScriptedClient) else ScriptedClient(list(replies), repeat_last=True)
        resource = cls(model=client.model_id, concurrency=concurrency)
        resource._client = client
        return dg.ResourceDefinition.hardcoded_resource(resource)
