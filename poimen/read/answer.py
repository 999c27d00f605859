"""ψ(Q, M): answer a standing query from its final memories, naming the memory shas used."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from poimen.errors import EmptyMemory, NoRuns
from poimen.llm.prompts import render, unescape

if TYPE_CHECKING:  # a question's answer reads the index only: the log (and pyarrow under it) loads for --query
    from poimen.llm.client import ModelClient
    from poimen.log.store import EventLog

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


@dataclass(frozen=True)
class Answer:
    text: str
    memory_shas: tuple[str, ...]
    model_id: str
    prompt_sha: str


def final_memories(log: EventLog, query: str) -> tuple[str, list[tuple[str, str]]]:
    """The query's text and (sha, text) of its final memories: its latest L2 memory if any, else its L1 memories.
    Raises ``NoRuns`` when there are none, saying whether the query never ran or ran and kept nothing."""
    from poimen.log.runs import acceptance, final_runs, loop_runs, read_runs

    runs = read_runs(log)
    chosen = [r for r in final_runs(runs) if query in (r.query_id, r.query_text)]
    if not chosen:
        ran = [r for r in loop_runs(runs) if query in (r.query_id, r.query_text)]
        if not ran:
            raise NoRuns(f"--query {query!r}: no sealed run of this query in {log.root}")
        used, seen = acceptance(ran)
        raise EmptyMemory(f"--query {query!r}: its {len(ran)} sealed run(s) kept nothing ({used} of {seen} chunks opened "
                     "the gate, no line was kept); its memory is empty. A narrower query, or `mem context "
                     "QUESTION`, which ranks every unit read")
    return chosen[0].query_text, [(s.final_memory_sha, s.final_memory) for s in chosen]


async def ask(log: EventLog, query: str, client: ModelClient) -> Answer:
    question, memories = final_memories(log, query)
    rendered = render("answer", question=question, memory="\n\n".join(t for _, t in memories))
    completion = await client.complete(rendered.system, rendered.user, 1024)
    m = _ANSWER.search(completion.text)
    text = unescape(m.group(1).strip()) if m else completion.text.strip()
    return Answer(text, tuple(s for s, _ in memories), completion.model_id, rendered.sha)


async def answer_question(db_path, question: str, client: ModelClient, budget: int = 2000, embedder=None,
                          engine=None, index=None) -> Answer:
    """ψ over the context builder: the best lines for a free question, each tagged with its provenance.

    The rendered context (lines with ``[store/level sha source#chunk:line]`` tags)
    is the memory section of the pinned answer prompt; the offline engine
    returns the best-scoring lines verbatim, tags included, and a real model
    is asked to cite them. ``memory_shas`` are the memories and chunks the
    context drew on, best first. ``engine``: an open ``ContextEngine`` to use (a warm server's) instead of
    opening the index again; ``index``: an open ``MemoryIndex`` likewise.

    A question about how a failure was fixed, what was done or why it happened
    (``poimen.read.incidents.asks_about_incident``) is answered from the incident's card that lookup ranks
    first for it, when one is among its top hits: the card's lines, labelled by role, are the memory.
    """
    from poimen.read.context import ContextEngine
    from poimen.read.incidents import asks_about_incident, card_answer_memory, matched_card

    card = None
    if asks_about_incident(question):  # how it was fixed, what was done, why: the incident's card answers
        card = matched_card(db_path, question, index if index is not None else _open_index(db_path, embedder),
                            lambda: engine if engine is not None else ContextEngine.open(db_path, embedder))
    if card is not None:
        memory, shas = card_answer_memory(card, question), (card.sha,)
    else:
        ctx = (engine if engine is not None else ContextEngine.open(db_path, embedder)).context(question, budget)
        if not ctx.lines:
            raise NoRuns(f"{db_path}: the index holds nothing to answer from")
        memory, shas = ctx.render_tagged(), tuple(dict.fromkeys(line.sha for line in ctx.lines))
    rendered = render("answer", question=question, memory=memory)
    completion = await client.complete(rendered.system, rendered.user, 1024)
    m = _ANSWER.search(completion.text)
    text = unescape(m.group(1).strip()) if m else completion.text.strip()
    return Answer(text, shas, completion.model_id, rendered.sha)


def _open_index(db_path, embedder):
    from poimen.index import MemoryIndex

    return MemoryIndex.open(db_path, embedder)
