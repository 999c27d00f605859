"""Failure signatures on real output formats: the same failure keeps its keys, a different one does not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poimen.signatures import Signature, extract_signatures, signature_keys

PYTHON = '''Traceback (most recent call last):
  File "/srv/app/main.py", line {a}, in <module>
    run()
  File "/srv/app/worker.py", line {b}, in process_batch
    rows = fetch(conn, batch_id)
  File "/srv/{venv}/db.py", line {c}, in fetch
    return cache[key]
           ~~~~~^^^^^
{exc}
'''

JAVA = """{ts} ERROR {pid} --- [nio-8080-exec-{t}] c.e.orders.OrderController : Request processing failed
java.lang.IllegalStateException: Failed to process order {order}
\tat com.example.orders.OrderService.process(OrderService.java:{a})
\tat com.example.orders.OrderController.submit(OrderController.java:{b})
\tat jdk.internal.reflect.GeneratedMethodAccessor{g}.invoke(Unknown Source)
\tat java.base/java.lang.Thread.run(Thread.java:833)
Caused by: {cause}: HikariPool-{pool} - Connection is not available, request timed out after {ms}ms.
\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:{c})
\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:197)
\t... {more} more
"""

GO = """panic: runtime error: index out of range [{i}] with length {n}

goroutine {g} [running]:
main.(*Batcher).flush(0x{addr}, {{0x{addr2}, 0x3}})
\t/home/{user}/app/batch.go:{a} +0x1d
main.process(...)
\t/home/{user}/app/main.go:{b}
main.main()
\t/home/{user}/app/main.go:{c} +0x2f
exit status 2
"""

CURL_413 = """*   Trying {ip}:443...
* Connected to api.example.com ({ip}) port 443
> POST /upload HTTP/1.1
> Host: api.example.com
> Content-Length: {size}
> X-Request-Id: {rid}
>
< HTTP/1.1 {code} {reason}
< Server: nginx/1.25.3
< Date: {date}
< Content-Type: text/html
<
<html>
<head><title>{code} {reason}</title></head>
<body>
<center><h1>{code} {reason}</h1></center>
<hr><center>nginx/1.25.3</center>
</body>
</html>
"""

GET_PODS = """NAME                        READY   STATUS             RESTARTS        AGE
{pod}         0/1     {status}   {r} ({ago}m ago)    {age}m
worker-5c6d7b8f9-{w}      1/1     Running            0               {age}m
"""

DESCRIBE_OOM = """Name:             {pod}
Namespace:        payments
Node:             ip-{node}.eu-west-1.compute.internal/{ip}
Containers:
  api:
    Container ID:   containerd://{cid}
    State:          Running
      Started:      {date}
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
      Started:      {date}
      Finished:     {date}
    Ready:          True
    Restart Count:  {r}
"""

SEGFAULT = """$ ./render --scene scenes/{scene}.json --threads {t}
Loading scene ({n} objects)...
Segmentation fault (core dumped)
"""
SEGFAULT_EXIT = "build step 'render' exited with code 139 after {s}s (job {job})\n"

JAVASCRIPT = """{file}:{a}
    return order.customer.id;
                          ^

TypeError: {message}
    at processOrder ({file}:{a}:{col})
    at Array.map (<anonymous>)
    at handler (/app/src/server.js:{b}:22)
    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)
    at node:internal/process/task_queues:{c}:5

Node.js v20.11.0
"""

RUST = """thread '{thread}' panicked at src/config.rs:{a}:{b}:
called `Result::unwrap()` on an `Err` value: Os {{ code: 2, kind: NotFound, message: "No such file or directory" }}
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""


def keys(text: str) -> set[str]:
    return set(signature_keys(text))


def python_trace(exc: str, a=88, b=42, c=17, venv="venv") -> str:
    return PYTHON.format(exc=exc, a=a, b=b, c=c, venv=venv)


def java_trace(cause="java.sql.SQLTransientConnectionException", **kw) -> str:
    values = dict(ts="2024-03-01 12:00:01.123", pid=4242, t=7, order=12345, a=87, b=42, g=12, pool=1, ms=30000, c=696, more=12)
    values.update(kw)
    return JAVA.format(cause=cause, **values)


