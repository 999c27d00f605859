"""Text cut into scoring units: lines and records whole, list items with their wrapped continuation, prose joined.

A unit is what the scorer ranks and the offline gate copies whole: a log line,
a chat turn, a list item, a one-line paragraph, or a sentence of hard-wrapped
prose. Each unit keeps its character span in the text it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from poimen.text.headings import DATED_TITLE
from poimen.text.log_lines import is_log_line
from poimen.text.words import sentence_cuts
from poimen.text.tokens import count_tokens

MAX_UNIT_TOKENS = 96  # a prose line longer than this is cut into sentences
ITEM_PARAGRAPH_LINES = 3  # a list item wrapped over this many lines is a paragraph, cut into sentences
RECORD_MAX_TOKENS = 512  # a record (chat turn, log line) is cut only past this: a wall of text, not a message
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9`<])")


@dataclass(frozen=True)
class Unit:
    """A unit of a text and its character span in that text."""

    text: str
    start: int
    end: int
    heading: str = ""  # the title of the section the unit stands in (``split_units``), "" when none


# A record starts with a bullet, quote, heading or table bar, but a line that opens in **bold** is wrapped text (a
# list item's continuation: "- JSON body …: rejected by\n  **Kong**'s plugin"), not a bullet.
_RECORD_START = re.compile(
    r"^\s*(?:[-+•>#|]|\*(?!\*)|\d+[.)]\s|\[|\{|\d{2,4}[-/:.]\d|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d|at |Caused by|Traceback|File \"|"
    r"[A-Z][A-Z0-9_]{2,}\b|[\w.-]+:\s*$)")


# A line led by a number and another token: a log's sequence id ("134681 node-246 unix.hw …", loghub HPC). Prose
# wraps onto a line that starts with a number now and then; most lines of a block doing so is a log or a table.
_ID_LED = re.compile(r"^\s*\d+\s+\S")


def _starts_record(line: str) -> bool:
    return bool(_RECORD_START.match(line) or is_log_line(line.lstrip()))


def _is_prose(lines: list[str]) -> bool:
    """A block of hard-wrapped prose (Markdown, text): lines that start no record and mostly end mid-sentence."""
    if len(lines) < 2 or _starts_record(lines[0]) or sum(_starts_record(x) for x in lines) * 4 > len(lines):
        return False
    if sum(bool(_ID_LED.match(x)) for x in lines) * 2 > len(lines):
        return False
    inner = lines[:-1]
    wrapped = sum(20 <= len(x.strip()) <= 120 and x.rstrip()[-1] not in ".!?:;" for x in inner)
    return wrapped * 2 >= len(inner)


def _sentences(text: str, offset_of, max_tokens: int, whole: bool = False) -> list[Unit]:
    """``text`` cut into sentences, or kept whole when ``whole`` and under ``max_tokens``; ``offset_of`` maps a
    position in ``text`` to the source text."""
    stripped = text.strip()
    if not stripped:
        return []
    base = text.index(stripped)
    if whole and (len(stripped) < max_tokens * 3 or count_tokens(stripped) <= max_tokens):
        return [Unit(stripped, offset_of(base), offset_of(base + len(stripped) - 1) + 1)]
    out, last = [], 0
    for end, start in [*sentence_cuts(stripped, _SENTENCE), (len(stripped), len(stripped))]:
        piece = stripped[last:end].strip()
        if piece:
            j = stripped.index(piece, last)
            out.append(Unit(piece, offset_of(base + j), offset_of(base + j + len(piece) - 1) + 1))
        last = start
    return out


_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


_TIMELINE_ENTRY = re.compile(r"^(\s*\d{1,2}:\d{2}(?::\d{2})?\s{2,})\S")
_CLOCK_ENTRY = re.compile(r"^\s*\d{1,2}:\d{2}(?::\d{2})?\s+\S")  # "03:12 Declan restarted …": a time of day, no date
_ENDED = (".", ":", "!", "?", ";")  # a line that ends its sentence
_WRAPPED = 40  # a line at least this long that ends mid-sentence was wrapped, not ended
WRAP_SHARE = 0.8  # ... and at least this share of its block's longest line


def _items(block: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Lines grouped into records: a list item keeps its wrapped continuation (lines indented past its marker that
    start no record), so "- restart the pod, then\\n  drain the node" is one unit, not two fragments; so does a
    timeline entry written with a hanging indent ("10:24  rolled back to 8.13.2, since it was\\n       the most
    recent change."), whose continuation lines start where its text does, or wrapped flush left while its sentence
    runs on ("03:12 Declan restarted the pods; the errors continued,\\nbecause …")."""
    items: list[list[tuple[int, str]]] = []
    # a line wrapped by its writer runs near the block's width (not a short item over a line of its own)
    wrap = max(_WRAPPED, WRAP_SHARE * max(len(line.strip()) for _, line in block)) if block else _WRAPPED
    for at, line in block:
        head = items[-1][0][1] if items else ""
        item = _LIST_ITEM.match(head)
        entry = _TIMELINE_ENTRY.match(head)
        if item and _indent(line) > len(item.group(1)) and not _RECORD_START.match(line):
            items[-1].append((at, line))
        elif item and _indent(line) > len(item.group(1)) and _CLOCK_ENTRY.match(line) \
                and not is_log_line(line.lstrip()) and not items[-1][-1][1].rstrip().endswith(_ENDED):
            items[-1].append((at, line))  # "- Cause: … moved the flag at" / "  13:22 (planned step …)": the item's
            # sentence runs on over a clock (bench/incidents24)
        elif item and not _RECORD_START.match(line) and len(items[-1][-1][1].strip()) >= wrap \
                and not items[-1][-1][1].rstrip().endswith(_ENDED):
            items[-1].append((at, line))  # a numbered paragraph hard-wrapped flush left, its sentence not yet ended:
            # "1. On Tuesday … upgraded the firmware on the top-of-rack" / "switch in rack B …" (Markdown's lazy
            # continuation; a postmortem told in numbered paragraphs, bench/incidents45)
        elif entry and _indent(line) == len(entry.group(1)) and not _RECORD_START.match(line):
            items[-1].append((at, line))
        elif _CLOCK_ENTRY.match(head) and not _CLOCK_ENTRY.match(line) and not _LIST_ITEM.match(line) \
                and not is_log_line(line.lstrip()) and _indent(line) <= _indent(head) and not items[-1][-1][1].rstrip().endswith(_ENDED[:4]):
            items[-1].append((at, line))  # a timeline entry wrapped flush left, its sentence not yet ended
        else:
            items.append([(at, line)])
    return items


