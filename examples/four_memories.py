"""The "four memories" walkthrough, end to end on poimen's typed memory (offline, no network, no key).

    python examples/four_memories.py [WORKDIR]

Routes the article's four items, edits the core blocks with the memory tools
(including the bad call on an unknown block), shows the three tiers, composes
the context for Dana's refund reply, and writes the reply from that context.
Every write lands in the event log under WORKDIR (a temporary folder by
default); every context line names its store and sha.

The archival tier is poimen's lookup over a reference doc (the returns
policy) when ``poimen.write.reference`` and ``poimen.index`` are available, else a
keyword ``StaticArchive`` over the same doc; the script says which.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from poimen.agent.archive import Archive, StaticArchive
from poimen.agent.facade import Memory

ITEMS = [
    "Hi, I'm Dana and I prefer email contact.",
    "User opened a return request for ORD-3300 earlier today.",
    "Returns after the 30-day window incur a 10% restocking fee; multiply the total by 0.9.",
    "Quoting the refund for ORD-3300 now.",
]
WHY = {
    "semantic": "(a durable fact about the user)",
    "episodic": "(an event that happened)",
    "procedural": "(a reusable how-to rule)",
    "working": "(the current task focus)",
}
POLICY = (
    "# Returns policy\n\n"
    "Items can be returned within 30 days of delivery for a full refund.\n\n"
    "Returns after the 30-day window are still refundable, minus a 10% restocking fee.\n\n"
    "Gift cards and final-sale items cannot be returned.\n"
)
EDITS = [
    ("memory_replace", {"block": "user_profile", "old": "prefers email", "new": "prefers phone"}),
    ("memory_append", {"block": "task_state", "text": "order ORD-3300, $200, returned after the window"}),
    ("memory_replace", {"block": "preferences", "old": "x", "new": "y"}),
]
ARCHIVAL_QUERY = "restocking fee returns after the window"
REPLY_QUERY = "refund for ORD-3300 returned after the 30-day window, restocking fee"
COMPOSE_LABELS = [("semantic", "user_profile"), ("working", "task_state"), ("procedural", "rule"),
                  ("archival", "RAG chunk"), ("episodic", "event")]


def policy_archive(workdir: Path) -> tuple[Archive, str]:
    """The returns policy as reference docs in the real lookup if it is there, else a keyword archive."""
    doc = workdir / "reference" / "returns-policy.md"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(POLICY, encoding="utf-8")
    try:
        from poimen.agent.archive import IndexArchive
        from poimen.index import build_projections
        from poimen.write.reference import ingest_reference
    except ImportError:
        chunks = [p.strip() for p in POLICY.split("\n\n")[1:] if p.strip()]
        return StaticArchive(chunks), "StaticArchive (keyword; poimen.write.reference is not available)"
    from poimen.embedding.embedders import HashEmbedder

    embedder = HashEmbedder()
    log_root, db = workdir / "log", workdir / "index.duckdb"
    ingest_reference(log_root, [doc], max_tokens=24, root=workdir)  # small chunks: about a paragraph each
    build_projections(log_root, db, embedder)
    return IndexArchive(db, embedder), "poimen lookup over reference docs (HashEmbedder)"


def write_reply(context_lines: dict[str, str]) -> str:
    """The refund reply, every fact taken from a context line (name, preference, order, amount, rule)."""
    profile, task, rule = context_lines["semantic"], context_lines["working"], context_lines["procedural"]
    name = re.search(r"name: ([^;]+)", profile).group(1)
    prefers = re.search(r"prefers (\w+)", profile).group(1)
    order = re.search(r"ORD-\d+", task).group(0)
    amount = float(re.search(r"\$(\d+(?:\.\d+)?)", task).group(1))
    factor = float(re.search(r"multiply the total by (\d+(?:\.\d+)?)", rule).group(1))
    fee = re.search(r"(\d+)% restocking fee", rule).group(1)
    contact = "We will call you by phone." if prefers == "phone" else f"We will contact you by {prefers}."
    return (f"Hi {name}, for {order} returned after the 30-day window your refund is\n"
            f"         ${amount * factor:.2f} (the {fee}% restocking fee applies). {contact}")


def run(workdir: Path, out: Callable[[str], None] = print, clock: Callable[[], str] | None = None) -> dict:
    """Play the walkthrough into ``workdir`` and print its traces; returns what a test needs to check."""
    archive, archive_kind = policy_archive(workdir)
    mem = Memory("dana", root=workdir / "log", archive=archive, clock=clock)
    routes = []
    for item in ITEMS:
        r = mem.remember(item)
        routes.append(r.store)
        out(f"  route -> {r.store:<10} {WHY[r.store]}")
        out(f"           {item!r}")
    blocks = mem.blocks()
    out("")
    out("  Stores after routing:")
    out(f"    CORE.user_profile : {blocks['user_profile'].text!r}")
    out(f"    CORE.task_state   : {blocks['task_state'].text!r}")
    out(f"    EPISODIC          : {[i.text for i in mem.recall(5)]!r}")
    out(f"    PROCEDURAL        : {[i.text for i in mem.items('procedural')]!r}")
    out("")
    observations = []
    for name, args in EDITS:
        observations.append(mem.call(name, args))
        out(f"  {name}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
        out(f"    -> {observations[-1]}")
    blocks = mem.blocks()
    out("")
    out(f"  CORE.user_profile : {blocks['user_profile'].text!r}")
    out(f"  CORE.task_state   : {blocks['task_state'].text!r}")
    out("  The agent corrected a durable fact about the user with a single tool call.")
    out("")
    last = mem.recall(1)[0]
    hit = mem.search(ARCHIVAL_QUERY, 1)[0]
    out("  core      always in context  -> user_profile, task_state (above)")
    out(f"  recall    recent, paged in   -> last episodic event: {last.text!r}")
    out("  archival  large, searched    -> vector_search (black-box RAG; not re-derived here):")
    out(f"             query {ARCHIVAL_QUERY!r}")
    out(f"             -> {hit.text!r} (score={hit.score:.2f})")
    out(f"             [{archive_kind}]")
    out("")
    context = mem.compose(REPLY_QUERY, budget=400)
    first = {}
    for line in context.lines:
        first.setdefault(line.store, line)
    for store, label in COMPOSE_LABELS:
        out(f"  {store:<10} {'(' + label + ')':<14}: {first[store].text}")
    reply = write_reply({s: first[s].text for s, _ in COMPOSE_LABELS})
    out("")
    out(f"  REPLY: {reply}")
    out("")
    out("  Context block (each line: [store/label sha:...]):")
    for line in context.text.splitlines():
        out(f"    {line}")
    return {"routes": routes, "observations": observations, "blocks": blocks, "context": context, "reply": reply,
            "archive_kind": archive_kind, "memory": mem}


def main(argv: list[str]) -> None:
    if len(argv) > 1:
        run(Path(argv[1]))
        return
    with tempfile.TemporaryDirectory(prefix="poimen-four-memories-") as tmp:
        run(Path(tmp))


if __name__ == "__main__":
    main(sys.argv)