def go_panic(**kw) -> str:
    values = dict(i=5, n=3, g=1, addr="c000010000", addr2="c000014090", user="dev", a=31, b=12, c=20)
    values.update(kw)
    return GO.format(**values)


def curl(code=413, reason="Request Entity Too Large", **kw) -> str:
    values = dict(ip="10.0.3.17", size=10485760, rid="9f8e7d6c-5b4a", date="Fri, 01 Mar 2024 12:00:00 GMT")
    values.update(kw)
    return CURL_413.format(code=code, reason=reason, **values)


def get_pods(status="CrashLoopBackOff", pod="api-7d9f8b6c5-x2k4p", **kw) -> str:
    values = dict(r=5, ago=2, age=10, w="q8w7n")
    values.update(kw)
    return GET_PODS.format(status=status, pod=pod, **values)


def describe_oom(**kw) -> str:
    values = dict(pod="api-7d9f8b6c5-x2k4p", node="10-0-1-23", ip="10.0.1.23", cid="4f1c2d3e4b5a6978", date="Mon, 04 Mar 2024 10:12:44 +0000", r=3)
    values.update(kw)
    return DESCRIBE_OOM.format(**values)


def javascript(message="Cannot read properties of undefined (reading 'id')", **kw) -> str:
    values = dict(file="/app/src/orders.js", a=42, col=27, b=17, c=95)
    values.update(kw)
    return JAVASCRIPT.format(message=message, **values)


# Each pair: the same failure twice, with other ids, timestamps, pod names, addresses and line numbers.
SAME_FAILURE = {
    "python": (python_trace("KeyError: 'user_4411'"), python_trace("KeyError: 'user_97'", a=90, b=45, c=19, venv=".venv")),
    "java": (
        java_trace(),
        java_trace(ts="2024-05-17 03:14:15.926", pid=77, t=3, order=98, a=91, b=40, g=57, pool=2, ms=5000, c=700, more=9),
    ),
    "go": (go_panic(), go_panic(i=9, n=4, g=17, addr="c0000a6000", addr2="c0000b8000", user="ci", a=33, b=14, c=22)),
    "nginx": (curl(), curl(ip="172.16.9.4", size=52428800, rid="0a1b2c3d-4e5f", date="Sat, 02 Mar 2024 08:30:00 GMT")),
    "crashloop": (get_pods(), get_pods(pod="api-6f8c9d7b4-m9z2t", r=11, ago=4, age=37, w="zz4kq")),
    "oom": (describe_oom(), describe_oom(pod="api-6f8c9d7b4-m9z2t", node="10-0-7-9", ip="10.0.7.9", cid="9a8b7c6d5e4f", date="Tue, 05 Mar 2024 23:59:01 +0000", r=8)),
    "segfault": (SEGFAULT.format(scene="big", t=8, n=120000), SEGFAULT.format(scene="city-2", t=16, n=9)),
    "javascript": (javascript(), javascript(file="/srv/app/src/orders.js", a=44, col=31, b=19, c=97)),
    "rust": (RUST.format(thread="main", a=31, b=10), RUST.format(thread="tokio-runtime-worker", a=33, b=14)),
}

EXPECTED = {
    "python": {"python:KeyError: <STR>", "python:KeyError@main.py:<module>>worker.py:process_batch>db.py:fetch"},
    "java": {
        "java:java.lang.IllegalStateException: Failed to process order <NUM>",
        "java:java.lang.IllegalStateException@java.lang.Thread.run>com.example.orders.OrderController.submit"
        ">com.example.orders.OrderService.process",
        "java:java.sql.SQLTransientConnectionException@com.zaxxer.hikari.pool.HikariPool.getConnection"
        ">com.zaxxer.hikari.pool.HikariPool.createTimeoutException",
    },
    "go": {
        "go:panic: runtime error: index out of range [<NUM>] with length <NUM>",
        "go:panic@main.go:main.main>main.go:main.process>batch.go:main.(*Batcher).flush",
        "exit:2",
    },
    "nginx": {"http:413"},
    "crashloop": {"k8s:CrashLoopBackOff"},
    "oom": {"k8s:OOMKilled", "exit:137", "signal:SIGKILL"},
    "segfault": {"signal:SIGSEGV", "exit:139"},
    "javascript": {
        "javascript:TypeError: Cannot read properties of undefined (reading <STR>)",
        "javascript:TypeError@layer.js:Layer.handle>server.js:handler>orders.js:processOrder",
    },
    "rust": {"rust:panic@config.rs", "errno:ENOENT"},
}


