"""What a tool writes about its own objects, not what anyone says about the failure: a tracker's line about a post
("Jana Novák added a comment - 02/Apr/24 2:14 PM"), its journal of field changes and its forms, and an alerting tool's
activity log ("Alert count increased to 4", "Sent [sms] notification to [lena.hoff@…] successfully", "Escalation
[inbox-oncall_escalation] started for alert"). Such a line claims no role.
"""

from __future__ import annotations

import re

# A tracker's own line about a post, not what the post says: "Jana Novák added a comment - 02/Apr/24 2:14 PM"
TRACKER_META = re.compile(r"\b(?:(?:added|left|posted) a comment|made changes)\b|\bchanged the (?:status|assignee|priority)\b|\bcommented\b"
                          r"(?= on\b| -|$)|^(?:#note-\d+\s+)?Updated by \S|\bhas been (?:updated|reported) by\b|^\S[^@]{0,40} @[\w.-]+ ·"
                          r"|\badded (?:(?:the )?(?:[\w-]+ )?labels?|(?:a )?(?:subscriber|watcher|follower)s?)\b|\b(?:self-assigned|reopened|closed|mentioned) this\b|^(?:(?:Acknowledged|"
                          r"Resolved|Escalated|Reassigned) (?:by|to) (?-i:[A-Z])[\w.' -]{0,40}?\.?$|Notified .{1,40} by |Triggered through the |Escalated to level |Added responder )", re.I)
# An alerting tool's activity log about its alert (Opsgenie's alert log, PagerDuty's and Grafana OnCall's timelines;
# bench/incidents37): who was notified, escalated to, assigned or added, the alert's count, owner and state
TOOL_ACTIVITY = re.compile(r"^(?:alert|incident) (?:count increased to \d+|is assigned to|assigned to|acknowledged (?:via|by)|"
                           r"unacknowledged|closed (?:via|by)|created via|owner changed to|snoozed|escalated to)\b"
                           r"|^Sent \[?[\w ]+\]? notification to\b|^\[?Escalation\b[^.]*\b(?:started|notified)\b"
                           r"|\badded (?:a )?note\b|^Responder .{1,60} added by\b|^Priority changed from\b"
                           # ... and what it says another tool did: "PagerDuty: PD-88214 resolved by Oskar Brandt"
                           # (or "PagerDuty #4471 resolved by Maya Okafor.", bench/incidents31)
                           r"|^(?:\w+:? )?(?:(?:[A-Z][A-Z0-9]+-|#)\d+ )?(?:resolved|acknowledged|triggered|escalated) by "
                           r"(?-i:[A-Z])[\w.' -]{0,40}$", re.I)


# A tracker's journal of field changes, however many on a line ("Status changed from Assigned to Closed % Done
# changed from 80 to 100", Redmine), and GitLab's role badge under a comment's header ("Maintainer"): no claim
FIELD_CHANGE = re.compile(r"^(?:[*-]\s+)?(?:(?:Status|Assignee|Priority|% Done|Target version|Category|Subject|Tracker|Due date|"
                          r"Resolution|Severity|Labels?|Milestone) (?:changed from \S.* to \S.*|set to \S.*|deleted\b.*"
                          r"|changed: \S.*(?:→|->)\s*\S.*)"  # Zendesk's "Status changed: Solved → Open" (bench/incidents25)
                          r"|(?:Author|Owner|Maintainer|Developer|Reporter|Guest|Planner|Contributor|Member)"
                          # ... and the history lines of YouTrack and Jira: "Piotr Zawadzki changed State  In Progress →
                          # Fixed  26 Mar 2025 13:20", "Katja Ferreira changed the Status from In Progress to Done"
                          r"|[^:.]{1,60}? changed (?:the )?(?:State|Status|Priority|Assignee|Resolution|Fix versions?)"
                          r"\b.*(?:→|->|\bto\b).*)$", re.I)
# A tracker's fields laid out in a row ("Created: 08/Apr/25 8:12 AM    Resolved: 08/Apr/25 8:40 AM", "Status:   Closed
# Start date:   03/03/2025"): a form, not anyone's claim
# (a short value, then three blanks or more: two after a stop are a typist's sentence space, "Cause: disk full.  Fix:
# rotated the logs")
# ... or between bars, as a help desk prints a ticket's head: "Category: Applications > EDI | Created: Sat, 30 Mar …"
FIELD_ROW = re.compile(r"^[A-Z][\w %/.-]{0,24}:\s+[^.\s](?:[^.]{0,29}?\s{3,}|[^.|]{0,59}?\s*\|\s*)[A-Z][\w %/.-]{0,24}:(?:\s|$)")


# A help desk's automator on its ticket, however long: "Ticket assigned to group Integration Platform. First response
# due by Mon, 11 Mar 2024 11:02 AM.", "Ticket closed automatically 72 hours after resolution." (Freshservice), "Assigned
# to Digital Banking Ops by Help Topic "Online Banking / Loans". SLA plan P2 applied." (osTicket)
# ... and Request Tracker's history of a ticket, printed, each event alone on its line: "Thu May 22 10:06:20 2025
# dkovac - Comments added" over the comment, "… RT_System - Status changed from 'new' to 'open'", "… pnair - Taken"
AUTOMATOR = re.compile(r"^(?:Ticket|Case|Request) (?:(?:re)?assigned to (?:group|agent|team)|closed automatically)\b"
                       r"|^(?:Ticket )?(?i:(?:re)?assigned) to [^.]{1,80}\.\s+SLA (?:plan )?\S+ applied\b"  # osTicket
                       r"|^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}\s{2,}\S{1,60} - "
                       r"(?:(?:Comments?|Correspondence) added|Outgoing email recorded|Ticket created|Taken"
                       r"|(?:Status|Priority|Owner|Queue) changed from \S.* to \S+)$"
                       # a help desk's workflow or field event: Help Scout's 'Workflow "Auto-close after 3 days"
                       # (Jul 12, 2025, 09:13 UTC) Status changed: Pending -> Closed' (bench/incidents44)
                       r"|^(?:Workflow \"[^\"]{1,80}\" (?:\([^)]{1,40}\) )?)?"
                       r"(?:Status|Priority|Assignee|Owner) changed:? (?:from )?[\w -]{1,30} (?:->|→|to) [\w -]{1,30}\.?$"
                       r"|^(?:(?:Added|Removed) tags?|Tags? (?:added|removed|changed)):\s")  # "Added tags: escalated"

# A build tool's line about its own steps, not anyone's change: BuildKit's "#13 [ 8/14] RUN apt-get -q update && …"
# and its step's output "#13 14.42 dpkg: error processing package libc6", Docker's "Step 8/14 : RUN …", behind a CI
# console's time stamp ("[2021-09-08T00:21:11.596Z] "): a build log pasted into a ticket is the failure, not its fix
BUILD_STEP = re.compile(r"^(?:\[[\dT:.,Z+-]{8,40}\]\s*)?(?:#\d+ (?:\[[^\]]{0,40}\d+/\d+\] |\d+\.\d+ )|Step \d+/\d+ : )")


def about_post(text: str) -> bool:
    """Whether a line is a tracker's own line about a post ("Jana Novák added a comment - 02/Apr/24 2:14 PM", "Issue
    #7731 has been updated by …"): short, and shaped as ``TRACKER_META``; what a post says runs longer."""
    return bool(TRACKER_META.search(text) or TOOL_ACTIVITY.search(text)) and len(text.split()) <= 12 \
        or bool(AUTOMATOR.match(text))
