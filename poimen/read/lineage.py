"""The lineage of one sha: the memory, its lines, the turn and gate behind each, the evidence chunk, the unit, the file.

``lineage(db_path, sha)`` takes any memory sha, memory line sha (the sha256 of
the line's text, as the ``unit`` table spells it), evidence (L0 or R chunk) sha
or typed-store write sha — or a unique prefix of one — and walks the index's
projections (``memory``, ``memory_line``, ``edge``, ``gate``, ``run``,
``evidence``, ``store_item``/``store_block``) down to the source file's lines,
and up to what was derived from it. It returns typed records; ``tree`` turns
them into one display tree that ``mem show`` and the ``/show/<sha>`` page both
render, and ``dataclasses.asdict`` is the ``--json`` form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from poimen.domain import sha256_text
from poimen.errors import AmbiguousSha, ShaNotFound
from poimen.index.read import connect_read_only
from poimen.relevance import split_units
from poimen.inputs.source_lines import SourceFinder, SourceRef, occurrences_before

_HEX = re.compile(r"^[0-9a-f]{1,64}$")
# Every table a sha can name, and what it names there. Code constants only; the prefix is a parameter.
_RESOLVE = (
    ("memory", "SELECT DISTINCT sha FROM memory WHERE starts_with(sha, ?)"),
    ("line", "SELECT DISTINCT text_sha FROM unit WHERE kind = 'memory' AND starts_with(text_sha, ?)"),
    ("evidence", "SELECT DISTINCT sha FROM evidence WHERE starts_with(sha, ?)"),
    ("store_write", "SELECT DISTINCT sha FROM store_item WHERE starts_with(sha, ?) AND {ns} "
                    "UNION SELECT sha FROM store_block WHERE starts_with(sha, ?) AND {ns}"),
)
# A typed-store write is one namespace's: a caller scoped to a namespace (the server's --ns) sees only its own.
_IN_NS = "(CAST(? AS VARCHAR) IS NULL OR namespace = ?)"
_MEMORY = ("SELECT m.sha, m.level, m.query_id, m.store, m.run_id, m.turn, m.tokens, m.final, m.text, "
           "coalesce(r.current, false) FROM memory m LEFT JOIN run r USING (run_id) WHERE m.sha = ? "
           "ORDER BY coalesce(r.current, false) DESC, m.final DESC, r.log_position DESC")
_LINES = ("SELECT memory_sha, line_no, level, run_id, text, turn, evidence_sha, via_sha, span_start "
          "FROM memory_line WHERE {where} ORDER BY level, memory_sha, line_no")
_GATE = ("SELECT g.run_id, g.turn, g.kind, g.update, g.exit, g.attempts, coalesce(g.memory_tokens, 0), "
         "g.budget_exceeded, r.model_id, r.prompt_template_sha, r.query_id FROM gate g JOIN run r USING (run_id) "
         "WHERE g.run_id = ? AND g.turn = ?")
_EVIDENCE = "SELECT sha, level, source, position, tokens, text FROM evidence WHERE sha = ?"
_EARLIER = "SELECT text FROM evidence WHERE source = ? AND level = ? AND position < ? ORDER BY position"
_EDGES_DOWN = "SELECT DISTINCT parent_sha, kind FROM edge WHERE child_sha = ? AND run_id = ? ORDER BY kind"
_EDGES_UP = "SELECT DISTINCT child_sha, kind FROM edge WHERE parent_sha = ? ORDER BY kind, child_sha"
_STORE = (f"SELECT namespace, store, '' AS block, ts, text, source FROM store_item WHERE sha = ? AND {_IN_NS} "
          f"UNION ALL SELECT namespace, store, block, ts, text, '' FROM store_block WHERE sha = ? AND {_IN_NS} "
          "ORDER BY 1, 2, 3")
_RUN_FINAL = "SELECT final_memory_sha FROM run WHERE run_id = ?"
_UNIT_TEXT = "SELECT text FROM unit WHERE kind = 'memory' AND text_sha = ? LIMIT 1"


@dataclass(frozen=True)
class Chunk:
    """An evidence chunk (L0 or R): where it was read, and the file lines it spans."""

    sha: str
    level: str
    source: str
    position: int
    tokens: int
    text: str
    where: SourceRef


@dataclass(frozen=True)
class Gate:
    """The turn that produced a line: the gate's decision on that turn's chunk, and the run's model and prompt."""

    run_id: str
    turn: int
    kind: str  # 'gate' | 'parse_failed'
    update: bool
    exit: bool
    attempts: int
    memory_tokens: int
    budget_exceeded: bool
    model_id: str
    prompt_template_sha: str
    query_id: str