@pytest.mark.parametrize("name", sorted(SAME_FAILURE))
def test_same_failure_gives_same_keys(name):
    first, second = SAME_FAILURE[name]
    assert keys(first) == keys(second)
    assert EXPECTED[name] <= keys(first)


@pytest.mark.parametrize("name", sorted(SAME_FAILURE))
def test_keys_carry_no_volatile_parts(name):
    """No id, address, timestamp, pod hash or frame line number from the input survives into a key."""
    first, _ = SAME_FAILURE[name]
    joined = " ".join(keys(first))
    for volatile in ("4411", "c000010000", "10.0.3.17", "x2k4p", "7d9f8b6c5", "12:00", "2024", ":42", ":87", "12345"):
        assert volatile not in joined


def test_java_root_cause_class_is_a_key():
    shapes = [k for k in keys(java_trace()) if k.startswith("java:java.sql.SQLTransientConnectionException: ")]
    assert shapes, keys(java_trace())
    assert keys(java_trace()) != keys(java_trace(cause="java.net.SocketTimeoutException"))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (python_trace("KeyError: 'user_4411'"), python_trace("ValueError: invalid literal for int() with base 10: 'x'")),
        (curl(413, "Request Entity Too Large"), curl(502, "Bad Gateway")),
        (describe_oom(), get_pods()),
        (go_panic(), go_panic().replace("index out of range [5] with length 3", "assignment to entry in nil map")),
        (javascript(), javascript(message="this.client.send is not a function")),
        (SEGFAULT.format(scene="a", t=1, n=1), "$ ./render\nKilled\n"),
    ],
    ids=["keyerror-vs-valueerror", "413-vs-502", "oomkilled-vs-crashloop", "go-panic-message", "js-message", "segv-vs-kill"],
)
def test_different_failures_give_different_keys(first, second):
    assert keys(first) != keys(second)
    assert keys(first) and keys(second)


def test_exit_139_and_segfault_share_signal_and_exit_keys():
    assert {"signal:SIGSEGV", "exit:139"} <= keys(SEGFAULT_EXIT.format(s=12, job=881))
    assert keys(SEGFAULT_EXIT.format(s=12, job=881)) == keys(SEGFAULT.format(scene="big", t=8, n=1))
    assert {"exit:137", "signal:SIGKILL"} <= keys("container exited with code 137")


def test_oomkilled_is_not_crashloop_only():
    assert keys(get_pods()) == {"k8s:CrashLoopBackOff"}
    assert "k8s:CrashLoopBackOff" not in keys(describe_oom())


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("HTTP/1.1 413 Request Entity Too Large", "http:413"),
        ("<title>413 Request Entity Too Large</title>", "http:413"),
        ("upstream call failed status=502 path=/api/v1/orders", "http:502"),
        ("GET https://billing.internal/api returned 503", "http:503"),
        ('10.0.0.1 - - [01/Mar/2024:12:00:00 +0000] "POST /upload HTTP/1.1" 413 585 "-" "curl/8.4.0"', "http:413"),
        ("Error: connect ECONNREFUSED 127.0.0.1:5432", "errno:ECONNREFUSED"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "errno:ECONNREFUSED"),
        ("write /data/wal/000042.log: no space left on device", "errno:ENOSPC"),
        ("open /etc/app/secret.pem: permission denied", "errno:EACCES"),
        ("dial tcp 10.0.0.9:443: i/o timeout (ETIMEDOUT)", "errno:ETIMEDOUT"),
        # a strerror text that opens with a word like an errno's name ("exec") is still read
        ("exec /usr/local/bin/docker-entrypoint.sh: exec format error", "errno:ENOEXEC"),
        ("  Warning  Failed  3m  kubelet  Error: ErrImagePull", "k8s:ErrImagePull"),
        ("api-7d9f8b6c5-x2k4p   0/1   ImagePullBackOff   0   3m", "k8s:ImagePullBackOff"),
        ("api-7d9f8b6c5-x2k4p   0/1   CreateContainerConfigError   0   1m", "k8s:CreateContainerConfigError"),
        ("api-7d9f8b6c5-x2k4p   0/1   Evicted   0   1h", "k8s:Evicted"),
        ("Exit Code: 137", "exit:137"),
        ("subprocess.CalledProcessError: Command '['make']' returned non-zero exit status 2.", "exit:2"),
        ("worker received SIGTERM, shutting down", "signal:SIGTERM"),
        ("KeyError: 'user_id'", "python:KeyError: <STR>"),
        ("TypeError: x is not a function\n    at fn (file.js:1:2)", "javascript:TypeError@file.js:fn"),
        ("thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 5', src/x.rs:10:5", "rust:panic@x.rs"),
        ("2024/03/01 12:00:00 [error] 31#31: *1 client intended to send too large body: 10485760 bytes",
         "log:[error] <NUM>#<NUM>: *<NUM> client intended to send too large body: <NUM> bytes"),
    ],
)
def test_real_format_yields_key(text, key):
    assert key in signature_keys(text)


