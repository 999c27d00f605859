"""Log levels in the other common shapes are failure lines: Apache/nginx/MySQL bracketed levels in any case, Android
logcat's level letter, logfmt and JSON level fields, glog/klog's letter, a command's "error:", kernel priorities.

Each shape is recognised only where its format puts the level, so prose with the same words ("an error in
judgement", "E. coli") stays no failure line; and each grades as the upper-case word does (warning 1, error 1.5,
fatal 2), by the line's own level.
"""

from __future__ import annotations

import pytest

from poimen.relevance import Scorer, is_failure_query, looks_like_failure, severity, states_a_failure


@pytest.mark.parametrize("line, grade", [
    ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", 1.5),
    ("2024/05/02 10:00:01 [error] 1234#0: *5 connect() failed (111: Connection refused) while connecting", 1.5),
    ("[Thu May 02 10:00:01 2024] [warn] long lost child came home! (pid 4121)", 1.0),
    ("[Thu May 02 10:00:01 2024] [crit] (28)No space left on device: mod_rewrite: could not create lock", 2.0),
    ("2024-05-02T10:00:01.123456Z 0 [Warning] InnoDB: page_cleaner took 4133ms", 1.0),  # MySQL's title case
    ("05-02 10:00:01.811  1702  2395 W WindowManager: Unable to start animation, surface is null", 1.0),
    ("05-02 10:00:01.811  1702  2395 E KeyguardUpdateMonitor: sim state read failed", 1.5),
    ("05-02 10:00:01.811  1702  2395 F libc    : Fatal signal 11 (SIGSEGV), code 1 in tid 2395", 2.0),
    ("2024-05-02 10:00:01.811  1702  2395 W PackageManager: cannot read package list", 1.0),
    ("E/AndroidRuntime( 1234): FATAL EXCEPTION: main", 1.5),  # logcat's own level is E: the message's FATAL is text
    ("05-02 10:00:01.811 W/ActivityManager( 1702): Slow operation: 212ms so far", 1.0),
    ("F/libc    ( 2102): Fatal signal 6 (SIGABRT)", 2.0),
    ('time=2024-05-02T10:00:01Z level=error msg="ledger unreachable" attempt=3', 1.5),
    ('ts=2024-05-02T10:00:01Z lvl=warn msg="slow flush" took=2.3s', 1.0),
    ('{"time":"2024-05-02T10:00:01Z","level":"error","msg":"ledger unreachable"}', 1.5),
    ('{"level": "fatal", "msg": "cannot bind :8080"}', 2.0),
    ('{"severity": "WARNING", "message": "quota at 91%"}', 1.0),
    ('{"level":50,"time":1714644001811,"pid":4121,"hostname":"api-1","msg":"ledger unreachable"}', 1.5),  # pino
    ('{"level":60,"time":1714644001811,"msg":"cannot bind :8080"}', 2.0),
    ('{"name":"api","hostname":"web-1","pid":4121,"level":40,"msg":"slow flush","v":0}', 1.0),  # bunyan
    ('{"level": 50, "msg": "ledger unreachable"}', 1.5),
    ("E0502 10:00:01.123456       1 reflector.go:138] failed to list *v1.Pod: connection refused", 1.5),
    ("W0502 10:00:01.123456       1 warnings.go:70] policy/v1beta1 PodSecurityPolicy is deprecated", 1.0),
    ("fatal: unable to access 'https://git.example.org/repo.git/': Could not resolve host", 2.0),
    ("error: failed to push some refs to 'origin'", 1.5),
    ("Error: connect ECONNREFUSED 127.0.0.1:5432", 1.5),  # cobra and Node CLIs capitalise it
    ("Fatal: could not open the state file /var/lib/app/state.json", 2.0),
    ("<3>usb 1-1: device descriptor read/64, error -71", 1.5),
    ("<4>nouveau 0000:01:00.0: fifo: SCHED_ERROR 0a", 1.0),
    ("<2>Kernel panic - not syncing: Attempted to kill init!", 2.0),
])
def test_a_level_in_its_format_position_is_a_failure_line_of_its_grade(line, grade):
    assert looks_like_failure(line) and states_a_failure(line)
    assert severity(line) == grade


@pytest.mark.parametrize("line", [
    "He made an error in judgement and the deal fell through.",
    "E. coli was found in the water supply.",
    "The E/F ratio: 3 to 1, as the table shows.",
    "Section E: results of the survey",
    "Plan E would warn the others first.",
    "W. B. Yeats wrote it in 1919.",
    "05-02 10:00:01.811  1702  2395 D WindowManager: printFreezingDisplayLogs opening app",
    "05-02 10:00:01.811  1702  2395 I ActivityManager: Start proc 4121 for activity",
    "I/ActivityManager( 1702): Displayed com.example/.Main: +512ms",
    'time=2024-05-02T10:00:01Z level=info msg="ledger reachable"',
    '{"level":"debug","msg":"flush"}',
    '{"level":30,"time":1714644001811,"pid":4121,"hostname":"api-1","msg":"request completed"}',
    '{"level":20,"msg":"flush"}',
    '{"level":10,"msg":"enter handler"}',
    "The boss waits at level 50; at level 60 the gate opens.",  # a number in prose is no level
    'level=50 msg="ledger reachable"',  # nor in a logfmt field: pino's numbers are JSON
    '{"level":55,"msg":"ledger reachable"}',
    '{"level":500,"msg":"ledger reachable"}',
    '{"level":50.5,"msg":"ledger reachable"}',
    '{"level":"50","msg":"ledger reachable"}',
    "I0502 10:00:01.123456       1 leaderelection.go:248] attempting to acquire leader lease",
    "<6>usb 1-1: new high-speed USB device number 2 using xhci_hcd",
    "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties",
    "Warning: do not run the migration on the primary during business hours.",  # a document's admonition
])
def test_prose_and_quieter_levels_are_no_failure_lines(line):
    assert not looks_like_failure(line) and severity(line) == 0.0


@pytest.mark.parametrize("marker", ["[error]", "level=error", '{"level":"error"}', '{"level":50}', "<3>"])
def test_a_level_field_alone_says_no_failure(marker):
    assert not looks_like_failure(marker)


def test_a_pasted_logcat_error_line_asks_after_failures():
    assert is_failure_query("05-02 10:00:01.811  1702  2395 E Ledger: sync of batch 7 stopped")
    assert not is_failure_query("05-02 10:00:01.811  1702  2395 I Ledger: sync of batch 7 stopped")


def test_a_failure_query_ranks_a_logcat_error_above_the_info_line_that_says_as_much():
    info = "05-02 10:00:01.811  1702  2395 I Ledger: sync of batch 7 stopped"
    error = "05-02 10:00:01.811  1702  2395 E Ledger: sync of batch 7 stopped"
    ranked = Scorer().rank("Which errors occurred?", [info, error])
    assert [i for i, _ in ranked][0] == 1 and ranked[0][1] > ranked[1][1]
