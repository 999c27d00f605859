"""One async protocol for every model call, and its three implementations.

``LiteLLMClient`` reaches any provider litellm knows (OpenAI, Anthropic,
Ollama, vLLM, an OpenAI-compatible local server). With no model configured,
poimen's offline engine answers: ``client_for`` calls it in process
(``OfflineClient``), because importing litellm costs seconds of CPU on every
cold ``mem ask`` and ``mem run`` for a reply litellm only copies through its
mock transport. The engine is still registered as the litellm provider
``poimen`` (``LiteLLMClient("poimen/extractive")``), and a test holds the two
paths to the same replies, model id and prompt sha. ``ScriptedClient``
returns canned replies for tests. ``CachingClient`` keys replies by (model id,
reply format, rendered prompt shas) under a work folder's ``reply_cache``.
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
from poimen.errors import ModelRefused, ModelUnavailable
from poimen.llm.constrain import check_mode, reply_format
from poimen.llm.prompts import task_name
from poimen.settings import DEFAULT_MODEL, DEFAULT_TIMEOUT, ModelConfig

# litellm retries every failure by default; a refused request (bad key, bad request, unknown model) is asked once.
_RETRY_POLICY = {"AuthenticationErrorRetries": 0, "BadRequestErrorRetries": 0, "NotFoundErrorRetries": 0,
                 "ContentPolicyViolationErrorRetries": 0}


def quiet_litellm():
    """litellm, imported with its own output off: no feedback banner, no debug lines, no log records below ERROR."""
    import logging
    import warnings

    # litellm declares TypedDicts with ``ReadOnly`` items (its Copilot auth payloads, thinking blocks), and pydantic
    # warns about each one it builds a schema for when the first completion imports them: 13 UserWarnings about
    # litellm's types, nothing poimen can act on. litellm hides them with a filter it installs once, at import; a
    # host that resets the filters later (pytest, before every test) saw them all. So the filter is set here, at
    # every call: only that message, only from pydantic's schema generator.
    warnings.filterwarnings("ignore", message=r"Items? .* on TypedDict class .* (is|are) using the `ReadOnly` qualifier",
                            category=UserWarning, module=r"pydantic\._internal\._generate_schema")
    import litellm

    litellm.suppress_debug_info = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return litellm


def warm_litellm() -> None:
    """One completion through litellm's own request path with its ``mock_response``: no network, no key, no server.

    A process's first completion costs litellm 0.3 s of CPU more than the next (44 more of its modules imported, its
    logging and cost tables built on first use). A process that forks workers (the multiprocess executor's fork
    server, ``pipelines.preload``) pays it once here instead of once in every step process.
    """
    import asyncio

    asyncio.run(quiet_litellm().acompletion(
        model="openai/poimen-warm-up", messages=[{"role": "user", "content": "warm up"}], api_key="unused",
        temperature=0, max_tokens=1, mock_response="ok"))


def is_loopback(api_base: str | None) -> bool:
    """True for a server on this machine (127.0.0.0/8, localhost, ::1)."""
    from urllib.parse import urlparse

    host = urlparse(api_base).hostname if api_base else None
    return bool(host) and (host == "localhost" or host == "::1" or host.startswith("127."))


def _key_variable(model: str) -> str | None:
    """The unset environment variable litellm would read ``model``'s key from (None: set, or no key needed)."""
    try:
        missing = quiet_litellm().validate_environment(model=model).get("missing_keys", [])
    except Exception:  # noqa: BLE001 - a provider litellm cannot describe: let the call itself say what is wrong
        return None
    keys = [v for v in missing if "KEY" in v or "TOKEN" in v]
    return keys[0] if keys else None


@dataclass(frozen=True)
class Completion:
    text: str
    model_id: str
    usage: dict = field(default_factory=dict)


class ModelClient(Protocol):
    model_id: str
    constrain: str | None  # the constrained-decoding mode its requests use (poimen.llm.constrain), None: free text

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion: ...


