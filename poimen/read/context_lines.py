"""The lines of a built context and where each came from: what ``mem context`` prints and ``mem ask`` answers from.

A line is one unit of text with every origin it has (a memory line and the L0
unit it copies are one line carrying both); ``Context.render`` groups lines by
source chunk, ``render_tagged`` puts the full provenance tag on each.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Origin:
    """Where a line comes from: a memory line (store, level, memory sha) or a chunk unit (level, chunk sha)."""

    kind: str  # 'memory' | 'evidence' | 'reference'
    level: str
    sha: str  # the memory sha, or the chunk sha
    source: str
    position: int
    line: int  # the line of the chunk the unit starts on (-1 unknown)
    store: str = ""
    query_id: str = ""

    def tag(self) -> str:
        where = f"{self.source}{self.ref()}" if self.source else ""
        head = f"{self.store or 'memory'}/{self.level}" if self.kind == "memory" else f"{self.kind}/{self.level}"
        return " ".join(p for p in (head, self.sha[:8], where) if p)

    def ref(self) -> str:
        """``#chunk:line`` inside the source."""
        return f"#{self.position}" + (f":{self.line}" if self.line > 0 else "")

    def group(self) -> str:
        """The header a context groups this origin's lines under: their source and chunk."""
        return f"[{self.source or self.level} #{self.position}]"

    def footnote(self) -> str:
        """The note a context ends with for a memory its lines come from."""
        return f"[* kept by {self.store or 'memory'}/{self.level} memory {self.sha[:8]}]"


@dataclass(frozen=True)
class ContextLine:
    text: str
    score: float
    origins: tuple[Origin, ...]
    repeats: int = 1
    variants: tuple[str, ...] = ()  # what its repeats differ in (hosts, nodes), when they are one log line elsewhere

    @property
    def level(self) -> str:
        return self.origins[0].level

    @property
    def sha(self) -> str:
        return self.origins[0].sha

    @property
    def source(self) -> str:
        return self.origins[0].source

    @property
    def position(self) -> int:
        return self.origins[0].position

    @property
    def line(self) -> int:
        return self.origins[0].line

    def times(self) -> str:
        """" ×17: gige5, gige7, …" for a line repeated on several hosts, " ×3" for one repeated, "" for one line."""
        if self.repeats <= 1:
            return ""
        return f" ×{self.repeats}" + (f": {', '.join(self.variants)}" if self.variants else "")

    def render(self) -> str:
        return f"{self.text}  [{self.origins[0].tag()}{self.times()}]"

    def render_short(self) -> str:
        """``line| text`` under its chunk's header; ``*`` marks a line a memory kept, ``×n`` a repeated one."""
        kept = "*" if self.memories() else ""
        return f"{max(self.line, 0)}{kept}| {self.text}{self.times()}"

    def memories(self) -> list[Origin]:
        return [o for o in self.origins if o.kind == "memory"]


@dataclass(frozen=True)
class HitLines:
    """The lines a lookup hit shows, and the ones it leaves out because a higher hit showed them already."""

    lines: tuple[ContextLine, ...]
    shown_above: tuple[tuple[int, int], ...] = ()  # (the 1-based hit that showed them, how many), by hit

    def note(self) -> str:
        """'2 lines shown above under hit 1', or '' when nothing was left out."""
        parts = [f"{m} line{'s' if m > 1 else ''} shown above under hit {n}" for n, m in self.shown_above]
        return "; ".join(parts)


@dataclass
class Context:
    question: str
    budget: int
    lines: list[ContextLine] = field(default_factory=list)
    tokens: int = 0

    def render(self) -> str:
        """Lines grouped under a ``[source #chunk]`` header, each opening with its line number (``*`` when a
        memory kept it, the memory named in a closing note), in stream order inside a group; groups in the order
        of their best line. Provenance then costs a header per chunk and two tokens a line, not a full tag per
        line, which is what lets the context carry it and still fill its budget."""
        groups: dict[str, list[ContextLine]] = {}
        notes: dict[str, None] = {}
        for line in self.lines:
            groups.setdefault(line.origins[0].group(), []).append(line)
            notes.update(dict.fromkeys(o.footnote() for o in line.memories()[:1]))
        out = []
        for header, lines in groups.items():
            out.append(header)
            out.extend(line.render_short() for line in sorted(lines, key=lambda x: x.line))
        return "\n".join(out + list(notes))

    def render_tagged(self) -> str:
        """One line per unit, each with its full provenance tag (what ``mem ask`` hands the answer prompt)."""
        return "\n".join(line.render() for line in self.lines)
