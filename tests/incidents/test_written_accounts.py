"""Write-ups told in shapes met in bench/incidents45 and 46: a postmortem written as numbered paragraphs, an alert
tool's page per alert, and the cues such accounts use (a "Fixed:" label over the change, "still refused", "the reason
… is", a release that "in 2.5.1" does something, a commit that says its change)."""

from __future__ import annotations

import pytest

from poimen.incidents import assign, build_card, incidents, score
from poimen.incidents.episodes import episodes, record_lines
from poimen.inputs.chunking import records
from poimen.inputs.records import Record
from poimen.relevance import split_units

NARRATIVE = """\
1. On Tuesday at 09:42 UTC the network team upgraded the firmware on the top-of-rack switch in rack B of the
Frankfurt room. Two of our three session Redis nodes live in rack B: redis-sess-02 and redis-sess-03. The
link blip lasted 41 seconds.

2. From 09:44 account-web logged errors like this one, several hundred a second:

    2025-04-08 09:44:18.207 ERROR 1 --- [ioEventLoop-4-3] c.p.s.SessionRepository : session read failed
    io.lettuce.core.RedisLoadingException: LOADING Redis is loading the dataset in memory

3. The reason the replicas could not resync after a short blip is the backlog: the default 1 MB replication
backlog was overrun within seconds at 9,000 writes a second, so every disconnect forced a full sync.

4. At the same time the RedisLatencyHigh alert fired for redis-cache-01, the product-cache Redis. That was the
nightly re-warm running late, unrelated, and it cleared by itself at 10:20.

5. At 11:20, with the loop still running, Femi raised the replica buffer limit on redis-sess-01 at runtime so
that a full sync could finish:

    redis-cli -h 10.30.1.11 CONFIG SET client-output-buffer-limit "replica 2gb 1gb 120"

6. On Wednesday Lotte made it permanent in the redis role: repl-backlog-size 512mb for the sessions group, in
MR !219, rolled out with a config rewrite and no restart.
"""


