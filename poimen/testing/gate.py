"""One scripted gate for tests and benchmarks: a function of the parsed prompt, not of its rendered text.

``scripted_gate(decide)`` is a reply function for ``ScriptedClient``: each gate
prompt is parsed back into its question, memory, chunk and budget
(``poimen.llm.prompts.sections``, the same parser the offline engine uses) and
handed to ``decide``, which returns the new memory (the gate opens) or ``None``
(it stays closed). Other prompt tasks (symptom, answer, router) are answered by
the functions passed for them by name, else refused, so a script never answers
a prompt it was not written for; the incident task is answered by extraction unless a function is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from poimen.llm.prompts import escape, sections, task_name

Reply = Callable[[str, str], str]


@dataclass(frozen=True)
class GatePrompt:
    """A gate prompt as the model sees it: what is asked, what is remembered, what was just read."""

    question: str
    memory: str
    chunk: str


def gate_reply(memory: str | None, end: bool = False) -> str:
    """A well-formed gate reply: ``None`` keeps the memory, text replaces it; ``end`` raises the exit flag."""
    nxt = "end" if end else "continue"
    if memory is None:
        return f"<check>no</check>\n<update></update>\n<next>{nxt}</next>"
    return f"<check>yes</check>\n<update>{escape(memory)}</update>\n<next>{nxt}</next>"


def scripted_gate(decide: Callable[[GatePrompt], str | None], **tasks: Reply) -> Reply:
    """A reply function: gate prompts go to ``decide``; any other task to ``tasks[name]`` (e.g. ``symptom=``). The
    incident task, when not given, is answered by the offline engine's extraction (``poimen.llm.offline_incident``):
    a script about the gate has nothing to say about incidents, and that answer is deterministic and model-free."""
    if "incident" not in tasks:
        from poimen.llm.offline_incident import incident

        tasks = {**tasks, "incident": incident}

    def reply(system: str, user: str) -> str:
        task = task_name(system)
        if task != "gate":
            if task not in tasks:
                raise AssertionError(f"scripted gate: no reply scripted for the {task!r} prompt")
            return tasks[task](system, user)
        data = sections(user)
        return gate_reply(decide(GatePrompt(data.get("question", ""), data.get("memory", ""), data.get("chunk", ""))))

    return reply