@dataclass(frozen=True)
class Unit:
    """The unit of the chunk a line copies: its span in the chunk and its lines in the file (-1: rewritten)."""

    text: str
    span_start: int
    where: SourceRef


@dataclass(frozen=True)
class Line:
    sha: str  # sha256 of the line's text
    memory_sha: str
    line_no: int
    level: str
    text: str
    gate: Gate | None
    evidence: Chunk | None  # at L2: the L0 chunk the L1 line came from
    unit: Unit | None
    via: "Line | None" = None  # at L2: the L1 memory's line this line copies


@dataclass(frozen=True)
class Ref:
    """A link to another node: what it is, its sha, one line saying which."""

    kind: str
    sha: str
    label: str


@dataclass(frozen=True)
class MemoryNode:
    sha: str
    level: str
    query_id: str
    store: str
    run_id: str
    turn: int
    tokens: int
    final: bool
    current: bool
    text: str
    lines: tuple[Line, ...] = ()
    read: tuple[Ref, ...] = ()  # what its turn read (the chunk, or an L1 memory at L2) and the version it replaced


@dataclass(frozen=True)
class StoreWriteNode:
    sha: str
    namespace: str
    store: str
    block: str
    ts: str
    text: str
    source_run_id: str
    memory: Ref | None  # the final memory of the run the item was imported from


@dataclass(frozen=True)
class Lineage:
    """What ``mem show SHA`` shows: the node the sha names, its chain down to the source, and links up."""

    sha: str
    kind: str  # 'memory' | 'line' | 'evidence' | 'store_write'
    memory: MemoryNode | None = None
    line: Line | None = None
    evidence: Chunk | None = None
    store_writes: tuple[StoreWriteNode, ...] = ()
    up: tuple[Ref, ...] = field(default=())  # what was derived from it: memories holding a line, lines of a chunk


KINDS = tuple(kind for kind, _ in _RESOLVE)  # a sha several kinds share (a one-line memory is its line) is the first


def resolve(con, sha: str, kind: str | None = None, namespace: str | None = None) -> tuple[str, str]:
    """(full sha, kind) for a sha or unique prefix; ``kind`` picks one when a sha names several kinds of node.
    A sha that names no node, or a prefix that several shas start with, raises. With ``namespace``, another
    namespace's store writes are not nodes at all (not found, and not counted towards an ambiguity)."""
    prefix = sha.strip().lower()
    if not _HEX.match(prefix):
        raise ShaNotFound(sha, "not a sha (up to 64 hex digits)")
    found: dict[str, list[str]] = {}
    for name, sql in _RESOLVE:
        if kind in (None, name):
            params = [prefix, namespace, namespace] * 2 if name == "store_write" else [prefix]
            for (full,) in con.execute(sql.format(ns=_IN_NS), params).fetchall():
                found.setdefault(full, []).append(name)
    if not found:
        raise ShaNotFound(sha, f"no {kind.replace('_', ' ')} has this sha") if kind else ShaNotFound(sha)
    if len(found) > 1:
        raise AmbiguousSha(sha, len(found))
    full, kinds = next(iter(found.items()))
    return full, kinds[0]


