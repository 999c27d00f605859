"""Constrained decoding: a task's reply format, pinned in ``prompts/``, sent the way a server accepts it.

A task may ship its reply format beside its template: a GBNF grammar
(``prompts/<task>.gbnf``) and a JSON schema (``prompts/<task>.schema.json``).
Constraining is opt in per model, because servers disagree on how to ask for
it and one that does not understand the request rejects it. The modes:

- ``llamacpp``: llama.cpp's server (and xllamacpp, ``mem model serve``): the grammar as ``extra_body.grammar``;
- ``vllm``: the grammar as ``extra_body.guided_grammar``;
- ``vllm-json``: the schema as ``extra_body.guided_json`` (the reply is then JSON);
- ``openai``: OpenAI structured outputs, the schema as a strict ``response_format`` (JSON reply).

The sha of the file sent is recorded on the run (``run_start``) and is part of
the run id, like the template sha: another grammar names another run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from poimen.domain import sha256_text
from poimen.errors import ConfigError
from poimen.llm.prompts import prompts_dir

# mode -> (the file kind it sends, where in the request it goes)
MODES: dict[str, tuple[str, str]] = {
    "llamacpp": ("gbnf", "extra_body.grammar"),
    "vllm": ("gbnf", "extra_body.guided_grammar"),
    "vllm-json": ("json", "extra_body.guided_json"),
    "openai": ("json", "response_format"),
}
_FILES = {"gbnf": "{task}.gbnf", "json": "{task}.schema.json"}


@dataclass(frozen=True)
class ReplyFormat:
    """One task's reply format in one mode: the text sent, its sha, and the reply kind to parse (tags or json)."""

    task: str
    mode: str
    kind: str  # "gbnf" (the reply is tags) or "json"
    text: str
    sha: str

    @property
    def reply_kind(self) -> str:
        return "json" if self.kind == "json" else "tags"

    def request(self) -> dict:
        """The litellm keyword arguments that carry this format."""
        where = MODES[self.mode][1]
        if where == "response_format":
            return {"response_format": {"type": "json_schema", "json_schema": {
                "name": f"poimen_{self.task}", "schema": json.loads(self.text), "strict": True}}}
        key = where.split(".", 1)[1]
        return {"extra_body": {key: json.loads(self.text) if self.kind == "json" else self.text}}

    def describe(self) -> str:
        return f"--constrain {self.mode} (sends {MODES[self.mode][1]})"


def check_mode(mode: str | None) -> str | None:
    """``mode`` if it is a known constraint mode (or empty: none); otherwise a ``ConfigError`` naming the choices."""
    if not mode:
        return None
    if mode not in MODES:
        raise ConfigError(f"--constrain {mode}: expected one of {', '.join(MODES)}")
    return mode


def reply_format(task: str, mode: str | None) -> ReplyFormat | None:
    """The pinned reply format of ``task`` for ``mode``; None when unconstrained or the task ships no such file."""
    if not check_mode(mode):
        return None
    kind = MODES[mode][0]
    path = Path(prompts_dir()) / _FILES[kind].format(task=task)
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if kind == "json":
        try:
            json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    return ReplyFormat(task, mode, kind, text, sha256_text(text))
