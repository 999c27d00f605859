"""Exception signatures: class + message shape + the innermost frames, per runtime.

Each exception gives up to two keys. ``{tool}:{Class}: {shape}`` names what
went wrong and is what a bare pasted error line (no trace) can still match;
``{tool}:{Class}@{frames}`` names where, as up to three innermost frames in
call order (caller > callee), each ``file:function`` with the line number
dropped (Java frames are ``pkg.Class.method``; the class already says the
file). Every extractor also returns the text ranges it consumed, so the log
line reader does not turn a traceback's lines into templates a second time.
"""

from __future__ import annotations

import re

from poimen.signatures.frames import JAVA_FRAME as _JAVA_FRAME, JAVA_MORE as _JAVA_MORE, PY_FRAME as _PY_FRAME
from poimen.signatures.frames import from_application
from poimen.signatures.masking import shape, span
from poimen.signatures.model import Found, Signature

FRAMES = 3
Consumed = list[tuple[int, int]]

_PY_TRACEBACK = re.compile(r"^[ \t]*Traceback \(most recent call last\):[ \t]*$", re.MULTILINE)
_PY_EXCEPTION = re.compile(r"^(?P<cls>[A-Za-z_][\w.]*)(?::[ \t]*(?P<msg>.*))?$")

_JAVA_HEADER = re.compile(
    r"^[ \t]*(?:Exception in thread \"[^\"\n]*\"[ \t]+|Caused by:[ \t]*|Suppressed:[ \t]*)?"
    r"(?P<cls>(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)(?::[ \t]*(?P<msg>[^\n]*))?$",
    re.MULTILINE,
)
_JAVA_PLUMBING = ("jdk.internal.reflect.", "sun.reflect.", "java.lang.reflect.", "jdk.proxy")

_GO_PANIC = re.compile(r"^(?P<cls>panic|fatal error): (?P<msg>[^\n]*)$", re.MULTILINE)
_GO_FUNC = re.compile(r"^(?P<func>\S+?)\([^()\n]*\)$")
_GO_FILE = re.compile(r"^\t(?P<file>[^\s:]+\.go):\d+")

_JS_HEADER = re.compile(
    r"^[ \t]*(?:Uncaught[ \t]+)?(?P<cls>[A-Z]\w*(?:Error|Exception)|Error)(?: \[\w+\])?: (?P<msg>[^\n]*)$",
    re.MULTILINE,
)
_JS_FRAME = re.compile(
    r"^[ \t]+at (?:async )?(?:new )?(?:(?P<func>[^\s(]+)(?: \[as [^\]]+\])? \((?P<file>[^()\n]+?):\d+:\d+\)"
    r"|(?P<anon>[^\s()]+?):\d+:\d+)[ \t]*$"
)
_JS_OTHER_FRAME = re.compile(r"^[ \t]+at [^\n]*$")

_RUST_PANIC = re.compile(
    r"thread '[^'\n]*' panicked at (?:'(?P<old>[^\n]*)', (?P<oldloc>[^\s:]+):\d+:\d+"
    r"|(?P<loc>[^\s:]+):\d+:\d+:?[ \t]*(?:\n(?P<msg>[^\n]*))?)"
)

_BARE = re.compile(
    r"(?<![\w.$])(?P<cls>(?:[a-z_][\w$]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault))"
    r"(?![\w$])(?:(?::[ \t]+|: ?(?=\[))(?P<msg>[^\n]*))?"
)
_PY_ONLY = frozenset(
    "KeyError ValueError AttributeError ImportError ModuleNotFoundError IndexError NameError ZeroDivisionError"
    " FileNotFoundError PermissionError OSError IOError RuntimeError NotImplementedError AssertionError"
    " StopIteration RecursionError UnicodeDecodeError UnicodeEncodeError ConnectionRefusedError"
    " ConnectionResetError ConnectionError TimeoutError BrokenPipeError IsADirectoryError MemoryError"
    " OverflowError LookupError KeyboardInterrupt SystemExit UnboundLocalError IndentationError".split()
)
_JS_HINT = re.compile(r"is not a function|is not defined|Cannot read propert|undefined|null \(reading")


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1] or path


