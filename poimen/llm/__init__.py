"""Model clients: one async protocol, a litellm client, a scripted client, and the offline engine."""

from poimen.llm.client import (
    DEFAULT_MODEL,
    CachingClient,
    Completion,
    LiteLLMClient,
    ModelClient,
    ScriptedClient,
    ModelConfig,
    client_for,
)

__all__ = [
    "DEFAULT_MODEL",
    "CachingClient",
    "Completion",
    "LiteLLMClient",
    "ModelClient",
    "ScriptedClient",
    "ModelConfig",
    "client_for",
]
