"""An e-mail saved as a file (.eml, RFC 5322): a postmortem mailed to a list, or a reply that corrects it and quotes
it below.

The header block (folded lines joined) gives the subject, which titles the message, and the sender, who is the
author of what the message says itself. The body is the first ``text/plain`` part (else the ``text/html`` one, read
as a page) of a multipart message, decoded as its ``Content-Transfer-Encoding`` says: quoted-printable lines with
their soft breaks joined, each decoded line at the file lines it came from; base64 at the part's lines. The quoted
message under "On …, Tom wrote:" reads as the document it was ("> ROOT CAUSE" is a heading again), and the
signature under "-- " is no one's words. The body is read as plain text is (``text``), its paragraphs a blank line
apart.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import re
from collections.abc import Iterator
from dataclasses import replace
from email.header import decode_header, make_header
from email.utils import parseaddr
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.readers import html, markdown, text
from poimen.inputs.records import Record
from poimen.inputs.stream import Piece, whole_text

_FIELD = re.compile(r"^([A-Za-z][\w-]*):[ \t]?(.*)$")
# The fields a saved message opens with, as a mail client or a server writes it
_OPENERS = frozenset("return-path received from delivered-to message-id mime-version date subject to x-mailer "
                     "x-original-to reply-to sender".split())
_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_SIGNATURE = "-- "


def is_mail(head: str) -> bool:
    """Whether a file opens with a message's header block: a field a message opens with, and a sender and a subject
    or a date among its fields."""
    lines = head.replace("\r", "").split("\n")
    first = _FIELD.match(lines[0]) if lines else None
    if not first or first.group(1).lower() not in _OPENERS and not first.group(1).lower().startswith("x-"):
        return False
    fields, _ = _fields(lines, 0)
    return "from" in fields and ("subject" in fields or "date" in fields)


def _fields(lines: list[str], at: int) -> tuple[dict[str, str], int]:
    """The header fields from line ``at`` to the blank line that ends them (folded lines joined), and where the body
    starts."""
    fields: dict[str, str] = {}
    last = ""
    n = at
    while n < len(lines) and lines[n].strip():
        line = lines[n]
        if line[:1] in (" ", "\t") and last:
            fields[last] += " " + line.strip()
        elif m := _FIELD.match(line):
            last = m.group(1).lower()
            fields.setdefault(last, m.group(2).strip())
        n += 1
    return fields, n + 1


def _param(value: str, name: str) -> str:
    m = re.search(rf'\b{name}\s*=\s*"?([^";]+)"?', value, re.I)
    return m.group(1).strip() if m else ""


def _decoded_header(value: str) -> str:
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError):
        return value


def _parts(fields: dict[str, str], lines: list[str], at: int, end: int) -> Iterator[tuple[dict[str, str], int, int]]:
    """The leaf parts of a message: (fields, first body line, end) each, 0-based lines."""
    ctype = fields.get("content-type", "text/plain")
    boundary = _param(ctype, "boundary") if ctype.lower().startswith("multipart/") else ""
    if not boundary:
        yield fields, at, end
        return
    marks = [n for n in range(at, end) if lines[n].rstrip() in (f"--{boundary}", f"--{boundary}--")]
    for a, b in zip(marks, marks[1:]):
        if lines[a].rstrip() == f"--{boundary}--":
            break
        inner, body = _fields(lines, a + 1)
        yield from _parts(inner, lines, body, b)


def _lines(fields: dict[str, str], at: int, end: int, lines: list[str]) -> list[tuple[str, int, int]]:
    """A part's body decoded: (line, first file line, last file line) each, 1-based."""
    encoding = fields.get("content-transfer-encoding", "").strip().lower()
    charset = _param(fields.get("content-type", ""), "charset") or "utf-8"

    def decode(raw: bytes) -> str:
        try:
            return raw.decode(charset, errors="replace")
        except LookupError:
            return raw.decode("utf-8", errors="replace")

    if encoding == "base64":
        try:
            body = decode(base64.b64decode("".join(x.strip() for x in lines[at:end]), validate=True))
        except (binascii.Error, ValueError) as e:
            raise SourceError(f"{at + 1}: invalid base64 body: {e}") from e
        return [(x, at + 1, max(at + 1, end)) for x in body.split("\n")]
    out: list[tuple[str, int, int]] = []
    n = at
    while n < end:
        start, line = n, lines[n]
        if encoding == "quoted-printable":
            while line.endswith("=") and n + 1 < end:  # a soft break: the line goes on
                n += 1
                line = line[:-1] + lines[n]
            line = decode(quopri.decodestring(line.encode("ascii", errors="replace")))
        out.append((line, start + 1, n + 1))
        n += 1
    return out


def _paragraphs(decoded: list[tuple[str, int, int]]) -> Iterator[Piece]:
    """The body's paragraphs, quote marks taken off and the signature left out, each line at its file line."""
    block: list[tuple[str, int, int]] = []
    signed = False
    depth = 0  # the quote marks of the line before: where they change ("On …, Tom wrote:" over "> …"), a block ends
    for line, start, end in decoded + [("", 0, 0)]:
        marks = _QUOTE.match(line)
        said = line[marks.end():].rstrip() if marks else line.rstrip()
        if line.rstrip("\r") == _SIGNATURE or said == _SIGNATURE.rstrip():
            signed = True  # the signature runs to the next blank line
        quoted = marks.group(0).count(">") if marks else 0
        if block and quoted != depth:
            yield _piece(block)
            block = []
        depth = quoted
        if not said.strip():
            signed = False
            if block:
                yield _piece(block)
                block = []
            continue
        if not signed:
            block.append((said, start, end))


def _piece(block: list[tuple[str, int, int]]) -> Piece:
    first = block[0][0]
    return Piece("\n".join(x for x, _, _ in block).strip(), block[0][1], block[-1][2], len(first) - len(first.lstrip()),
                 origin=tuple(a for _, a, _ in block))


def read(path: Path, options) -> Iterator[Record]:
    lines = whole_text(path).replace("\r\n", "\n").split("\n")
    fields, body = _fields(lines, 0)
    if "from" not in fields:
        raise SourceError(f"{path}: no message header (From:) at the top; expected an e-mail saved as .eml")
    parts = list(_parts(fields, lines, body, len(lines)))
    plain = next((p for p in parts if p[0].get("content-type", "text/plain").lower().startswith("text/plain")), None)
    paged = next((p for p in parts if p[0].get("content-type", "").lower().startswith("text/html")), None)
    if plain is None and paged is None:
        raise SourceError(f"{path}: no text/plain or text/html part in the message")
    try:
        decoded = _lines(*(plain or paged), lines)
    except SourceError as e:
        raise SourceError(f"{path}:{e}") from e
    author = parseaddr(_decoded_header(fields["from"]))[0] or parseaddr(fields["from"])[1]
    if plain is not None:
        found = text.read_pieces(_paragraphs(decoded), _decoded_header(fields.get("subject", "")) or None)
    else:  # a page: its lines are the decoded lines, each at the file line it came from
        at = [a for _, a, _ in decoded]
        found = (replace(r, line_start=at[r.line_start - 1], line_end=at[min(r.line_end, len(at)) - 1])
                 for r in markdown.read_pieces(html.page_pieces("\n".join(x for x, _, _ in decoded))))
    yield from (replace(r, author=author) for r in found)
