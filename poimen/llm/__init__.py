"""Model clients: one async protocol, a litellm client, a scripted client, and the offline engine.

The names below load ``poimen.llm.client`` on first use, so importing a sibling module (``poimen.llm.local`` for
``mem model serve``'s option defaults) does not pull asyncio and the prompt machinery into every ``mem`` start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from poimen.llm.client import (
        DEFAULT_MODEL,
        CachingClient,
        Completion,
        LiteLLMClient,
        ModelClient,
        ModelConfig,
        ScriptedClient,
        client_for,
    )


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("poimen.llm.client"), name)
    raise AttributeError(f"module 'poimen.llm' has no attribute {name!r}")
