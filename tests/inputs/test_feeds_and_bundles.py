"""A status page's incident history as an Atom or RSS feed, and API answers saved into one file under ``tail``'s
banners (an Opsgenie alert, its log and its notes): each read as what it holds, at the file lines it holds it on
(bench/incidents37)."""

from __future__ import annotations

import json

import pytest

from poimen.incidents import build_card, incidents
from poimen.incidents.roles import pick, score
from poimen.inputs.readers import read_records
from poimen.inputs.readers.detect import detect

UPDATE = ("&lt;p&gt;&lt;small&gt;Apr &lt;var data-var='date'&gt; 9&lt;/var&gt;, &lt;var data-var='time'&gt;{clock}"
          "&lt;/var&gt; UTC&lt;/small&gt;&lt;br&gt;&lt;strong&gt;{state}&lt;/strong&gt; - {said}&lt;/p&gt;")


def _atom(entries: list[tuple[str, str, list[tuple[str, str, str]]]]) -> str:
    body = "".join(
        f"  <entry>\n    <published>{when}</published>\n    <title>{title}</title>\n"
        f"    <content type=\"html\">{''.join(UPDATE.format(clock=c, state=s, said=w) for c, s, w in updates)}"
        "</content>\n  </entry>\n" for when, title, updates in entries)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            f"  <title>Status - Incident History</title>\n{body}</feed>\n")


FEED = _atom([
    ("2025-04-09T15:02:11Z", "Apps failing to resolve", [
        ("18:22", "Resolved", "Validating resolvers are answering for qsapp.example names again."),
        ("16:10", "Monitoring", "We restored ownership of the signing key directory to the bind user and re-signed "
                                "the zone with rndc sign qsapp.example."),
        ("15:41", "Update", "As a precaution we reverted this morning's change to our secondaries. It did not "
                            "change the results."),
        ("15:28", "Identified", "The DNSSEC signatures (RRSIG records) on the zone expired at 14:40 UTC."),
        ("15:02", "Investigating", "Browsers show DNS_PROBE_FINISHED_BAD_CONFIG for apps on qsapp.example.")]),
    ("2025-04-02T08:41:29Z", "Emails not arriving", [
        ("08:41", "Investigating", "Bounces read 550-5.7.26 unauthenticated email from quillstack.example.")]),
])


def test_a_status_feed_reads_entries_and_updates_oldest_first_at_their_lines(tmp_path):
    p = tmp_path / "history.xml"  # saved with another suffix: a feed by its opening tags
    p.write_text(FEED, encoding="utf-8")
    assert detect(p) == "feed"
    recs = list(read_records(p))
    said = [r.text for r in recs if r.text.startswith("**")]
    assert [s.split("**")[1] for s in said] == ["Investigating", "Investigating", "Identified", "Update",
                                                "Monitoring", "Resolved"]
    assert recs[0].text == "# Emails not arriving" and recs[0].line_start == 11  # the older entry, at its title
    monitoring = next(r for r in recs if "Monitoring" in r.text)
    assert monitoring.line_start == 7 and monitoring.time == "2025-04-09 16:10 UTC"
    assert monitoring.headings == ("Apps failing to resolve",)
    (dns,) = [i for i in incidents({p.name: recs}) if "rndc" in " ".join(line.text for line in i.lines)]
    fixes = [line.text for line in build_card(dns).lines if line.role == "action"]
    assert any("rndc sign" in f for f in fixes) and not any("reverted" in f for f in fixes)


@pytest.mark.parametrize("text, role", [
    ("**Identified** - The DNSSEC signatures on the zone expired at 14:40 UTC.", "cause"),
    ("**Monitoring** - We restored ownership of the signing key directory to the bind user.", "action"),
])
def test_a_status_pages_states_say_what_an_update_tells(text, role):
    assert pick(score(text, "paragraph")) == role


