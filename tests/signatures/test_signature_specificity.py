"""Signatures that are specific: generic keys do not decide tier 1, markup does not change keys, and a
stream no gate opened on is still found by its own stack trace.

The corpus goes through the log the real way (the gated loop with a scripted
gate, then ``build_projections`` with the hash embedder): twelve noise streams
share a test-runner line, an HTTP 500 and an exit code; one stream holds a
specific Java trace; one holds a Python traceback the gate never opens on.
"""

from __future__ import annotations


import pytest

from poimen.index import MemoryIndex
from poimen.signatures import signature_keys
from poimen.signatures.markup import strip_markup
from poimen.signatures.specificity import decisive, has_shape, weight
from poimen.testing.gate import scripted_gate
from index_helpers import index_of_sources

JAVA_TRACE = """java.lang.IllegalStateException: Block pool BP-{pool} is not initialised on volume {vol}
\tat org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.BlockPoolSlice.getVolume(BlockPoolSlice.java:{a})
\tat org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsVolumeImpl.addBlockPool(FsVolumeImpl.java:{b})
\tat org.apache.hadoop.hdfs.server.datanode.DataNode.initBlockPool(DataNode.java:{c})"""

PYTHON_TRACE = """Traceback (most recent call last):
  File "/opt/tools/{d}/sync.py", line {a}, in main
    push(batch)
  File "/opt/tools/{d}/sync.py", line {b}, in push
    client.put(key, blob)
ValueError: checksum mismatch for segment {seg}"""

# Lines every noise stream shows: a test-runner template, an HTTP 500 and an exit code.
GENERIC = """[ERROR] Tests run: {n}, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: {t} s <<< FAILURE!
The gateway returned HTTP 500 for the status page.
mvn exited with exit code 1"""

NOISE_TOPICS = ["checkstyle warnings in hadoop-common", "flaky TestDFSIO on slow disks", "javadoc build broken",
                "yarn ui shows wrong queue", "s3a listing is slow", "kms audit log rotation", "typo in core-default",
                "webhdfs redirect loop", "balancer ignores rack", "distcp skips empty dirs", "native build on arm",
                "shell script quoting bug"]


# Keep every chunk as the memory, except a chunk with a Python traceback: no gate ever opens on it.
gate = scripted_gate(lambda p: None if "Traceback" in p.chunk else p.chunk)


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> MemoryIndex:
    sources = {f"noise-{i:02d}.txt": f"{topic}\n\n" + GENERIC.format(n=i + 3, t=f"{i}.5")
               for i, topic in enumerate(NOISE_TOPICS)}
    sources["datanode.txt"] = ("DataNode fails to start after adding a volume\n\n"
                               + JAVA_TRACE.format(pool="42-10.0.0.1", vol="/data/3", a=120, b=311, c=1702))
    sources["sync-tool.txt"] = "sync tool crashes on large uploads\n\n" + PYTHON_TRACE.format(d="v1", a=40, b=88, seg=17)
    return index_of_sources(tmp_path_factory.mktemp("specificity"), sources, gate, "Which failure is this?", 400)


def sources(hit) -> set[str]:
    return {p.source for p in hit.evidence}


def test_generic_keys_shared_by_many_streams_do_not_reach_tier_one(index):
    # A new occurrence of the DataNode failure, reported with the same noise lines every noise stream shows:
    # those streams match three keys, the DataNode stream two, but theirs are held by 12 of 14 streams.
    query = (JAVA_TRACE.format(pool="7-10.0.0.9", vol="/data/1", a=121, b=315, c=1710) + "\n"
             + GENERIC.format(n=9, t="2.0"))
    generic = {"http:500", "exit:1"}
    assert generic <= set(signature_keys(query))
    hits = index.search(query, k=5)
    assert hits[0].tier == "signature" and sources(hits[0]) == {"datanode.txt"}
    assert not generic & set(hits[0].signature_keys)  # the generic keys matched, but only as tie-breakers
    tier1 = [h for h in hits if h.tier == "signature"]
    assert all(sources(h) == {"datanode.txt"} for h in tier1)  # no noise stream is a tier-1 hit
    assert index.key_streams["http:500"] == len(NOISE_TOPICS) and index.streams_total == len(NOISE_TOPICS) + 2


def test_only_the_generic_keys_give_no_tier_one_hit(index):
    hits = index.search(GENERIC.format(n=4, t="0.1"), k=5)
    assert hits and not [h for h in hits if h.tier == "signature"]


def test_stream_whose_gate_never_opened_is_found_by_its_own_trace(index):
    # The same traceback again, from another install (other paths, line numbers and segment).
    hits = index.search(PYTHON_TRACE.format(d="v2", a=41, b=90, seg=3), k=3)
    first = hits[0]
    assert first.tier == "signature" and first.kind == "evidence" and first.level == "L0"
    assert [(p.sha, p.source, p.position) for p in first.evidence] == [(first.sha, "sync-tool.txt", 0)]
    assert "Traceback" in first.text and first.run_id
    assert "python:ValueError: checksum mismatch for segment <NUM>" in first.signature_keys


