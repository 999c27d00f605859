"""Pinned prompt templates from ``prompts/``, rendered with escaped data.

A template file has a ``[system]`` and a ``[user]`` section and ``{{name}}``
placeholders. Data (question, memory, chunk) is escaped before it is put in,
so no text read from a source can close a section or forge a reply tag. The
sha of the template file and of every rendered prompt is recorded on the
event the prompt produced.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from poimen import settings
from poimen.domain import sha256_text
from poimen.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_TASK = re.compile(r"^poimen-task: ([a-z_]+)", re.M)


_REPO_PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


def prompts_dir() -> Path:
    """``POIMEN_PROMPTS`` if set, else the repository's ``prompts/`` beside the package."""
    return settings.prompts_dir() or _REPO_PROMPTS


def escape(text: str) -> str:
    """Make data inert inside a tagged prompt: ``&``, ``<`` and ``>`` become entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@dataclass(frozen=True)
class Template:
    name: str
    system: str
    user: str
    sha: str

    @property
    def fields(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.system + self.user))


@dataclass(frozen=True)
class Rendered:
    template: str
    template_sha: str
    system: str
    user: str

    @property
    def sha(self) -> str:
        """The sha of exactly what the model is sent."""
        return sha256_text(f"{self.system}\n\x00\n{self.user}")


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> Template:
    raw = path.read_text(encoding="utf-8")
    parts = re.split(r"^\[(system|user)\]\n", raw, flags=re.M)
    sections = dict(zip(parts[1::2], parts[2::2]))
    if set(sections) != {"system", "user"} or parts[0].strip():
        raise ConfigError(f"{path}: a template needs exactly a [system] and a [user] section")
    return Template(path.stem, sections["system"].strip("\n"), sections["user"].strip("\n"), sha256_text(raw))


def load(name: str) -> Template:
    return _load_named(str(prompts_dir()), name)


@functools.lru_cache(maxsize=None)
def _load_named(folder: str, name: str) -> Template:
    # Templates are pinned files: read once per process (per folder), not on every turn.
    path = Path(folder) / f"{name}.tmpl"
    if not path.is_file():
        raise ConfigError(f"{path}: no such prompt template")
    return _load(path)


def render(name: str, **data: str | int) -> Rendered:
    """Render a template; every value is escaped, and a missing or extra field is an error."""
    template = load(name)
    if set(data) != template.fields:
        raise ConfigError(f"prompt {name}: fields {sorted(template.fields)} expected, got {sorted(data)}")
    values = {k: escape(str(v)) for k, v in data.items()}

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)

    return Rendered(name, template.sha, fill(template.system), fill(template.user))


def task_name(system: str) -> str | None:
    """The task a rendered system prompt is for: every template opens with ``poimen-task: NAME``."""
    m = _TASK.search(system)
    return m.group(1) if m else None


def sections(user_prompt: str) -> dict[str, str]:
    """The tagged data sections of a rendered user prompt, unescaped (used by the offline engine)."""
    out = {}
    for m in re.finditer(r"<([a-z_]+)>\n(.*?)\n</\1>", user_prompt, flags=re.S):
        out[m.group(1)] = unescape(m.group(2))
    return out
