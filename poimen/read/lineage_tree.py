"""A lineage as one display tree: each node one line of label, the sha it links to, and the text it quotes.

``mem show`` prints it with rich and the ``/show/<sha>`` page writes it as
nested lists, so the two surfaces cannot tell different stories. Nodes that
name a sha link to that sha's own lineage: down the chain (memory → line →
evidence) and, under "derived from this", up it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from poimen.read.lineage import Chunk, Gate, Lineage, Line, MemoryNode, Ref, StoreWriteNode

QUOTE = 240  # characters of a chunk quoted inside a memory's tree; the chunk's own page shows it whole


@dataclass(frozen=True)
class TreeNode:
    kind: str  # memory | line | gate | via | evidence | unit | source | store_write | ref | section
    label: str
    sha: str = ""  # the sha this node links to ('' for none)
    target: str = ""  # the kind of node that sha names there (memory, line, evidence, store_write)
    text: str = ""  # quoted content, shown under the label
    children: tuple["TreeNode", ...] = ()

    def link(self) -> str:
        """The page path of what this node names: ``/show/<sha>?kind=<target>``; '' for no link."""
        return f"/show/{self.sha}?kind={self.target}" if self.sha else ""


def short(sha: str) -> str:
    return sha[:12]


def _gate(g: Gate | None) -> TreeNode:
    if g is None:
        return TreeNode("gate", "turn unknown (the line is not in any memory version of its run)")
    what = "parse failed" if g.kind == "parse_failed" else f"gate {'yes' if g.update else 'no'}"
    over = " · over budget" if g.budget_exceeded else ""
    return TreeNode("gate", f"turn {g.turn} of run {short(g.run_id)}: {what} ({g.attempts} "
                            f"call{'s' if g.attempts != 1 else ''}), exit {'yes' if g.exit else 'no'}, memory "
                            f"{g.memory_tokens} tok{over} · model {g.model_id} · template {g.prompt_template_sha[:8]}")


def _source(where) -> TreeNode:
    return TreeNode("source", f"source {where.label()}")


def _chunk(c: Chunk, quote: bool = True, unit: TreeNode | None = None) -> TreeNode:
    text = c.text[:QUOTE] + "…" if quote and len(c.text) > QUOTE else c.text
    return TreeNode("evidence", f"{c.level} evidence {short(c.sha)} · {c.source}#{c.position} · {c.tokens} tok",
                    sha=c.sha, target="evidence", text=text, children=(unit or _source(c.where),))


def _line_children(ln: Line) -> tuple[TreeNode, ...]:
    if ln.via is not None:
        return (_gate(ln.gate), TreeNode("via", f"copied from line {ln.via.line_no} of {ln.via.level} memory "
                                                f"{short(ln.via.memory_sha)}", sha=ln.via.memory_sha, target="memory",
                                         children=_line_children(ln.via)))
    if ln.evidence is None:
        return (_gate(ln.gate), TreeNode("evidence", "evidence unknown (no chunk recorded for this line's turn)"))
    unit = None
    if ln.unit is not None:
        at = f"chunk offset {ln.unit.span_start}" if ln.unit.span_start >= 0 else "rewritten by the model: no span"
        unit = TreeNode("unit", f"unit ({at})", text=ln.unit.text, children=(_source(ln.unit.where),))
    return _gate(ln.gate), _chunk(ln.evidence, unit=unit)


def _line(ln: Line, label: str | None = None) -> TreeNode:
    return TreeNode("line", label or f"line {ln.line_no} · {short(ln.sha)}", sha=ln.sha, target="line", text=ln.text,
                    children=_line_children(ln))


def _ref(r: Ref) -> TreeNode:
    return TreeNode("ref", r.label, sha=r.sha, target=r.kind if r.kind != "unknown" else "")


def _refs(title: str, refs: tuple[Ref, ...]) -> tuple[TreeNode, ...]:
    return (TreeNode("section", title, children=tuple(_ref(r) for r in refs)),) if refs else ()


def _store_write(w: StoreWriteNode) -> TreeNode:
    where = f"block {w.block}" if w.block else "item"
    return TreeNode("store_write", f"store write {short(w.sha)} · namespace {w.namespace} · {w.store} {where}"
                                   + (f" · {w.ts}" if w.ts else ""), sha=w.sha, target="store_write", text=w.text,
                    children=(_ref(w.memory),) if w.memory else ())


def _memory(m: MemoryNode, writes: tuple[StoreWriteNode, ...]) -> TreeNode:
    state = ", ".join(("final" if m.final else "draft", "current" if m.current else "superseded"))
    label = (f"{m.level} memory {short(m.sha)} · query {m.query_id} · store {m.store or '-'} · run {short(m.run_id)} "
             f"turn {m.turn} · {m.tokens} tok · {state}")
    kids = tuple(_line(ln) for ln in m.lines) or (
        TreeNode("section", "no lines recorded (only the final memory of a current run has lines)", text=m.text),)
    kids += _refs("what its turn read", m.read) + tuple(_store_write(w) for w in writes)
    return TreeNode("memory", label, sha=m.sha, target="memory", children=kids)


def tree(lin: Lineage) -> TreeNode:
    """The display tree of a lineage: the node asked about, its chain down, then what was derived from it."""
    if lin.kind == "memory" and lin.memory is not None:
        root = _memory(lin.memory, lin.store_writes)
        return replace(root, children=root.children + _refs("derived from this", lin.up))
    if lin.kind == "line" and lin.line is not None:
        root = _line(lin.line, f"memory line {short(lin.sha)}")
        return replace(root, children=root.children + _refs("held by", lin.up))
    if lin.kind == "evidence" and lin.evidence is not None:
        root = _chunk(lin.evidence, quote=False)
        return replace(root, children=root.children + _refs("derived from this", lin.up))
    if len(lin.store_writes) == 1:
        return _store_write(lin.store_writes[0])
    return TreeNode("section", f"{lin.kind.replace('_', ' ')} {short(lin.sha)}", sha=lin.sha, target=lin.kind,
                    children=tuple(_store_write(w) for w in lin.store_writes))