def _incidents(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    recs = list(records(path))
    return recs, incidents({name: recs})


def test_a_postmortem_told_in_numbered_paragraphs_is_one_incident_with_its_fix(tmp_path):
    recs, found = _incidents(tmp_path, "resync.txt", NARRATIVE)
    assert len(episodes(recs, "resync.txt")) == 1  # not cut at the unrelated alert, nor at the hours between
    assert len(found) == 1
    card = build_card(found[0])
    actions = " ".join(line.text for line in card.lines if line.role == "action")
    assert "CONFIG SET client-output-buffer-limit" in actions
    causes = " ".join(line.text for line in card.lines if line.role == "cause")
    assert "replication backlog was overrun" in causes


def test_a_numbered_paragraph_wrapped_flush_left_reads_as_its_sentences():
    texts = [u.text for u in split_units(NARRATIVE.split("\n\n")[0])]
    assert texts[0].startswith("1. On Tuesday at 09:42 UTC") and texts[0].endswith("in rack B of the Frankfurt room.")
    assert "The link blip lasted 41 seconds." in texts


def test_a_short_item_over_a_line_of_its_own_is_not_joined_to_it():
    text = ("1) roll back to 2.14.1\n2) make unknown values fall back to a default constant instead of failing\n"
            "Going with 2 plus a WARN so we see new values; adding UNKNOWN to ParcelStatus with a default and the rest.")
    texts = [u.text for u in split_units(text)]
    assert "2) make unknown values fall back to a default constant instead of failing" in texts


def test_only_paragraphs_numbered_one_after_another_are_an_account(tmp_path):
    # numbers that do not run 1, 2, 3 … (notes that list tickets by number) are no account told in order
    from poimen.incidents.episodes import _numbered_account
    notes, _ = _incidents(tmp_path, "notes.txt", "12. disk alert on db-1\n\n40. checkout 502s\n\n7. cron job late\n")
    narrative, _ = _incidents(tmp_path, "resync.txt", NARRATIVE)
    assert _numbered_account(narrative) and not _numbered_account(notes)


ALERTS = """\
# Alert log, June

## Alert #5521 — BackendNoServers be_checkout

**Message**

> [FIRING:1] BackendNoServers be_checkout — backend be_checkout has no server available

**Description**

Every server in backend be_checkout is DOWN.

### Activity log

- Jun 3 14:06:13 — Alert created.

### Notes

The check hits /healthz, and that path is gone in 5.2.0. Fixed: `option httpchk GET /health/ready` in
haproxy.cfg.j2 (MR !631), all servers UP.

## Alert #5603 — BackendNoServers be_checkout

**Message**

> [FIRING:1] BackendNoServers be_checkout — backend be_checkout has no server available

**Description**

Every server in backend be_checkout is DOWN.

### Activity log

- Jun 12 06:52:37 — Alert created.

### Notes

curl: (7) Failed to connect to 10.30.1.11 port 8080: Connection refused. Fixed: `checkout_bind: "0.0.0.0:8080"`
set in group_vars/prod_checkout.yml (MR !640), play re-run.
"""


def test_an_alert_page_whose_parts_are_mostly_a_write_ups_keeps_its_other_parts(tmp_path):
    recs, found = _incidents(tmp_path, "alerts.md", ALERTS)
    assert len(found) == 2  # the "Message" part of each alert is no incident of its own
    texts = [" ".join(line.text for line in build_card(inc).lines) for inc in found]
    assert any("MR !631" in t and "MR !640" not in t for t in texts)
    assert any("MR !640" in t and "MR !631" not in t for t in texts)


def test_a_printed_error_is_never_the_suspect_a_ruling_out_line_demotes():
    event = Record('Warning  FailedCreate  4m3s (x18 over 31m)  replicaset-controller  Error creating: pods '
                   '"label-worker-6c9f8d7b5-" is forbidden: exceeded quota: fulfilment-compute, requested: '
                   'requests.cpu=750m, used: requests.cpu=15750m, limited: requests.cpu=16', 10, 10, kind="code")
    said = Record("Nodes had plenty of room (cluster CPU requests at 58%), so that was ruled out.", 12, 12)
    lines = [line for r in (event, said) for line in record_lines(r, "pm.txt")]
    assert [r.role for r in assign(lines)][0] == "symptom"


@pytest.mark.parametrize("text, role", [
    ("Fixed: `option httpchk GET /health/ready` in haproxy.cfg.j2 (MR !631), all servers UP.", "action"),
    ("The reason the replicas could not resync is the backlog: the default 1 MB backlog was overrun within seconds.",
     "cause"),
    ("[2025-08-07T13:40:44Z] rquayle: In 2.5.1 `StatementFile.parse()` decodes with the charset from the response's "
     "Content-Type and takes `encoding=` if you ever need to override it.", "action"),
    ('$ git commit -am "ingress-public: allow update on ingresses/status again" && git push', "action"),
    ("$ argocd app sync ingress-public --grpc-web", "action"),
    ("$ git log --oneline -3", "none"),
    # a sentence that decides against something claims nothing; the sentence before it still says what was done
    ('Connection URL set back to ldaps://ad.merriford.example:636 on the corp-ad provider at 09:51, logins working '
     'from 09:52. Decided NOT to ask the Windows team for IP SANs on the DC certs.', "action"),
    ("Decided NOT to ask the Windows team for IP SANs on the DC certs.", "none"),
])
def test_the_cues_of_written_accounts(text, role):
    from poimen.incidents.roles import pick
    assert pick(score(text, "command" if text.startswith("$") else "paragraph")) == role


def test_an_attempt_still_refused_after_it_changed_nothing():
    assert score("Restarted checkout-web on app-01 (`systemctl restart checkout-web`), still refused.").ineffective
    assert not score("Restarted checkout-web on app-01; it answers again.").ineffective


def test_a_trac_changeset_under_in_brackets_is_the_change_and_its_braces_say_nothing():
    body = ("    In [9012]:\n\n    {{{\n    #!CommitTicketReference repository=\"dispatch-api\" revision=\"9012\"\n"
            "    RouteReoptimiser: run under a ShedLock JDBC lock (V88__shedlock.sql), refs #4133\n    }}}\n")
    failure = Record("2025-06-05T06:00:03.882Z ERROR 1 --- [scheduling-1] reoptimise failed: "
                     "ObjectOptimisticLockingFailureException", 1, 1, kind="log")
    comment = Record(body, 10, 15, kind="comment", time="2025-06-05T14:12:37Z", author="tmbeki")
    lines = [line for r in (failure, comment) for line in record_lines(r, "t.log")]
    roles = {line.text: role.role for line, role in zip(lines, assign(lines))}
    assert roles["RouteReoptimiser: run under a ShedLock JDBC lock (V88__shedlock.sql), refs #4133"] == "action"
    assert roles["{{{"] == roles["}}}"] == "none"


REVIEW = """\
# Post-incident review: INC-5120 — new hostnames stuck in us-east-1

## Summary

Route 53 calls from the production account were throttled: `Throttling: Rate exceeded` from external-dns.

## Root cause

The new external-dns instance listed the whole public zone once a minute.

## Resolution

external-dns was redeployed with `interval: 10m` and `domainFilters: [use1-b.lumenfold.io]`.

## Addendum: INC-5127 (Friday 2025-04-11) — "Rate exceeded" again, but from STS

### What we saw

The on-call started from INC-5120, but the archiver failed with `WebIdentityErr: failed to retrieve credentials
caused by: Throttling: Rate exceeded` from STS, not Route 53.

### Cause

archiver 1.8.0 called `session.NewSession()` for every object, so every upload did its own token exchange.

### Fix

archiver 1.8.1 builds one session per worker and the CronJob sets `AWS_STS_REGIONAL_ENDPOINTS=regional`.
"""


def test_an_addendum_that_names_its_own_ticket_is_an_incident_of_its_own(tmp_path):
    _, found = _incidents(tmp_path, "review.md", REVIEW)
    assert len(found) == 2
    texts = [" ".join(line.text for line in build_card(inc).lines) for inc in found]
    assert any("domainFilters" in t and "AWS_STS_REGIONAL_ENDPOINTS" not in t for t in texts)
    assert any("AWS_STS_REGIONAL_ENDPOINTS" in t and "domainFilters" not in t for t in texts)
