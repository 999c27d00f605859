"""Roles of what a tracker's comments say in the shapes of bench/incidents47: a release that heads what it changed,
a stopgap labelled as one, and the paster's note on what was cut from a dump, which changes nothing."""

from __future__ import annotations

import pytest

from poimen.incidents import score
from poimen.incidents.roles import pick


@pytest.mark.parametrize("text", [
    "3.14.1: stock.client.keep-alive-timeout-seconds: 1 in config/prod.yaml, so the stock WebClient drops idle "
    "connections before haproxy does.",
    "promo-engine 3.2.0: single-use codes are now looked up in Redis instead of being held in the rule index.",
    "policyadmin 7.15.0 (MR !1203): weblogic-ejb-jar.xml puts EndorsementImportMDB on work manager EndorseImportWM "
    "with max-threads-constraint EndorseImportMax = 4, so at most 4 files import at a time per server.",
    "Stopgap: promo-engine resources.limits.memory 768Mi -> 2Gi in deploy/values-prod.yaml (and -Xmx1536m), rolled "
    "out 15:50. No restarts since.",
    "Stopgap agreed with DBA: PolicyDS MaxCapacity 40 -> 60 on both servers (online, no restart).",
    # a follow-up list's item done, however much it says of what may fail later (bench/incidents42)
    'Done: the step-ca renew hook on db-loan-01/02 now runs mariadb -e "FLUSH SSL" right after it copies the new '
    "files, and fails the job if the served enddate does not change. Planned: a probe that alerts 14 days before expiry.",
])
def test_what_a_release_or_a_stopgap_changed_is_the_fix(text):
    assert pick(score(text, kind="comment")) == "action"


@pytest.mark.parametrize("text", [
    "(same frames as above, removed)",
    "[... 40 lines omitted ...]",
    "(trimmed: 36 identical BLOCKED listener threads removed)",
    "<snip>",
])
def test_the_pasters_note_on_what_was_cut_says_nothing(text):
    assert pick(score(text, kind="paragraph")) == "none"


def test_a_change_in_brackets_is_still_a_change():
    assert pick(score("(rolled back to 4.5.4 and removed the feature flag)", kind="comment")) == "action"


@pytest.mark.parametrize("text", [
    'Assigned to Digital Banking Ops by Help Topic "Online Banking / Loans". SLA plan P2 applied.',
    'Assigned to Digital Banking Ops. SLA plan P1 applied. On-call page sent (PagerDuty service "Digital Banking").',
    "[2025-06-03T08:16:04.870Z] corvina-ops-bot: PagerDuty #4471 resolved by Maya Okafor.",
    'Workflow "Auto-close after 3 days" (Jul 12, 2025, 09:13 UTC) Status changed: Pending -> Closed',
    'Workflow "Reopen on customer reply" (Jul 14, 2025, 11:35 UTC) Status changed: Closed -> Active.',
    "Added tags: escalated, tier-2.",
])
def test_a_help_desks_routing_event_is_no_fix(text):
    """osTicket's event on its ticket (bench/incidents42): "applied" there is the desk's SLA plan, not a change; a
    bot's word that the page was resolved (bench/incidents31) is the pager's state, not what fixed anything; Help
    Scout's workflow moving a ticket's status (bench/incidents44) is the desk's own bookkeeping."""
    assert pick(score(text, kind="comment")) == "none"


def test_a_notes_title_field_is_no_cause_or_fix():
    """osTicket's internal note opens with its title ("Title: found it", "Title: mitigation"): a label for what
    the note's lines then say, never a cause or a fix line of the card (bench/incidents42)."""
    from poimen.incidents import build_card, incidents
    from poimen.inputs.records import Record

    def note(at, time, text):
        head = f"04/08/25 {time}   Mateo Okafor   [Internal Note]"
        return Record(text=f"{head}\n{text}", line_start=at, line_end=at + 2, kind="comment", time=f"04/08/25 {time}",
                      author="Mateo Okafor")

    records = [
        note(1, "10:11 am", "Title: first look\nloanbook-api is throwing 503 LB-DB-UNAVAILABLE, all of it is "
                            "HikariPool-1 timing out after 30s."),
        note(5, "10:49 am", "Title: found it\nRoot cause: every pod opens its full 24 connections at start, so pod 17 "
                            "onwards gets none."),
        note(9, "10:55 am", "Title: mitigation\nPatched the HPA down to maxReplicas 12 for now (kubectl -n lending "
                            "patch hpa loanbook-api -p '{\"spec\":{\"maxReplicas\":12}}'). Errors stopped at 10:57."),
    ]
    card = build_card(incidents({"ticket.txt": records})[0])
    texts = [line.text for line in card.lines]
    assert any(text.startswith("Root cause:") for text in texts)
    assert any(text.startswith("Patched the HPA") for text in texts)
    assert not any(text.startswith("Title:") for text in texts)


@pytest.mark.parametrize("text", [
    "Audit done: two more int4 serials on pg-cart, wishlist_items (12% of max used). Tickets DB-231 and DB-232.",
    "[root@pgr-03 log]# # planned, not done: bloat check on ledger_entries on pgr-02 next week",
])
def test_done_is_a_fix_only_as_the_lines_label(text):
    """"Done: …" opens an item finished (bench/incidents32, 42); an audit done or an item not done is no fix."""
    assert pick(score(text, kind="comment")) != "action"


@pytest.mark.parametrize("text, role", [
    ("Hi Priya, thanks for the quick report. We can see the errors and are working on it now. I'll update here every "
     "30 minutes.", "none"),
    ("Thanks for getting in touch and sorry about the trouble.", "none"),
    # a thank-you that goes on to say more, and a "we are on it" that tells the failure, keep what they say
    ("Thanks for the report, the disk filled because the WAL archive job was paused since Friday.", "cause"),
    ("checkout-api is returning 502s for every customer, we are looking into it", "symptom"),
    ("The site is down, we are looking into it", "symptom"),
])
def test_an_acknowledgement_to_the_reporter_is_no_symptom(text, role):
    """A desk's reply to whoever reported (osTicket, bench/incidents42; Help Scout, bench/incidents44) repeats the
    failure without a new fact: it scored as a symptom and took a symptom slot of the card beside the report."""
    assert pick(score(text, kind="comment")) == role


def test_the_same_message_after_a_try_is_no_fix():
    """A customer's "Cleared cache, same message." (Help Scout, bench/incidents44): the try did not help."""
    assert score("Cleared cache, same message. File attached.", kind="comment").ineffective
