"""Ticket exports in plain text with the service's log pasted under them (the shapes of bench/incidents47): a Jira
Service Management queue, each request under a rule with its fields, its Activity stamped "Name · 08/Oct/24 10:34
AM · Internal note"; Payara's Uniform Log Formatter lines and a JVM thread dump under "###" headings; FogBugz's case
events and Zoho Desk's thread led by a rule."""

from __future__ import annotations

import pytest

from poimen.incidents.episodes import episodes
from poimen.incidents.times import paragraph_seconds, seconds
from poimen.inputs.chunking import records
from poimen.inputs.readers.log import NUMBERED_HEAD, _number
from poimen.inputs.readers.speakers import speaker
from poimen.text.log_lines import is_log_line, level_of, time_of

QUEUE = """\
Platform Help (PH) / Queues / Claims services - open and resolved last 30 days
Plain-text export made by Nadia Farrell on 17/Oct/24 09:12.

----------------------------------------------------------------------------------------------------
PH-3318  Claims portal very slow, uploads end in 504
Request type: Report an incident | Priority: High | Reporter: Gemma Lowry
Resolution: Done | Resolved: 09/Oct/24 4:18 PM

Nadia Farrell · 08/Oct/24 10:34 AM · Internal note
  All three claims-intake pods are Running, Payara logs STUCK_THREAD warnings.

----------------------------------------------------------------------------------------------------
PH-3342  Claim submit spins forever on the portal, all brokers
Request type: Report an incident | Priority: Highest | Reporter: Gemma Lowry
Resolution: Done | Resolved: 16/Oct/24 8:47 PM

Dev Pillai · 16/Oct/24 3:44 PM · Internal note
  The dump says "Found one Java-level deadlock" between ClaimNumberAllocator and AuditTrail.

### 2024-10-16, claims-intake-6c4f8d7b9-r7t2n (5.8.0)
[#|2024-10-16T14:02:17.880+0000|INFO|Payara Micro 6.2024.9|com.orrinvale.claims.Bootstrap|_ThreadID=1;|claims-intake 5.8.0 started|#]
[#|2024-10-16T14:09:02.664+0000|WARNING|Payara Micro 6.2024.9|fish.payara.nucleus.healthcheck.HealthCheckService|_ThreadID=61;|STUCK_THREAD: blocked on com.orrinvale.claims.numbering.ClaimNumberAllocator@51c8e0d7|#]

### jcmd 1 Thread.print on claims-intake-6c4f8d7b9-r7t2n, 2024-10-16 14:41 UTC
2024-10-16 14:41:07
Full thread dump OpenJDK 64-Bit Server VM (17.0.12+7-LTS mixed mode, sharing):

Threads class SMR info:
_java_thread_list=0x00007f4e2c0a1b30, length=96, elements={
}

Found one Java-level deadlock:
=============================
"claims-outbox-flusher":
  waiting to lock monitor 0x00007f2a3c00b2e8 (object 0x00000000c61a4470, a com.orrinvale.claims.numbering.ClaimNumberAllocator),

Found 1 deadlock.
"""


def _records(tmp_path, text: str, name: str = "handover.txt"):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return list(records(f))


def test_a_request_under_a_rule_with_its_fields_opens_a_section_of_its_own(tmp_path):
    """Each request's key and summary, under the rule that sets it off and over its fields, heads what follows it
    (a title under a rule alone was no heading: both requests' activity read as one section)."""
    got = _records(tmp_path, QUEUE)
    under = {r.headings[-1] for r in got if "Internal note" in r.text}
    assert under == {"PH-3318  Claims portal very slow, uploads end in 504",
                     "PH-3342  Claim submit spins forever on the portal, all brokers"}


def test_a_pasted_log_under_a_hashed_heading_reads_line_by_line_with_its_time_and_level(tmp_path):
    """The "###" line heads the log under it, and each line of the log is a log record with its time and level, so
    a raw line finds the line it repeats and the section has the log's times."""
    got = _records(tmp_path, QUEUE)
    logged = [r for r in got if r.kind == "log"]
    assert [r.level for r in logged] == ["INFO", "WARN"]
    assert logged[1].time.startswith("2024-10-16T14:09:02")
    assert all(r.headings[-1] == "2024-10-16, claims-intake-6c4f8d7b9-r7t2n (5.8.0)" for r in logged)



