"""A log line seen again on another host, node or pid is the same line (``variant_key``), also when the host is a
name without a digit; prose that names another host speaks of another thing, and two loggers' lines stay two lines."""

from __future__ import annotations

import pytest

from poimen.relevance import variant_key

SSHD = ("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh "
        "ruser= rhost={host}")


@pytest.mark.parametrize("a, b", [
    ("218.188.2.4", "massive.merukuru.org"),
    ("csnsu.nsuok.edu", "220-135-151-1.hinet-ip.hinet.net"),
])
def test_a_line_on_another_host_is_the_same_line(a, b):
    assert variant_key(SSHD.format(host=a)) == variant_key(SSHD.format(host=b))


def test_a_line_with_another_field_is_another_line():
    assert variant_key(SSHD.format(host="a.example.org")) != variant_key(SSHD.format(host="a.example.org  user=root"))


@pytest.mark.parametrize("a, b", [
    ("2025-03-11 09:14:02 ERROR [main] org.apache.hadoop.ipc.Server - closed",
     "2025-03-11 09:14:02 ERROR [main] org.apache.hadoop.hdfs.DataNode - closed"),
    ("we drained csnsu.nsuok.edu first", "we drained massive.merukuru.org first"),
])
def test_other_loggers_and_other_values_in_prose_stay_apart(a, b):
    assert variant_key(a) != variant_key(b)


def test_a_line_a_month_later_is_the_same_line():
    # loghub Linux: logrotate's alert on Jun 15 and on Jul 1 was kept twice in the memory.
    assert (variant_key("Jun 15 04:06:20 combo logrotate: ALERT exited abnormally with [1]")
            == variant_key("Jul  1 04:05:19 combo logrotate: ALERT exited abnormally with [1]"))
    assert (variant_key("Tue Jun 15 04:06:20 2025 kernel: ALERT exited")
            == variant_key("Wed Jul 1 04:05:19 2025 kernel: ALERT exited"))


def test_a_month_word_that_dates_nothing_stays():
    assert (variant_key("2025-06-15 04:06:20 WARN quota May exceed soon")
            != variant_key("2025-06-15 04:06:20 WARN quota Can exceed soon"))