def _alert_dump(tmp_path):
    alert = {"data": {"tinyId": "7731", "message": "[Prometheus] InboxReadFailures inbox-api prod",
                      "description": "ReadFailureException: Cassandra failure during read query",
                      "createdAt": "2025-03-11T02:14:09.204Z", "teams": [{"id": "9b1e4c27"}]}, "took": 0.006}
    logs = {"data": [{"log": "Alert count increased to 4", "owner": "System", "createdAt": "2025-03-11T02:19:12Z"},
                     {"log": "[lena.hoff@example.com] added note", "owner": "lena.hoff@example.com",
                      "createdAt": "2025-03-11T02:40:00Z"}]}
    notes = {"data": [{"note": "Mark-all-read deletes rows one by one: 2M tombstones per heavy user.",
                       "owner": "lena.hoff@example.com", "createdAt": "2025-03-11T02:40:00Z"}]}
    parts = [("og/7731-3f9c-alert.json", alert), ("og/7731-3f9c-logs.json", logs), ("og/7731-3f9c-notes.json", notes)]
    p = tmp_path / "dump.txt"
    p.write_text("".join(f"==> {name} <==\n{json.dumps(v, indent=2)}\n\n" for name, v in parts), encoding="utf-8")
    return p


def test_api_answers_under_tails_banners_are_read_each_as_its_file_in_time_order(tmp_path):
    p = _alert_dump(tmp_path)
    assert detect(p) == "bundle"
    recs = list(read_records(p))
    assert recs[0].kind == "ticket" and recs[0].text.startswith("[2025-03-11T02:14:09.204Z] [Prometheus] InboxRead")
    assert "ReadFailureException" in recs[0].text and recs[0].line_start == 2  # the alert's message over its text
    lines = p.read_text().split("\n")
    for r in recs:
        assert r.text.split(": ", 1)[-1].split(" ", 1)[-1][:20] in "\n".join(lines[r.line_start - 1:r.line_end])
    assert [r.author for r in recs[1:]] == ["System", "lena.hoff@example.com", "lena.hoff@example.com"]
    assert {r.thread for r in recs} == {"og/7731-3f9c"}  # one alert's three files
    note = recs[-1]
    assert "tombstones" in note.text and lines[note.line_start - 1].lstrip().startswith("{")


def test_a_logs_json_lines_under_a_banner_stay_a_log(tmp_path):
    p = tmp_path / "saved.txt"
    p.write_text("==> kubectl logs api-7c9f <==\n" + "\n".join(
        json.dumps({"@timestamp": f"2025-05-12T05:51:0{n}Z", "log.level": "ERROR", "message": "boom"})
        for n in range(5)) + "\n", encoding="utf-8")
    assert detect(p) == "log"


@pytest.mark.parametrize("line", [
    "[2025-03-11T02:19:12.550Z] System: Alert count increased to 4",
    "[2025-03-11T02:14:11.870Z] lena: Sent [sms] notification to [lena.hoff@example.com] successfully",
    "Escalation [inbox-oncall_escalation] started for alert",
    "[2025-03-11T02:26:40.117Z] tomasz: [tomasz.wojcik@example.com] added note",
    "Alert closed via Prometheus[Prometheus-prod] because the resolved event was received",
])
def test_an_alerting_tools_activity_log_claims_nothing(line):
    assert score(line, "message") == score("")


@pytest.mark.parametrize("line", [
    "[2025-10-21T13:54:32.000Z] Severity set to SEV3",
    "[2025-10-21T14:53:40.000Z] Status changed from Started to Mitigated",
    "[2025-10-21T14:54:02.000Z] PagerDuty: PD-88214 resolved by Oskar Brandt",
])
def test_an_incident_tools_events_with_their_time_claim_nothing(line):
    """Rootly's incident events read as records with their time (bench/incidents37): the tool's field changes and
    what it says another tool did were the card's fixes, over the chrony install."""
    assert score(line, "record") == score("")
    assert pick(score("[2025-10-21T14:41:00.000Z] Mitigation: installed chrony with makestep 1.0 3 on auth-5..8",
                      "record")) == "action"
