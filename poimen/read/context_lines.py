"""The lines of a built context and where each came from: what ``mem context`` prints and ``mem ask`` answers from.

A line is one unit of text with every origin it has (a memory line and the L0
unit it copies are one line carrying both); ``Context.render`` groups lines by
source chunk, ``render_tagged`` puts the full provenance tag on each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poimen.text.tokens import count_tokens


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

    def keeper(self) -> str:
        """The store/level of a memory, under which a context's closing note names the memories its lines come from."""
        return f"{self.store or 'memory'}/{self.level}"

    def short_sha(self) -> str:
        return self.sha[:8]


def kept_by_notes(memories: list[Origin]) -> list[str]:
    """``[* kept by episodic/L1 memory 43df134e 7e63fb54]``: per store/level, the memories (short shas, in first-seen
    order) that kept a context's ``*`` lines. One note per store/level rather than one per memory: a note cost
    about 15 tokens a memory, a memory named in a shared one about 5, and a context over broad standing queries
    draws on several memories (eight topics on LoCoMo)."""
    by_keeper: dict[str, dict[str, None]] = {}
    for o in memories:
        by_keeper.setdefault(o.keeper(), {})[o.short_sha()] = None
    return [f"[* kept by {keeper} memory {' '.join(shas)}]" for keeper, shas in by_keeper.items()]


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
    # What render() prints besides the lines, as lines are added: the group headers and the memories each
    # store/level's closing note names.
    _opened: set[str] = field(default_factory=set, repr=False, compare=False)
    _named: dict[str, set[str]] = field(default_factory=dict, repr=False, compare=False)

    def cost(self, line: ContextLine) -> int:
        """The tokens adding ``line`` adds to ``render()``: its own line, the header of the group it opens (if
        it opens one) and its memory's name in the closing notes (if not named yet)."""
        header = line.origins[0].group()
        cost = count_tokens(line.render_short()) + 1 + (count_tokens(header) + 1 if header not in self._opened else 0)
        for m in line.memories()[:1]:
            if m.keeper() not in self._named:
                cost += count_tokens(kept_by_notes([m])[0]) + 1
            elif m.short_sha() not in self._named[m.keeper()]:
                cost += count_tokens(" " + m.short_sha())
        return cost

    def add(self, line: ContextLine, cost: int) -> None:
        """Append ``line``, which ``cost`` said costs that many tokens."""
        self._opened.add(line.origins[0].group())
        for m in line.memories()[:1]:
            self._named.setdefault(m.keeper(), set()).add(m.short_sha())
        self.lines.append(line)
        self.tokens += cost

    def render(self) -> str:
        """Lines grouped under a ``[source #chunk]`` header, each opening with its line number (``*`` when a
        memory kept it), in stream order inside a group; groups in the order of their best line; then one closing
        note per store/level naming the memories the ``*`` lines come from (``kept_by_notes``). Provenance then
        costs a header per chunk, two tokens a line and about five a memory, not a full tag per line, which is
        what lets the context carry it and still fill its budget."""
        groups: dict[str, list[ContextLine]] = {}
        for line in self.lines:
            groups.setdefault(line.origins[0].group(), []).append(line)
        out = []
        for header, lines in groups.items():
            out.append(header)
            out.extend(line.render_short() for line in sorted(lines, key=lambda x: x.line))
        return "\n".join(out + kept_by_notes([o for line in self.lines for o in line.memories()[:1]]))

    def render_tagged(self) -> str:
        """One line per unit, each with its full provenance tag (what ``mem ask`` hands the answer prompt)."""
        return "\n".join(line.render() for line in self.lines)