CAPTIONED = """HANDOVER - booking-web 7.0.x rollout

Tariq: 58.sql failed on the first start, the pod log is below.

--- booking-web-5f9c6d8b7-q2wzl, 2024-11-13 (7.0.1), first start ---
2024-11-13 07:40:16,233 [INFO] from play.api.db.evolutions.DefaultEvolutionsApi in main - Applying evolution 58
2024-11-13 07:40:16,262 [ERROR] from play.core.server.ProdServerStart in main - Oops, cannot start the server.
play.api.db.evolutions.InconsistentDatabase: Database 'default' is in an inconsistent state! Please resolve it manually.
\tat play.api.db.evolutions.DatabaseEvolutions.checkEvolutionsState(EvolutionsApi.scala:307)
"""


def test_a_pasted_log_under_a_caption_between_rules_reads_line_by_line(tmp_path):
    """A caption set between two rules on its own line ("--- pod, day, first start ---") heads the log pasted under
    it, as a "###" line does: each log line is a record with its time and level, and the exception under them is
    what the log printed, read as the log reader reads it in a .log file, not a line of prose (where "resolve it
    manually" read as a verification)."""
    got = _records(tmp_path, CAPTIONED)
    logged = [r for r in got if r.kind == "log"]
    assert [r.level for r in logged] == ["INFO", "ERROR", ""]
    assert logged[1].time.startswith("2024-11-13 07:40:16")
    assert logged[2].text.startswith("play.api.db.evolutions.InconsistentDatabase") and "at play.api.db" in logged[2].text
    assert all(r.headings[-1] == "booking-web-5f9c6d8b7-q2wzl, 2024-11-13 (7.0.1), first start" for r in logged)
    as_log = _records(tmp_path, CAPTIONED.split("first start ---\n")[1], "pod.log")
    assert [(r.kind, r.level, r.text.split()) for r in as_log] == [(r.kind, r.level, r.text.split()) for r in logged]

def test_a_thread_dump_is_one_part_of_the_section_its_heading_opens(tmp_path):
    """What the JVM prints in a dump ("Threads class SMR info:", "Found one Java-level deadlock:" underlined) opens no
    section: the dump stays under its "###" heading, with the time printed over it."""
    got = _records(tmp_path, QUEUE)
    dump = [r for r in got if r.line_start >= QUEUE.split("\n").index("Threads class SMR info:") + 1]
    assert dump and {r.headings[-1] for r in dump} == {
        "jcmd 1 Thread.print on claims-intake-6c4f8d7b9-r7t2n, 2024-10-16 14:41 UTC"}
    sections = [ep for ep in episodes(got, "handover.txt") if "/ jcmd 1 Thread.print" in ep.key]
    assert len(sections) == 1 and sections[0].start == seconds("2024-10-16 14:41:07")


def test_a_section_of_comments_is_placed_by_the_stamps_of_its_comments(tmp_path):
    """A plain paragraph carries no time from its reader: a comment's header stamped in the tracker's way, or a log
    line pasted in it, places its section (a clock alone does not: its day is not said)."""
    assert paragraph_seconds("Nadia Farrell · 08/Oct/24 10:34 AM · Internal note\n  Looking.") == \
        [seconds("08/Oct/24 10:34 AM")]
    assert paragraph_seconds("Checked at 10:34 and again:\n10:52 still slow") == []
    by_key = {ep.key.rsplit(" / ", 1)[-1]: ep.start for ep in episodes(_records(tmp_path, QUEUE), "handover.txt")}
    assert by_key["PH-3318  Claims portal very slow, uploads end in 504"] == seconds("08/Oct/24 10:34 AM")


@pytest.mark.parametrize("line, expected", [
    ("Nadia Farrell · 08/Oct/24 10:34 AM · Internal note", ("08/Oct/24 10:34 AM", "Nadia Farrell")),
    ("Gemma Lowry · 08/Oct/24 2:40 PM · Reply to customer", ("08/Oct/24 2:40 PM", "Gemma Lowry")),
    # Freshdesk's, the weekday first
    ("Dafydd Morgan added a private note · Tue, 5 Nov 2024 at 8:44 AM", ("Tue, 5 Nov 2024 at 8:44 AM", "Dafydd Morgan")),
    ("Lina Osei replied · Tue, 5 Nov 2024 at 9:58 AM", ("Tue, 5 Nov 2024 at 9:58 AM", "Lina Osei")),
    # Request Tracker's printed history
    ("Thu May 22 10:06:20 2025  dkovac - Comments added", ("Thu May 22 10:06:20 2025", "dkovac")),
    (" Tue May 13 08:52:41 2025  RT_System - Status changed from 'new' to 'open'", ("Tue May 13 08:52:41 2025", "RT_System")),
    # Freshservice's printed ticket, a double dash before the time
    ("Priya Venkatesh added a private note -- Mon, 11 Mar 2024 10:41 AM", ("Mon, 11 Mar 2024 10:41 AM", "Priya Venkatesh")),
    ("Oskar Brenne reported via email -- Mon, 11 Mar 2024 10:02 AM", ("Mon, 11 Mar 2024 10:02 AM", "Oskar Brenne")),
    ("Workflow Automator -- Fri, 15 Mar 2024 05:00 PM", ("Fri, 15 Mar 2024 05:00 PM", "Workflow Automator")),
    # FogBugz's case events
    ("Opened by Ffion Parry 8/6/2024 (Tue) 9:02 AM", ("8/6/2024 9:02 AM", "Ffion Parry")),
    ("Assigned to Marek Novak by Ffion Parry 8/6/2024 (Tue) 9:05 AM", ("8/6/2024 9:05 AM", "Ffion Parry")),
    ("Resolved (Fixed) and assigned to Ffion Parry by Marek Novak 8/8/2024 (Thu) 4:40 PM",
     ("8/8/2024 4:40 PM", "Marek Novak")),
    # Zoho Desk's thread, each post led by a rule
    ("---- Callum Reid · Private comment · 10 Sep 2024 08:37 AM", ("10 Sep 2024 08:37 AM", "Callum Reid")),
])
def test_comment_headers_of_these_trackers(line, expected):
    assert speaker(line) == expected
    assert seconds(expected[0]) is not None


