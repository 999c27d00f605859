"""Masking that makes a failure's text stable across occurrences.

Two readers need it: exception signatures keep a *message shape* (the message
with its variable parts masked) and log-line signatures keep a *template*. Both
go through the drain3 masker built from the shipped ``poimen/drain3.ini``, so
the benchmark in ``bench/loghub.py`` measures exactly the masking the
signatures use. The miner is only used for its masker and tokeniser: feeding
it lines would make a key depend on what else was in the text.
"""

from __future__ import annotations

import functools
import importlib.resources
import re

import drain3
from drain3.template_miner_config import TemplateMinerConfig

MAX_SHAPE = 200
MAX_SPAN = 500
# Quoted strings are user data (keys, names, paths) far more often than they
# are part of the failure's identity; drain3.ini leaves them alone because log
# templates keep them, but a message shape does not.
_QUOTED = re.compile(r"""'[^'\n]{0,200}'|"[^"\n]{0,200}"|\u2018[^\u2019\n]{0,200}\u2019""")
_HAS_DIGIT = re.compile(r"\d")


def config_path() -> str:
    """The path of the shipped drain3.ini (a real file: the package is installed unzipped)."""
    return str(importlib.resources.files("poimen").joinpath("drain3.ini"))


def load_config() -> TemplateMinerConfig:
    """A fresh drain3 config from the shipped ini, safe to modify by the caller."""
    config = TemplateMinerConfig()
    config.load(config_path())
    config.profiling_enabled = False
    return config


@functools.cache
def _miner() -> drain3.TemplateMiner:
    return drain3.TemplateMiner(config=load_config())


def mask(text: str) -> str:
    """Apply the shipped drain3 masks (timestamps, uuids, IPs, hex, pod names, paths, ids, numbers)."""
    return _miner().masker.mask(text)


def template(line: str) -> str:
    """A log line reduced to its template: drain3 masks, then any token still holding a digit becomes <*>.

    The second step is drain3's own ``parametrize_numeric_tokens`` rule applied
    to a single line, so ``worker-3`` and ``pool-7-thread-2`` stop mattering.
    """
    drain = _miner().drain
    tokens = drain.get_content_as_tokens(mask(line))
    shaped = " ".join(drain.param_str if _HAS_DIGIT.search(token) else token for token in tokens)
    return shaped[:MAX_SHAPE]


def shape(message: str) -> str:
    """A message with quoted strings, numbers, hex, uuids and ids masked, on one line."""
    message = " ".join(message.split())
    message = _QUOTED.sub("<STR>", message)
    return template(message)


def span(text: str) -> str:
    """The raw text a signature came from, trimmed and bounded so a row never carries a whole log."""
    text = text.strip()
    if len(text) <= MAX_SPAN:
        return text
    # Keep both ends: the exception line sits at the end of a Python traceback
    # and at the start of a Java one.
    head = MAX_SPAN // 2 - 2
    return text[:head] + " … " + text[-(MAX_SPAN - head - 3) :]