def _sigs(tool: str, cls: str, message: str | None, frames: list[str], raw: str) -> list[Signature]:
    """The shape key and, when frames are known, the frame key; frames arrive innermost first."""
    text = span(raw)
    sigs = [Signature("exception", tool, f"{tool}:{cls}: {shape(message)}" if message else f"{tool}:{cls}", text)]
    if frames:
        sigs.append(Signature("exception", tool, f"{tool}:{cls}@{'>'.join(reversed(frames[:FRAMES]))}", text))
    return sigs


def _lines_from(text: str, pos: int) -> list[tuple[int, str]]:
    """(offset, line) pairs from ``pos`` to the end of the text."""
    out, offset = [], pos
    for line in text[pos:].split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def python_tracebacks(text: str) -> tuple[list[Found], Consumed]:
    """Each ``Traceback (most recent call last):`` block: its exception line and innermost frames."""
    found: list[Found] = []
    consumed: Consumed = []
    for match in _PY_TRACEBACK.finditer(text):
        frames: list[str] = []
        end = match.end()
        since_frame = 0
        for offset, line in _lines_from(text, match.end() + 1):
            frame = _PY_FRAME.match(line)
            if frame:
                frames.append(f"{_basename(frame['file'])}:{frame['func']}")
                since_frame = 0
                continue
            if not line.strip() or line[:1] in " \t":  # source lines, carets, blank
                continue
            exception = _PY_EXCEPTION.match(line.strip())
            if not exception and frames and since_frame < 3:
                since_frame += 1  # a source or caret line whose indentation was stripped
                continue
            if exception and frames:
                end = offset + len(line)
                for sig in _sigs("python", exception["cls"], exception["msg"], frames[::-1], text[match.start() : end]):
                    found.append((match.start(), sig))
            break
        consumed.append((match.start(), end))
    return found, consumed


def _java_block(lines: list[tuple[int, str]]) -> tuple[list[str], int]:
    """The ``at`` frames after a header (innermost first, from the innermost application frame on:
    ``frames.from_application``) and the offset where they end."""
    frames, end = [], lines[0][0] + len(lines[0][1])
    for offset, line in lines[1:]:
        frame = _JAVA_FRAME.match(line)
        if frame and frame["method"].startswith(_JAVA_PLUMBING):
            pass  # reflection frames carry generated, per-run class names (GeneratedMethodAccessor12)
        elif frame:
            method = re.sub(r"\$\$[\w$]*|\$\d+", "", frame["method"])  # proxy and anonymous-class suffixes
            method = re.sub(r"lambda\$(\w+)\$\d+", r"lambda$\1", method)
            frames.append(method)
        elif not _JAVA_MORE.match(line):
            break
        end = offset + len(line)
    return from_application(frames), end


def java_traces(text: str) -> tuple[list[Found], Consumed]:
    """Java/JVM stack traces: the top exception and every ``Caused by`` down to the root cause."""
    found: list[Found] = []
    consumed: Consumed = []
    for match in _JAVA_HEADER.finditer(text):
        lines = _lines_from(text, match.start())
        frames, end = _java_block(lines)
        is_cause = match.group().lstrip().startswith(("Caused by", "Suppressed", "Exception in thread"))
        if not frames and not is_cause:
            continue  # a dotted name alone is not a trace; the bare reader may still take it
        for sig in _sigs("java", match["cls"], match["msg"], frames, text[match.start() : end]):
            found.append((match.start(), sig))
        consumed.append((match.start(), end))
    return found, consumed