def test_bare_error_line_matches_the_key_of_its_full_trace():
    assert "python:KeyError: <STR>" in keys(python_trace("KeyError: 'order_1'"))
    assert keys("TypeError: Cannot read properties of undefined (reading 'total')") <= keys(javascript())


def test_prose_without_failure_gives_nothing():
    assert extract_signatures("We decided to use SQS for the payments queue.") == []
    assert extract_signatures("The team moved the nightly build to 02:00 and reviewed 413 pull requests.") == []
    assert extract_signatures("") == []


def test_info_lines_give_no_template():
    log = (
        "2024-03-01T12:00:00Z INFO  [main] app.server: Listening on 0.0.0.0:8080\n"
        "2024-03-01T12:00:01Z INFO  request completed status=200 in 12ms\n"
        "2024-03-01T12:00:02Z DEBUG retrying after failed health probe attempt=1\n"
    )
    assert [s for s in extract_signatures(log) if s.kind == "template"] == []


@pytest.mark.parametrize(("line", "key"), [
    ("E/ActivityManager( 1702): ANR in com.example.app (pid 4121)",
     "log:E/ActivityManager( <NUM>): ANR in com.example.app (pid <NUM>)"),
    ("05-02 10:00:01.811  1702  2395 E KeyguardUpdateMonitor: sim state read failed",
     "log:E KeyguardUpdateMonitor: sim state read failed"),
    ('time=2024-05-02T10:00:01Z level=error msg="ledger unreachable" attempt=3',
     'log:level=error msg="ledger unreachable" attempt=<NUM>'),
    ('{"time":"2024-05-02T10:00:01Z","level":"fatal","msg":"cannot bind"}', 'log:"level":"fatal","msg":"cannot bind"}'),
    ('{"level":50,"time":1714644001811,"pid":4121,"msg":"ledger unreachable"}',
     'log:"level":<NUM>,"time":<NUM>,"pid":<NUM>,"msg":"ledger unreachable"}'),  # pino's number for error
])
def test_an_error_level_in_any_shape_the_scorer_reads_keys_a_template(line, key):
    """Signature extraction reads levels with the scorer's recogniser (``poimen.text.line_levels``): a logcat E line or
    a level=error field is an error line, keyed from its level on, without the time and ids in front."""
    assert signature_keys(line) == [key]


@pytest.mark.parametrize("line", [
    "I/ActivityManager( 1702): Start proc failed for activity com.example/.Main uid=10057",
    "05-02 10:00:01.811  1702  2395 I ActivityManager: Start proc failed uid=10057",
    'time=2024-05-02T10:00:01Z level=info msg="health probe failed" attempt=1',
    '{"time":"2024-05-02T10:00:01Z","level":"debug","msg":"health probe failed"}',
    "2024-03-01T12:00:02Z INFO  retrying after failed health probe attempt=1",
])
def test_a_quiet_level_in_any_shape_keys_no_template(line):
    """A log line (key=value fields) saying "failed" is keyed unless its own level is a quiet one, in any shape."""
    assert [s for s in extract_signatures(line) if s.kind == "template"] == []