class _Walk:
    """One walk over an open read-only connection; the source files are read once each."""

    def __init__(self, con, finder: SourceFinder, namespace: str | None = None):
        self.con, self.finder, self.namespace = con, finder, namespace

    def chunk(self, sha: str) -> Chunk | None:
        row = self.con.execute(_EVIDENCE, [sha]).fetchone()
        if row is None:
            return None
        sha, level, source, position, tokens, text = row
        units = split_units(text)
        where = SourceRef(source)
        if units:
            nth = occurrences_before(units[0].text, self.earlier(source, level, position), "", -1)
            where = self.finder.locate(source, units[0].text, units[-1].text, nth)
        return Chunk(sha, level, source, position, tokens, text, where)

    def earlier(self, source: str, level: str, position: int) -> list[str]:
        return [t for (t,) in self.con.execute(_EARLIER, [source, level, position]).fetchall()]

    def gate(self, run_id: str, turn: int) -> Gate | None:
        row = self.con.execute(_GATE, [run_id, turn]).fetchone()
        return Gate(*row) if row else None

    def lines(self, where: str, param: str) -> list[Line]:
        rows = self.con.execute(_LINES.format(where=where), [param]).fetchall()
        return [self.line(*r) for r in rows]

    def line(self, memory_sha, line_no, level, run_id, text, turn, evidence_sha, via_sha, span_start) -> Line:
        via = None
        if via_sha:
            inner = self.con.execute(_LINES.format(where="memory_sha = ? AND text = ?"), [via_sha, text]).fetchone()
            via = self.line(*inner) if inner else None
        chunk = (via.evidence if via else None) or (self.chunk(evidence_sha) if evidence_sha else None)
        unit = None
        if chunk is not None and not via:
            nth = occurrences_before(text, self.earlier(chunk.source, chunk.level, chunk.position), chunk.text,
                                     span_start)
            where = self.finder.locate(chunk.source, text, None, nth) if span_start >= 0 else chunk.where
            unit = Unit(text, span_start, where)
        return Line(sha256_text(text), memory_sha, line_no, level, text, self.gate(run_id, turn), chunk,
                    via.unit if via else unit, via)

    def memory(self, sha: str) -> MemoryNode | None:
        row = self.con.execute(_MEMORY, [sha]).fetchone()
        if row is None:
            return None
        sha, level, query_id, store, run_id, turn, tokens, final, text, current = row
        read = tuple(self.ref(parent, "previous version" if kind == "previous" else "read")
                     for parent, kind in self.con.execute(_EDGES_DOWN, [sha, run_id]).fetchall())
        lines = tuple(self.lines("memory_sha = ?", sha))
        return MemoryNode(sha, level, query_id, store, run_id, turn, tokens, final, current, text, lines, read)

    def ref(self, sha: str, role: str) -> Ref:
        """A link to a memory or a chunk, labelled with what it is."""
        m = self.con.execute(_MEMORY, [sha]).fetchone()
        if m is not None:
            return Ref("memory", sha, f"{role}: {m[1]} memory {sha[:12]} · query {m[2]} · run {m[4][:12]} turn {m[5]}")
        c = self.con.execute(_EVIDENCE, [sha]).fetchone()
        if c is not None:
            return Ref("evidence", sha, f"{role}: {c[1]} chunk {sha[:12]} · {c[2]}#{c[3]}")
        return Ref("unknown", sha, f"{role}: not in the index")

    def derived(self, sha: str) -> list[Ref]:
        """Memories that read this sha: the next version, an L2 memory over an L1 one."""
        refs = [self.ref(child, "next version" if kind == "previous" else "read by")
                for child, kind in self.con.execute(_EDGES_UP, [sha]).fetchall()]
        return refs

    def store_writes(self, sha: str) -> tuple[StoreWriteNode, ...]:
        out = []
        rows = self.con.execute(_STORE, [sha, self.namespace, self.namespace] * 2).fetchall()
        for ns, store, block, ts, text, run_id in rows:
            final = self.con.execute(_RUN_FINAL, [run_id]).fetchone() if run_id else None
            memory = self.ref(final[0], "from") if final and final[0] else None
            out.append(StoreWriteNode(sha, ns, store, block, ts, text, run_id, memory))
        return tuple(out)


def lineage(db_path: Path, sha: str, finder: SourceFinder | None = None, kind: str | None = None,
            namespace: str | None = None) -> Lineage:
    """The lineage of the node ``sha`` (or a unique prefix) names, read from the index at ``db_path``; ``kind``
    (one of ``KINDS``) picks the node when one sha names several (a one-line memory and its line). ``namespace``:
    only that namespace's typed-store writes are found or shown (None: every namespace's, for the log's owner)."""
    if kind is not None and kind not in KINDS:
        raise ShaNotFound(sha, f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    con = connect_read_only(db_path, files=False)
    try:
        full, kind = resolve(con, sha, kind, namespace)
        walk = _Walk(con, finder or SourceFinder(), namespace)
        if kind == "memory":
            return Lineage(full, kind, memory=walk.memory(full), store_writes=walk.store_writes(full),
                           up=tuple(walk.derived(full)))
        if kind == "evidence":
            lines = walk.lines("evidence_sha = ?", full)
            up = [Ref("line", ln.sha, f"line {ln.line_no} of {ln.level} memory {ln.memory_sha[:12]}") for ln in lines]
            return Lineage(full, kind, evidence=walk.chunk(full), up=tuple(up + walk.derived(full)))
        if kind == "line":
            (text,) = con.execute(_UNIT_TEXT, [full]).fetchone()
            held = walk.lines("text = ?", text)
            up = tuple(walk.ref(ln.memory_sha, f"line {ln.line_no} of") for ln in held)
            first = next((ln for ln in held if ln.via is None), held[0] if held else None)
            return Lineage(full, kind, line=first, up=up)
        return Lineage(full, kind, store_writes=walk.store_writes(full))
    finally:
        con.close()