def go_panics(text: str) -> tuple[list[Found], Consumed]:
    """Go ``panic:`` / ``fatal error:`` with the first goroutine's frames, runtime frames skipped."""
    found: list[Found] = []
    consumed: Consumed = []
    for match in _GO_PANIC.finditer(text):
        message = re.sub(r"\s*\[recovered\]$", "", match["msg"])
        frames: list[str] = []
        lines = _lines_from(text, match.end() + 1)
        end, in_goroutine, pending = match.end(), False, None
        for offset, line in lines:
            if not in_goroutine and offset - match.end() > 400:
                break  # no goroutine dump follows this panic
            if line.startswith("goroutine "):
                if in_goroutine:
                    break
                in_goroutine = True
            elif in_goroutine and (func := _GO_FUNC.match(line)):
                pending = func["func"]
            elif in_goroutine and pending and (where := _GO_FILE.match(line)):
                if not pending.startswith(("runtime.", "panic")):
                    frames.append(f"{_basename(where['file'])}:{pending}")
                pending = None
            elif in_goroutine and not line.strip():
                break
            elif in_goroutine and not line.startswith(("\t", "created by", "panic(")):
                break
            if in_goroutine:
                end = offset + len(line)
        for sig in _sigs("go", match["cls"], message, frames, text[match.start() : end]):
            found.append((match.start(), sig))
        consumed.append((match.start(), end))
    return found, consumed


def javascript_errors(text: str) -> tuple[list[Found], Consumed]:
    """Node/browser errors followed by ``at fn (file.js:1:2)`` frames; node internals skipped."""
    found: list[Found] = []
    consumed: Consumed = []
    for match in _JS_HEADER.finditer(text):
        frames: list[str] = []
        end, seen_frame = match.end(), False
        for offset, line in _lines_from(text, match.end() + 1):
            frame = _JS_FRAME.match(line)
            if frame:
                seen_frame = True
                file = frame["file"] or frame["anon"]
                if not file.startswith(("node:", "internal/")):
                    frames.append(f"{_basename(file)}:{frame['func'] or '<anonymous>'}")
            elif not _JS_OTHER_FRAME.match(line):
                break
            end = offset + len(line)
        if not seen_frame:  # Java's "at a.B.c(B.java:1)" frames do not count
            continue
        for sig in _sigs("javascript", match["cls"], match["msg"], frames, text[match.start() : end]):
            found.append((match.start(), sig))
        consumed.append((match.start(), end))
    return found, consumed


def rust_panics(text: str) -> tuple[list[Found], Consumed]:
    """``thread '…' panicked at src/x.rs:10:5:`` (and the pre-1.73 quoted form): message shape + file."""
    found: list[Found] = []
    consumed: Consumed = []
    for match in _RUST_PANIC.finditer(text):
        message = match["old"] if match["old"] is not None else (match["msg"] or "")
        location = _basename(match["oldloc"] or match["loc"])
        raw = span(match.group())
        found.append((match.start(), Signature("exception", "rust", f"rust:panic: {shape(message)}", raw)))
        found.append((match.start(), Signature("exception", "rust", f"rust:panic@{location}", raw)))
        consumed.append(match.span())
    return found, consumed


_JVM_PACKAGES = ("java.", "javax.", "jakarta.", "org.", "com.", "io.", "net.", "kotlin.", "scala.", "akka.")


def _bare_tool(cls: str, message: str) -> str:
    if cls.startswith(_JVM_PACKAGES):
        return "java"
    if cls in _PY_ONLY:
        return "python"
    if cls in ("ReferenceError", "RangeError", "EvalError", "URIError", "AggregateError") or _JS_HINT.search(message):
        return "javascript"
    return "python"


def bare_exceptions(text: str, consumed: Consumed) -> list[Found]:
    """An exception named outside any trace ("KeyError: 'user_id'" pasted as a query): class + shape only.

    The runtime is a guess from the class name (a JVM package prefix: Java; a
    JS-only class or JS wording: JavaScript; otherwise Python), because a
    pasted line must yield the key its full trace did.
    """
    found: list[Found] = []
    for match in _BARE.finditer(text):
        if any(start <= match.start() < end for start, end in consumed):
            continue
        message = (match["msg"] or "").strip()
        tool = _bare_tool(match["cls"], message)
        key = f"{tool}:{match['cls']}: {shape(message)}" if message else f"{tool}:{match['cls']}"
        found.append((match.start(), Signature("exception", tool, key, span(match.group()))))
    return found