def test_error_lines_become_stable_templates():
    first = "2024-03-01T12:00:00Z ERROR [pool-3-thread-7] db.pool: Failed to connect to 10.0.0.5:5432 after 3 retries (req=9f8e7d6c5b4a)"
    second = "2024-06-11T08:09:10Z ERROR [pool-1-thread-2] db.pool: Failed to connect to 10.2.9.1:5433 after 5 retries (req=0a1b2c3d4e5f)"
    assert [s.kind for s in extract_signatures(first)] == ["template"]
    assert keys(first) == keys(second)
    assert keys(first) != keys(second.replace("Failed to connect", "Failed to authenticate"))


@pytest.mark.parametrize("line", [
    "Error:  \tat org.scalatest.BeforeAndAfterAll.liftedTree1$1(BeforeAndAfterAll.scala:212)",
    "[error]   at com.example.Foo.bar(Foo.scala:12)",
    "2024-03-01T12:00:00Z ERROR Caused by:",
    "[ERROR]   ... 12 more",
    '[ERROR]   File "/srv/app/db.py", line 3, in fetch',
])
def test_a_trace_line_behind_a_log_prefix_is_no_template(line):
    """A build tool that prefixes every line of a trace with its level ("[error]", "Error: ") made each frame a
    template, "log:Error: at <*>", a key every trace that tool prints shares."""
    assert [s for s in extract_signatures(line) if s.kind == "template"] == []
    # An error line that merely starts with "at" is still one.
    assert keys("2024-03-01T12:00:00Z ERROR at startup the pool failed") == {"log:ERROR at startup the pool failed"}


def test_signatures_are_ordered_deduplicated_and_bounded():
    text = "HTTP/1.1 502 Bad Gateway\nExit Code: 137\nHTTP/1.1 502 Bad Gateway\n" + "x" * 2000 + " status=502"
    sigs = extract_signatures(text)
    assert [s.key for s in sigs] == ["http:502", "exit:137", "signal:SIGKILL"]
    assert all(isinstance(s, Signature) and len(s.span) <= 500 for s in sigs)
    assert extract_signatures(text) == sigs
    assert all(len(s.span) <= 500 for s in extract_signatures(java_trace() * 20))


def test_tools_are_set():
    tools = {s.key: s.tool for text in (curl(), describe_oom(), go_panic(), python_trace("KeyError: 'k'")) for s in extract_signatures(text)}
    assert tools["http:413"] == "nginx"
    assert tools["k8s:OOMKilled"] == "kubernetes"
    assert tools["exit:137"] == "shell" and tools["signal:SIGKILL"] == "posix"
    assert tools["python:KeyError: <STR>"] == "python"
    assert extract_signatures("HTTP/2 413")[0].tool == "http"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_on_arbitrary_text(text):
    sigs = extract_signatures(text)
    assert len({s.key for s in sigs}) == len(sigs)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["Traceback (most recent call last):", '  File "a.py", line 1, in f', "KeyError: 'x'",
                                 "\tat a.B.c(B.java:1)", "Caused by: a.b.C: d", "panic: x", "goroutine 1 [running]:",
                                 "main.f()", "\t/a/main.go:3 +0x1", "    at f (a.js:1:2)", "TypeError: y", "ERROR z failed",
                                 "thread 'm' panicked at a.rs:1:2:", "Exit Code: 139", "", "   "]), max_size=30))
def test_never_raises_on_trace_fragments(lines):
    extract_signatures("\n".join(lines))


@pytest.mark.parametrize("name", ["python", "java"])
def test_trace_with_lines_stripped_by_the_chunker_keeps_its_keys(name):
    """A .log source is chunked line by line, each line stripped: the frames lose their indentation."""
    first, _ = SAME_FAILURE[name]
    stripped = "\n".join(line.strip() for line in first.splitlines())
    assert keys(stripped) == keys(first)