@pytest.mark.parametrize("line", [
    "---- the log of the day before ----------",
    "---- restarted the pod at 09:10, no change",
    "Closed the ticket by mistake 8/6/2024, reopened",
    "X-Forwarded-For: 10.20.31.77",  # a request header an error pasted: an address, no dotted date
])
def test_rules_and_prose_are_no_comment_header(line):
    assert speaker(line) is None


@pytest.mark.parametrize("line, number", [
    ("Case 48213 (Bug)  Bulk statements for big letting agents fail overnight", "#48213"),
    ("Zoho Desk · Warehouse Systems · Ticket #5127", "#5127"),
    ("Pivotal Tracker · Storefront Platform · story #187734120", "#187734120"),
])
def test_a_trackers_header_names_its_ticket(line, number):
    head = NUMBERED_HEAD.match(line)
    assert head and _number(head) == number


def test_payaras_uniform_log_formatter_line_is_a_log_line():
    line = ("[#|2024-10-08T09:16:10.404+0000|SEVERE|Payara Micro 6.2024.9|com.orrinvale.claims.AssistanceEligibility|"
            "_ThreadID=97;|token refresh failed|#]")
    assert is_log_line(line) and level_of(line) == "SEVERE" and time_of(line) == "2024-10-08T09:16:10.404"
    assert not is_log_line("[#] checked the queue at 10:00")


BOT_SUMMARIES = """Acme - incident summaries, July 2025
Source: the bot output, corrections below it.

####################################
#inc-3318-mobile-login
####################################

Helmsman  APP  14:52
INC-3318 has been resolved. Summary: the CDN cache was purged.

---- Human edits ----------------------------
[Lena Brandt, 2025-07-16 10:05]
Correcting the summary. The CDN had nothing to do with it.

####################################
#inc-3325-exports
####################################

Helmsman  APP  16:02
INC-3325 has been resolved.

---- Human edits ----------------------------
[Arjun Mehta, 2025-07-18 09:00]
The export job ran out of disk.
"""


def test_a_caption_is_a_part_of_the_section_it_stands_in(tmp_path):
    """"---- Human edits ----" corrects the incident whose section it stands in: each correction stays under its own
    incident's heading, not in one section of that name (where the two incidents' corrections read as one)."""
    got = _records(tmp_path, BOT_SUMMARIES)
    edits = [r for r in got if "Human edits" in r.headings]
    assert [r.headings[1:] for r in edits] == [("#inc-3318-mobile-login", "Human edits"),
                                               ("#inc-3325-exports", "Human edits")]


def test_weblogics_server_log_line_is_a_log_line_with_its_level_and_its_afternoon():
    """WebLogic writes "####<May 22, 2025 8:14:52,880 PM UTC> <Error> <…>": a log line, its level the second field in
    title case, its time with the half of the day it names."""
    line = ("####<May 22, 2025 8:14:52,880 PM UTC> <Error> <com.merrow.pa.web.PolicySearchAction> <wlpa-02> <pa_ms2> "
            "<[ACTIVE] ExecuteThread: '12' for queue: 'weblogic.kernel.Default (self-tuning)'> <policy search failed")
    assert is_log_line(line) and level_of(line) == "ERROR"
    assert seconds(time_of(line)) == seconds("2025-05-22T20:14:52Z")
    assert level_of("####<May 22, 2025 8:09:27,552 AM UTC> <Warning> <JTA> <wlpa-02>") == "WARN"
    assert not is_log_line("#### Notes from the call")