class LiteLLMClient:
    """A litellm model string at temperature 0; transport errors are retried by litellm itself.

    A call that still fails raises ``ModelUnavailable``: it is never a gate
    decision, and the run stops resumably. A request the server refuses as
    such (401/403, 400, 404: no or a bad key, a constraint it does not accept)
    raises ``ModelRefused`` after one call, and every later call of this client
    fails the same way without reaching the server. ``constrain`` names a
    constrained-decoding mode (``poimen.llm.constrain``) for tasks that ship a
    reply format. A loopback ``api_base`` (a local server) needs no key.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        api_base: str | None = None,
        api_key_env: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        num_retries: int = 3,
        api_key: str | None = None,
        constrain: str | None = None,
    ):
        self.model = model
        self.model_id = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.api_key = api_key  # a resolved secret (e.g. from dg.EnvVar); never logged or recorded
        self.timeout = timeout
        self.num_retries = num_retries
        self.constrain = check_mode(constrain)
        self._refused: ModelRefused | None = None
        self._key_variable: str | None = None
        if model.startswith("poimen/"):
            from poimen.llm.offline import model_id, register

            register()
            self.model_id = model_id(model)
            self.constrain = None  # the offline engine is not a server: it always answers in tags
        elif not (api_key or api_key_env):
            self._key_variable = _key_variable(model)
            if self._key_variable and not is_loopback(api_base):
                raise ModelRefused(f"model {model}: no API key; set {self._key_variable} "
                                   "(or --api-base for a local OpenAI-compatible server, which needs none)")

    def _where(self) -> str:
        return f"model {self.model}" + (f" at {self.api_base}" if self.api_base else "")

    def _key_kwargs(self) -> dict:
        if self.api_key:
            return {"api_key": self.api_key}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ModelRefused(f"{self._where()}: no API key; set {self.api_key_env}")
            return {"api_key": key}
        var = self._key_variable
        if var and not os.environ.get(var) and is_loopback(self.api_base):
            return {"api_key": "no-key-needed"}  # a local server takes no key, but the OpenAI client insists on one
        return {}

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        if self._refused is not None:
            raise self._refused
        litellm = quiet_litellm()
        kwargs = self._key_kwargs()
        if self.api_base:
            kwargs["api_base"] = self.api_base
        fmt = reply_format(task_name(system) or "", self.constrain)
        if fmt is not None:
            kwargs.update(fmt.request())
        try:
            resp = await litellm.acompletion(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0,
                max_tokens=max_tokens,
                timeout=self.timeout,
                num_retries=self.num_retries,
                retry_policy=_RETRY_POLICY,
                **kwargs,
            )
        except Exception as exc:  # litellm maps every provider failure to its own exception family
            raise self._failure(exc, fmt) from exc
        text = resp.choices[0].message.content or ""
        usage = getattr(resp, "usage", None)
        usage_dict = {
            k: int(getattr(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")
        } if usage else {}
        return Completion(text=text, model_id=self.model_id, usage=usage_dict)

    def _failure(self, exc: Exception, fmt) -> Exception:
        """``ModelRefused`` for what asking again cannot fix (remembered), ``ModelUnavailable`` for the rest."""
        import litellm

        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
        status = getattr(exc, "status_code", None)
        if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
            var = self.api_key_env or self._key_variable
            unset = var and not os.environ.get(var)
            self._refused = ModelRefused(f"{self._where()} refused the request as unauthorised ({status}); " + (
                f"set {var} to a key it accepts" if unset else "check the API key it was given"))
        elif isinstance(exc, litellm.BadRequestError) and fmt is not None:
            self._refused = ModelRefused(f"{self._where()} rejected the constrained request, {fmt.describe()}: "
                                         f"{detail}; use the mode this server accepts, or no --constrain")
        elif isinstance(exc, (litellm.BadRequestError, litellm.NotFoundError)):
            self._refused = ModelRefused(f"{self._where()} rejected the request ({status}): {detail}")
        else:
            return ModelUnavailable(f"model {self.model}: {detail}")
        return self._refused


class OfflineClient:
    """poimen's offline engine (``poimen/...`` model strings) called in process, without litellm's import and transport.

    The reply is ``offline.respond(system, user)``, the very function the litellm provider returns through
    ``mock_response``, and the model id is the one ``LiteLLMClient`` records for the same model string, so runs,
    answers and their log events do not depend on which path produced them. The engine has no token usage
    (litellm's mock reports a fixed 10/20), so ``usage`` stays empty. An engine error (a prompt with no task it
    answers) raises poimen's own error here, where litellm would retry it and report ``ModelUnavailable``.
    """

    constrain = None  # the offline engine is not a server: it always answers in tags

    def __init__(self, model: str = DEFAULT_MODEL):
        from poimen.llm.offline import model_id

        self.model = model
        self.model_id = model_id(model)

    async def complete(self, system: str, user: str, max_tokens: int) -> Completion:
        from poimen.llm.offline import respond

        return Completion(text=respond(system, user), model_id=self.model_id)


Reply = str | Exception | Callable[[str, str], str]


class ScriptedClient:
    """Canned replies indexed by call, for tests: a string, an exception to raise, or a function of the prompt.

    ``calls`` counts calls and ``prompts`` keeps every (system, user) it was sent.
    When the script runs out, the last entry repeats if ``repeat_last`` is set;
    otherwise the call fails loudly, so a test never silently reads past its script.
    """

    def __init__(self, replies: Sequence[Reply], model_id: str = "scripted/test", repeat_last: bool = False,
                 constrain: str | None = None):
        self.replies = list(replies)
        self.model_id = model_id
        self.repeat_last = repeat_last
        self.constrain = check_mode(constrain)
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
    """Replies cached on disk by (model id, reply format, rendered prompt shas); a hit makes no call."""

    def __init__(self, inner: ModelClient, cache_dir: Path):
        self.inner = inner
        self.model_id = inner.model_id
        self.constrain = getattr(inner, "constrain", None)
        self.dir = Path(cache_dir)
        self.hits = 0

    def _path(self, system: str, user: str) -> Path:
        fmt = reply_format(task_name(system) or "", self.constrain)
        # Unconstrained keys stay as they were, so existing caches still hit.
        model = f"{self.model_id}\x00{fmt.mode}:{fmt.sha}" if fmt else self.model_id
        key = sha256_text(f"{model}\x00{sha256_text(system)}\x00{sha256_text(user)}")
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


def reply_cache(folder: Path) -> Path:
    """The reply cache of a local work folder (a local log's own, ``POIMEN_HOME``, a pipeline's ``work_dir``):
    ``<folder>/cache/llm``, where ``mem forget --work-dir <folder>`` deletes the replies that quote forgotten text."""
    return Path(folder) / "cache" / "llm"


def client_for(config: ModelConfig = ModelConfig()) -> ModelClient:
    """The one place a model client is built (CLI, core, Dagster resource, typed memory's router, bench).

    poimen's offline engine is called in process (``OfflineClient``); every other model string goes through litellm.
    The timeout and constrain settings are still checked for the offline engine, so a bad value fails the same way.
    Its replies are never cached, whatever ``cache_dir`` says: it is in process, deterministic and cheap, and what
    it spends (embedding a chunk's units) the embedding cache already keeps by text sha, so a file per reply would
    only cost time and disk. The reply cache is for a model that is paid, slow or not bound to repeat itself.
    """
    config = config.resolved()  # the unset fields from their POIMEN_* variables (poimen.settings)
    constrain = check_mode(config.constrain)
    client: ModelClient = OfflineClient(config.model) if config.model.startswith("poimen/") else LiteLLMClient(
        config.model, api_base=config.api_base, api_key=config.api_key, timeout=config.timeout, constrain=constrain)
    if config.cache_dir is None or isinstance(client, OfflineClient):
        return client
    return CachingClient(client, config.cache_dir)