def test_weight_falls_and_decisiveness_ends_as_more_streams_share_a_key():
    assert weight(1, 600) > weight(6, 600) > weight(60, 600) > weight(600, 600) > 0
    key = "java:java.io.IOException@a.B.c>a.B.d"
    assert decisive(key, "exception", 6, 600) and not decisive(key, "exception", 7, 600)
    assert decisive(key, "exception", 3, 10) and not decisive(key, "exception", 4, 10)  # small corpora: 3 streams


@pytest.mark.parametrize(("key", "kind", "specific"), [
    ("java:java.lang.NullPointerException", "exception", False),
    ("python:KeyError: <STR>", "exception", False),
    ("java:java.io.IOException: <NUM> <HEX>", "exception", False),
    ("log:ERROR] ^", "template", False),
    ("log:ERROR] <*> <NUM>", "template", False),
    ("java:java.lang.NullPointerException@a.B.c", "exception", True),
    ("python:KeyError: missing column <STR>", "exception", True),
    ("log:ERROR] Failed to execute goal <*>", "template", True),
    ("http:502", "http", True),
])
def test_a_class_or_level_alone_is_never_decisive(key, kind, specific):
    assert has_shape(key, kind) is specific
    assert decisive(key, kind, 1, 100) is specific


BARE_JAVA = JAVA_TRACE.format(pool="1-10.0.0.2", vol="/d", a=1, b=2, c=3)
BARE_PYTHON = PYTHON_TRACE.format(d="v3", a=5, b=6, seg=8)


@pytest.mark.parametrize("wrap", [
    "{{code}}{trace}{{code}}",
    "see below\n{{code:java}}\n{trace}\n{{code}}\nthanks",
    "{{noformat}}\n{trace}\n{{noformat}}",
    "{{quote}}{trace}{{quote}}",
    "```java\n{trace}\n```",
    "~~~\n{trace}\n~~~",
    "<pre class=\"trace\">{trace}</pre>",
])
@pytest.mark.parametrize("trace", [BARE_JAVA, BARE_PYTHON], ids=["java", "python"])
def test_wrapped_trace_keys_equal_the_bare_trace_keys(wrap, trace):
    bare = signature_keys(trace)
    assert len(bare) == 2  # message shape and frames
    assert signature_keys(wrap.format(trace=trace)) == bare


def test_inline_markup_and_entities_are_removed():
    assert signature_keys("it fails with {{java.io.IOException: Stream closed}} on close") == \
        signature_keys("it fails with java.io.IOException: Stream closed on close")
    assert strip_markup("at a.B.&lt;init&gt;(B.java:1)") == "at a.B.<init>(B.java:1)"
    assert strip_markup("plain text, no markup: a {brace} and a <tag>") == "plain text, no markup: a {brace} and a <tag>"


@pytest.mark.parametrize("space", ["\xa0\xa0\xa0\xa0", "&nbsp;&nbsp;&nbsp;&nbsp;"], ids=["u00a0", "entity"])
def test_a_trace_indented_with_non_breaking_spaces_keys_like_the_bare_trace(space):
    """A tracker's web page keeps a pasted trace's indentation as non-breaking spaces: its frames are still frames."""
    pasted = BARE_JAVA.replace("\tat ", f"{space}at ")
    assert pasted != BARE_JAVA and signature_keys(pasted) == signature_keys(BARE_JAVA)


def junit_failure(test: str) -> str:
    return (f"java.lang.AssertionError: expected:<1> but was:<2>\n\tat org.junit.Assert.fail(Assert.java:88)\n"
            f"\tat org.junit.Assert.failNotEquals(Assert.java:834)\n\tat org.junit.Assert.assertEquals(Assert.java:645)\n"
            f"\tat org.apache.hadoop.{test}(Test.java:41)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
            f"\tat org.junit.runners.ParentRunner.run(ParentRunner.java:363)")


def test_a_frame_key_starts_at_the_innermost_application_frame():
    """Every JUnit assertion fails in org.junit.Assert.fail < failNotEquals < assertEquals: as a frame key those three
    named the harness, so two unrelated test failures shared it. The key starts where the application's code is."""
    first, second = (next(k for k in signature_keys(junit_failure(t)) if "@" in k)
                     for t in ("ipc.TestIPC.testSocketLeak", "hdfs.TestLease.testRecover"))
    assert first == "java:java.lang.AssertionError@org.junit.runners.ParentRunner.run>org.apache.hadoop.ipc.TestIPC.testSocketLeak"
    assert second.endswith(">org.apache.hadoop.hdfs.TestLease.testRecover") and first != second


def test_a_trace_wholly_inside_the_runtime_keeps_its_frames():
    trace = ("java.util.ConcurrentModificationException\n\tat java.util.HashMap$HashIterator.nextNode(HashMap.java:1445)\n"
             "\tat java.util.HashMap$KeyIterator.next(HashMap.java:1469)\n\tat java.lang.Thread.run(Thread.java:748)")
    assert "java:java.util.ConcurrentModificationException@java.lang.Thread.run>java.util.HashMap$KeyIterator.next" \
           ">java.util.HashMap$HashIterator.nextNode" in signature_keys(trace)
