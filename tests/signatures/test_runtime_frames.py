"""A trace is compared by its exception and the application's frames, not by the runtime's and the harness's.

Every JUnit failure ends in the same frames of ``java.lang.reflect``,
``sun.reflect`` and ``org.junit.runners`` (a pytest one in ``_pytest`` and
``pluggy``, a Go test in ``testing.tRunner``). Read as words, those frames made
two unrelated reports that both paste a test trace look alike, and the earlier
report of the same failure, told in prose, lost to them (``bench/hadoop_dups.py``
measures this on real Apache Hadoop duplicates). ``poimen.signatures.frames``
drops them before the keyword index reads a text.
"""

from __future__ import annotations

import pytest

from poimen.index.keyword import BM25, tokenize
from poimen.signatures.frames import without_runtime_frames

JUNIT_TAIL = "\n".join(f"\tat {frame}" for frame in (
    "sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
    "sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:62)",
    "sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)",
    "java.lang.reflect.Method.invoke(Method.java:498)",
    "org.junit.runners.model.FrameworkMethod$1.runReflectiveCall(FrameworkMethod.java:59)",
    "org.junit.internal.runners.model.ReflectiveCallable.run(ReflectiveCallable.java:12)",
    "org.junit.runners.model.FrameworkMethod.invokeExplosively(FrameworkMethod.java:56)",
    "org.junit.internal.runners.statements.InvokeMethod.evaluate(InvokeMethod.java:17)",
    "org.junit.internal.runners.statements.FailOnTimeout$CallableStatement.call(FailOnTimeout.java:299)",
    "org.junit.internal.runners.statements.FailOnTimeout$CallableStatement.call(FailOnTimeout.java:293)",
    "java.util.concurrent.FutureTask.run(FutureTask.java:266)",
    "java.lang.Thread.run(Thread.java:748)"))


def junit_report(title: str, exception: str, app_frame: str) -> str:
    return f"{title}\n\n{{code}}\n{exception}\n\tat {app_frame}\n{JUNIT_TAIL}\n{{code}}"


def test_runtime_and_harness_frames_go_and_the_application_stays():
    text = ("java.lang.AssertionError: endpoint mismatch\n"
            "\tat org.junit.Assert.fail(Assert.java:88)\n"
            "\tat org.apache.hadoop.fs.s3a.TestArnResource.parse(TestArnResource.java:73)\n"
            "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
            "\t... 12 more\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.11/socket.py", line 706, in readinto\n'
            "    return self._sock.recv_into(b)\n"
            '  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 194, in pytest_pyfunc_call\n'
            "    result = testfunction(**testargs)\n"
            '  File "/app/client.py", line 3, in fetch\n'
            "    data = sock.read()\n"
            "goroutine 1 [running]:\n"
            "main.handler(0x1)\n"
            "\t/app/main.go:12 +0x1d\n"
            "testing.tRunner(0xc000, 0x5)\n"
            "\t/usr/local/go/src/testing/testing.go:1446 +0x10b\n"
            "    at processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
            "    at Server.handle (/app/server.js:10:3)")
    assert without_runtime_frames(text).splitlines() == [
        "java.lang.AssertionError: endpoint mismatch",
        "\tat org.apache.hadoop.fs.s3a.TestArnResource.parse(TestArnResource.java:73)",
        "Traceback (most recent call last):",
        '  File "/app/client.py", line 3, in fetch',
        "    data = sock.read()",
        "goroutine 1 [running]:",
        "main.handler(0x1)",
        "\t/app/main.go:12 +0x1d",
        "    at Server.handle (/app/server.js:10:3)"]


def test_a_trace_indented_with_non_breaking_spaces_is_read_as_one():
    """A trace pasted from a tracker's web page keeps its indentation as U+00A0."""
    pasted = ("java.io.IOException: lease expired\n\xa0\xa0\xa0 at java.lang.Thread.run(Thread.java:748)\n"
              "\xa0\xa0\xa0 at org.apache.hadoop.hdfs.DFSOutputStream.close(DFSOutputStream.java:901)\xa0")
    assert without_runtime_frames(pasted).splitlines() == [
        "java.io.IOException: lease expired",
        "\xa0\xa0\xa0 at org.apache.hadoop.hdfs.DFSOutputStream.close(DFSOutputStream.java:901)\xa0"]


@pytest.mark.parametrize("text", [
    "The upgrade went fine; look at the logs at noon.\nNo trace here.",
    "at org.apache.hadoop.Foo.bar(Foo.java:1) is where it failed",  # prose naming a frame mid-sentence is kept
    "",
])
def test_text_without_runtime_frames_comes_back_unchanged(text):
    assert without_runtime_frames(text) == text


def test_the_keyword_index_does_not_read_harness_frames():
    words = set(tokenize(junit_report("TestFoo fails", "java.lang.AssertionError: bad", "org.example.Foo.bar(Foo.java:3)")))
    assert {"assertionerror", "bad", "foo", "bar"} <= words
    assert not words & {"runreflectivecall", "delegatingmethodaccessorimpl", "futuretask", "invokeexplosively"}


def test_a_prose_report_of_the_same_failure_beats_a_report_sharing_only_the_harness():
    """The query pastes a JUnit trace; the earlier report tells the same failure in prose; two other reports paste
    a JUnit trace of another failure. Read with its harness frames, the query matched those two best."""
    earlier = ("S3 SDK upgrade breaks AccessPoint endpoint translation\n\n"
               "After the SDK upgrade TestArnResource parseAccessPointFromArn sees the endpoint "
               "s3.accesspoint- instead of s3-accesspoint.")
    others = [junit_report("TestLeaseRecovery times out", "org.junit.runners.model.TestTimedOutException: test timed out",
                           "org.apache.hadoop.hdfs.TestLeaseRecovery.testRecover(TestLeaseRecovery.java:120)"),
              junit_report("TestRouterRpc flaky", "java.lang.AssertionError: expected:<3> but was:<2>",
                           "org.apache.hadoop.hdfs.server.federation.TestRouterRpc.testRpc(TestRouterRpc.java:88)")]
    query = junit_report("TestArnResource.parseAccessPointFromArn failing",
                         "org.junit.ComparisonFailure: Endpoint does not match expected:<s3[-accesspoint.]> "
                         "but was:<s3[.accesspoint-]>",
                         "org.apache.hadoop.fs.s3a.TestArnResource.parseAccessPointFromArn(TestArnResource.java:73)")
    ranked = BM25(others + [earlier]).similar(query, 3)
    assert ranked[0][0] == 2, ranked