def _joined(lines: list[tuple[int, str]]):
    """(the lines' stripped text joined by spaces, a map from a position in it to the offset in the source)."""
    starts, joined, parts = [], 0, []
    for at, line in lines:
        starts.append((joined, at + _indent(line)))
        parts.append(line.strip())
        joined += len(line.strip()) + 1

    def offset_of(p: int) -> int:
        j0, o0 = max((s for s in starts if s[0] <= p), key=lambda s: s[0])
        return o0 + (p - j0)

    return " ".join(parts), offset_of


def _set_off(block: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """A block of prose cut where lines indented four blanks deeper than it sit inside it (a log excerpt or a
    command a plain-text write-up quotes between two of its sentences: "The job logs all ended the same way:" over
    "    ERROR: Job failed: …"; bench/incidents26), so the quote is no part of a sentence; else the block whole."""
    indents = [len(x) - len(x.lstrip()) for _, x in block]
    deep = [n >= min(indents) + 4 for n in indents]
    if all(deep) or not any(deep) or not _is_prose([x for (_, x), d in zip(block, deep) if not d]) or any(
            deep[k] and not deep[k - 1] and not block[k - 1][1].rstrip().endswith(":") for k in range(1, len(block))):
        return [block]  # (only under a line that introduces it: a hanging indent is the same sentence going on)
    runs: list[list[tuple[int, str]]] = []
    for k, item in enumerate(block):
        if k == 0 or deep[k] != deep[k - 1]:
            runs.append([])
        runs[-1].append(item)
    return runs


def _units(block: list[tuple[int, str]], max_tokens: int) -> list[Unit]:
    """The units of one block of non-blank lines: prose as sentences, records and short lines whole."""
    if len(runs := _set_off(block)) > 1:
        return [unit for run in runs for unit in _units(run, max_tokens)]
    lines = [x for _, x in block]
    if _is_prose(lines):
        return _sentences(*_joined(block), max_tokens)
    out: list[Unit] = []
    for item in _items(block):  # a record stays whole (up to RECORD_MAX_TOKENS: a chat turn is never cut),
        limit = RECORD_MAX_TOKENS if _starts_record(item[0][1]) or _ID_LED.match(item[0][1]) else max_tokens  # as does a short line
        # (a list item wrapped over lines enough to be a paragraph is prose: its sentences, as a paragraph's;
        # "7. So both replicas needed a full copy …" in a postmortem told in numbered paragraphs)
        marker = _LIST_ITEM.match(item[0][1])  # (wrapped flush left: a numbered paragraph, not an indented item)
        paragraph = len(item) >= ITEM_PARAGRAPH_LINES and marker is not None and any(
            _indent(line) <= len(marker.group(1)) for _, line in item[1:])
        out.extend(_sentences(*_joined(item), max_tokens if paragraph else limit, not paragraph))
    return out


_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)[\s#]*$")
_UNDERLINE = re.compile(r"^\s*([=\-~])\1{2,}\s*$")  # a plain-text heading's underline: "Summary\n-------"
_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_TITLE_WORDS = 10


def _short_title(line: str) -> bool:
    """A line that could title what follows it: short, ending no sentence, no "key: value" or speaker line, and
    no record (a log line, a list item) unless a one-word label ("Rollback:")."""
    text = line.strip()
    if DATED_TITLE.match(text):  # an entry's day and title: "2025-01-14  CI image pulls failing on all runners"
        return len(text.split()) <= 2 * _TITLE_WORDS and text[-1] not in ".!?,;"
    if not text or len(text.split()) > _TITLE_WORDS or text[-1] in ".!?,;" or re.search(r"\w: ", text):
        return False
    return not _RECORD_START.match(line) or bool(re.fullmatch(r"[A-Za-z][\w-]*:", text))


def _starts_body(title: str, below: str) -> bool:
    """``below`` reads as the text a title line heads: longer, and starting a sentence or (under a label) a list."""
    text, nxt = title.strip(), below.strip()
    if text.endswith(":") and _LIST_ITEM.match(below):
        return True
    return (len(nxt) > len(text) or bool(DATED_TITLE.match(text))) and not _RECORD_START.match(below) and (nxt[0].isupper() or nxt[0] in "\"'(0123456789")


def _titles(lines: list[str]) -> int:
    """How many lines at the head of a block title the rest: the longest run of short title lines whose last line
    sits over the start of a body (none when nothing would be left)."""
    n = 0
    while n + 1 < len(lines) and _short_title(lines[n]):
        n += 1
    while n and not _starts_body(lines[n - 1], lines[n]):
        n -= 1
    return n


def titles_only(text: str) -> bool:
    """``text`` is a heading or a bare label ("## Resolution", "payments-worker:", "Caused by:"): it names what
    follows it and states nothing itself, so it is no answer to a question."""
    line = text.strip()
    return bool(_MD_HEADING.match(line)) or (line.endswith(":") and len(line.split()) <= 4 and "\n" not in line)


def _title_text(lines: list[str]) -> str:
    """The heading a block's title lines give: the last that is not a bare label ("Document 12:"), else that label."""
    named = [x.strip() for x in lines if not x.strip().endswith(":")]
    return named[-1] if named else lines[-1].strip().rstrip(":").strip()


@dataclass(frozen=True)
class Outline:
    """Where a text stands in the document it was cut from: the Markdown headings open at its start (level, text),
    and whether it starts inside a ``` fence. A chunk cut from the middle of a section starts under that section's
    headings, though it holds none of them; ``split_units_under`` carries them from one chunk to the next."""

    path: tuple[tuple[int, str], ...] = ()
    fenced: bool = False


def split_units(text: str, max_tokens: int = MAX_UNIT_TOKENS) -> list[Unit]:
    """``split_units_under`` a text that starts a document (no heading open, outside any fence)."""
    return split_units_under(text, Outline(), max_tokens)[0]


def split_units_under(text: str, outline: Outline, max_tokens: int = MAX_UNIT_TOKENS) -> tuple[list[Unit], Outline]:
    """Lines — log lines, chat turns, list items, table rows, one-line paragraphs — whole, cut into sentences
    only past ``max_tokens``; hard-wrapped prose is joined back into its paragraph first. Spans index ``text``.

    Why a one-line paragraph stays whole: on the HotpotQA dev split (``bench.calibrate``) sentence units lost
    0.04 supporting-fact retention at equal precision — a fact's second sentence ("He was born in …") rarely
    names what the question asks about, and it travels with the first when the paragraph is the unit.

    Each unit carries the ``heading`` of the section it stands in: the Markdown headings above it (the page's
    title, then each level down to its section: "Postmortem: uploads rejected · Root cause"), and the title lines
    that head its block (a short line over a paragraph: "Neighbours" above "It was created by
    Reg Watson."). The scorer lets a unit's heading count for it (``Scorer.score``), as a reader does: a
    sentence's subject is often only in its title.

    ``outline``: the headings open (and the fence) where ``text`` starts; returned with the units, as they stand
    where it ends, for the text that follows it.
    """
    out: list[Unit] = []
    block: list[tuple[int, str]] = []  # (offset of the line in text, line)
    path: dict[int, str] = dict(outline.path)  # Markdown heading level -> its text: the headings a line stands under
    fenced = outline.fenced  # inside a ``` block, where "# restart it" is a shell comment

    def flush() -> None:
        nonlocal fenced
        lines = [x for _, x in block]
        md = None if fenced else _MD_HEADING.match(lines[0])
        fenced ^= sum(bool(_FENCE.match(x)) for x in lines) % 2 == 1
        underlined = not md and len(lines) > 2 and _UNDERLINE.match(lines[1]) and _short_title(lines[0])
        head = 1 if md else 2 if underlined else _titles(lines)
        for unit in _units(block[:head], max_tokens) if head else []:
            out.append(replace(unit, heading=" · ".join(path.values())))
        if md:
            level = len(md.group(1))
            for deeper in [k for k in path if k >= level]:
                del path[deeper]
            path[level] = md.group(2).strip()
        title = _title_text(lines[:1] if underlined else lines[:head]) if head and not md else ""
        heading = " · ".join([*path.values(), *([title] if title else [])])
        for unit in _units(block[head:], max_tokens) if head < len(block) else []:
            out.append(replace(unit, heading=heading))
        block.clear()

    at = 0
    for line in text.split("\n"):
        if line.strip():
            block.append((at, line))
        elif block:
            flush()
        at += len(line) + 1
    if block:
        flush()
    return out, Outline(tuple(path.items()), fenced)


HEADLINE_CHARS = 255  # a title fits a tracker's summary field: JIRA caps it at 255 characters, GitHub at 256
_HEADING_MARK = re.compile(r"^\s*(?:#{1,6}\s+|(?:Subject|Title|Summary):\s*)", re.I)


def headline(text: str) -> str | None:
    """The title of a titled text — a ticket (summary, blank line, description), an e-mail, a Markdown page —
    or None for any other text.

    A titled text says what it is about in its first line; its body may be
    mostly pasted logs, config or a build transcript, which a sentence
    embedder (reading the first 256 word pieces) or a keyword match over the
    whole text lets drown the title. So lookup compares titles as a field of
    their own (``poimen.index.lookup``). The shape asked for is what trackers
    and mail write and logs do not: a first line no longer than
    ``HEADLINE_CHARS``, then a blank line, then a body. A Markdown ``#`` or a
    ``Subject:`` label is not part of the title.
    """
    lines = text.strip().splitlines()
    if len(lines) < 3 or lines[1].strip() or len(lines[0].strip()) > HEADLINE_CHARS:
        return None
    title = _HEADING_MARK.sub("", lines[0]).strip()
    return title or None
