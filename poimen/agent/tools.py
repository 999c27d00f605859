"""Memory as action: the five memory tools, declared as JSON schemas and validated before they run.

``call_tool(memory, name, arguments)`` always returns an observation string.
A call that cannot run (unknown tool, arguments that are not an object,
a missing, extra or mistyped argument, an unknown block, ``old`` text absent
or ambiguous, a busy log) returns ``[error] …`` and changes nothing; an
agent's loop never sees an exception from here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema

from poimen.agent.stores import CORE_BLOCKS, MemoryRefused

if TYPE_CHECKING:
    from poimen.agent.ports import MemoryTools

_BLOCK = {"type": "string", "description": "A core block label: " + ", ".join(CORE_BLOCKS) + "."}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_append",
        "description": "Append text to a core memory block (user_profile: facts about the user; task_state: the "
                       "current task). Keeps what is there; joins with '; '.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["block", "text"],
                       "properties": {"block": _BLOCK,
                                      "text": {"type": "string", "minLength": 1, "description": "Text to add."}}},
    },
    {
        "name": "memory_replace",
        "description": "Replace text in a core memory block. 'old' must occur exactly once in the block; "
                       "quote enough of it to be unique. Use it to correct a fact (prefers email -> prefers phone).",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["block", "old", "new"],
                       "properties": {"block": _BLOCK,
                                      "old": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
                                      "new": {"type": "string", "description": "Replacement text ('' deletes)."}}},
    },
    {
        "name": "recall",
        "description": "Page in recent episodic memory (what happened), newest first.",
        "parameters": {"type": "object", "additionalProperties": False, "required": [],
                       "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                                            "description": "How many events."},
                                      "page": {"type": "integer", "minimum": 0, "default": 0,
                                               "description": "0 for the newest n, 1 for the n before them, ..."}}},
    },
    {
        "name": "archival_search",
        "description": "Search archival memory (pipeline memories and reference docs) for text, an error message "
                       "or a question. Returns chunks with their sha and score.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["query"],
                       "properties": {"query": {"type": "string", "minLength": 1, "description": "What to look for."},
                                      "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 3,
                                            "description": "How many hits."}}},
    },
    {
        "name": "remember",
        "description": "Store a new item; the router files it in exactly one store (working: current focus; "
                       "semantic: durable fact or preference; episodic: something that happened; procedural: a rule "
                       "or how-to) and the observation says which.",
        "parameters": {"type": "object", "additionalProperties": False, "required": ["text"],
                       "properties": {"text": {"type": "string", "minLength": 1, "description": "The item."}}},
    },
]
BY_NAME = {t["name"]: t for t in TOOLS}
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


def openai_tools() -> list[dict[str, Any]]:
    """The tools in the OpenAI ``tools=`` format."""
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["parameters"]}} for t in TOOLS]


def _describe(error: jsonschema.ValidationError, tool: str) -> str:
    """One readable line for the first schema violation."""
    where = error.path[0] if error.path else None
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f"{tool}: missing argument {missing!r}"
    if error.validator == "additionalProperties":
        allowed = set(BY_NAME[tool]["parameters"]["properties"])
        extra = sorted(set(error.instance) - allowed)
        return f"{tool}: unexpected argument {extra[0]!r}; expected {', '.join(sorted(allowed)) or 'none'}"
    if error.validator == "type":
        got = _JSON_TYPES.get(type(error.instance), type(error.instance).__name__)
        want = error.validator_value
        article = "an" if str(want)[0] in "aeiou" else "a"
        return f"{tool}: argument {where!r} must be {article} {want}, got {got}"
    if error.validator == "minLength":
        return f"{tool}: argument {where!r} must not be empty"
    if error.validator in ("minimum", "maximum"):
        return f"{tool}: argument {where!r} must be {'>=' if error.validator == 'minimum' else '<='} {error.validator_value}"
    return f"{tool}: argument {where!r}: {error.message}"


def validate(name: str, arguments: Any) -> str | None:
    """``None`` when the call is well formed, else the error message (without ``[error]``)."""
    if name not in BY_NAME:
        return f"unknown tool {name!r}; tools: {', '.join(BY_NAME)}"
    if not isinstance(arguments, dict):
        got = _JSON_TYPES.get(type(arguments), type(arguments).__name__)
        return f"{name}: arguments must be a JSON object, got {got}"
    validator = jsonschema.Draft202012Validator(BY_NAME[name]["parameters"])
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.validator))
    if errors:
        # A missing argument is the most useful thing to say first, then an extra one, then a type.
        rank = {"required": 0, "additionalProperties": 1, "type": 2}
        return _describe(min(errors, key=lambda e: rank.get(e.validator, 3)), name)
    if name in ("memory_append", "memory_replace") and arguments["block"] not in CORE_BLOCKS:
        return f"unknown memory block {arguments['block']!r}"
    # bool is an int in Python, not in JSON Schema's eyes for 'integer'; jsonschema agrees, so nothing to do.
    return None


def _run(memory: "MemoryTools", name: str, a: dict[str, Any]) -> str:
    if name == "memory_append":
        memory.append(a["block"], a["text"])
        return f"appended to {a['block']}"
    if name == "memory_replace":
        memory.replace(a["block"], a["old"], a["new"])
        return f"replaced {a['old']!r} with {a['new']!r} in {a['block']}"
    if name == "recall":
        items = memory.recall(a.get("n", 5), a.get("page", 0))
        if not items:
            return "no episodic memories" + (" on this page" if a.get("page") else "")
        return "\n".join(f"[episodic sha:{i.sha[:12]} {i.ts}] {i.text}" for i in items)
    if name == "archival_search":
        hits = memory.search(a["query"], a.get("k", 3))
        if not hits:
            return f"no archival hits for {a['query']!r}"
        return "\n".join(f"[archival sha:{h.sha[:12]} score={h.score:.2f}] {h.text}" for h in hits)
    if name == "remember":
        r = memory.remember(a["text"])
        return f"remembered in {r.store} ({r.where}) sha:{r.sha[:12]}"
    raise AssertionError(name)  # validate() admits only the names above


def call_tool(memory: "MemoryTools", name: str, arguments: Any) -> str:
    """Validate, then run; every refusal or failure comes back as an ``[error] …`` observation."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"[error] {name}: arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    problem = validate(name, arguments)
    if problem:
        return f"[error] {problem}"
    try:
        return _run(memory, name, arguments)
    except MemoryRefused as exc:
        return f"[error] {exc}"
    except Exception as exc:  # an agent's loop must never see a raise from a memory tool
        return f"[error] {name} failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
