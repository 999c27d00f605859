"""Stack frames of the runtime and the test harness, which every trace shares and none is identified by.

A JUnit failure's trace ends in the same thirty frames of ``java.lang.reflect``,
``sun.reflect`` and ``org.junit.runners``; a pytest one runs through ``_pytest``
and ``pluggy``; a Go test panics through ``testing.tRunner`` and ``runtime.goexit``.
Those frames say *that* a test ran, not *what* failed, yet they are most of a
pasted trace's words. Compared as a bag of words (``poimen.index.keyword``), two
reports that both paste a JUnit trace then look alike through the harness
alone, and the earlier report of the same failure, described in prose, loses
to them. So lexical scoring reads a trace without these frames: what remains
is the exception, its message and the application's own frames.

Which frames are the runtime's is known per runtime, not learned: the
platform's own packages (``java.``, ``jdk.``, ``sun.``, Python's standard
library, Go's ``runtime``/``testing``, Node's ``node:internal``) and the test
runners' (JUnit, TestNG, Surefire, ScalaTest, pytest, pluggy, unittest). An
application frame that calls into them (``at org.apache.hadoop...``) is kept.
Also dropped: a JVM trace's ``... 12 more`` lines, which only count frames.
"""

from __future__ import annotations

import re


JVM_RUNTIME = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "scala.", "org.junit.", "junit.",
               "org.testng.", "org.apache.maven.surefire.", "org.scalatest.", "org.gradle.")
# Frame lines. Frames may arrive unindented: a line-oriented chunker strips each line, so indentation is optional
# wherever the frame itself is unmistakable ('File "x", line N, in f'; 'at pkg.Cls.m(File.java:N)').
JAVA_FRAME = re.compile(r"^[ \t]*at (?:[\w.$-]+(?:@[\w.-]+)?/)*(?P<method>[\w$.<>]+)\((?P<where>[^)\n]*)\)[ \t]*$")
JAVA_MORE = re.compile(r"^[ \t]*\.\.\. \d+ (?:more|common frames omitted)")
PY_FRAME = re.compile(r'^[ \t]*File "(?P<file>[^"\n]+)", line \d+, in (?P<func>[^\s]+)')
_PY_RUNTIME = re.compile(r"[\\/]lib[\\/]python\d[\d.]*[\\/](?!(?:site|dist)-packages[\\/])"
                         r"|[\\/](?:site|dist)-packages[\\/](?:_pytest|pluggy|unittest)[\\/]|^<frozen ")
_GO_FUNC = re.compile(r"^(?:runtime|testing)\.[\w.*()]+\([^\n]*\)\s*$")
_GO_FILE = re.compile(r"^\t\S+\.go:\d+")
_NODE_FRAME = re.compile(r"^\s*at (?:[^\n]*\()?(?:node:internal|internal/)[^\n]*$")
_ANY_FRAME = re.compile(r"^[ \t\xa0]*(?:at |\.\.\. \d|File \"|runtime\.|testing\.)", re.MULTILINE)


def _runtime_line(line: str) -> str | None:
    """Which runtime frame ``line`` is ('jvm', 'python', 'go', 'node'), or None for any other line. A trace pasted
    from a web page or a tracker is often indented with non-breaking spaces; they count as spaces here."""
    line = line.replace("\xa0", " ").rstrip()
    if (jvm := JAVA_FRAME.match(line)) and jvm["method"].startswith(JVM_RUNTIME) or JAVA_MORE.match(line):
        return "jvm"
    if (py := PY_FRAME.match(line)) and _PY_RUNTIME.search(py["file"]):
        return "python"
    if _GO_FUNC.match(line):
        return "go"
    if _NODE_FRAME.match(line):
        return "node"
    return None


def from_application(methods: list[str]) -> list[str]:
    """JVM frame methods, innermost first, from the innermost application frame on (all of them if every frame is
    the runtime's): a failure raised in ``org.junit.Assert.fail`` or ``java.util.HashMap.get`` is identified by
    the application code that got there, not by the assertion or collection every other failure also passes."""
    start = next((n for n, method in enumerate(methods) if not method.startswith(JVM_RUNTIME)), 0)
    return methods[start:]


def without_runtime_frames(text: str) -> str:
    """``text`` with the runtime's and test harness's stack frames removed (each with the source line a Python
    frame shows under it, or the file line a Go frame has); every other line is kept as it is."""
    if not _ANY_FRAME.search(text):
        return text  # no frame of any runtime: the common case, kept cheap for prose and chat
    kept: list[str] = []
    skip_next = None
    for line in text.split("\n"):
        if skip_next == "python" and line[:1] in (" ", "\t", "\xa0") and not PY_FRAME.match(line):
            skip_next = None
            continue
        if skip_next == "go" and _GO_FILE.match(line):
            skip_next = None
            continue
        skip_next = _runtime_line(line)
        if skip_next is None:
            kept.append(line)
    return "\n".join(kept)
