"""A person speaking inside a log: the comments of a ticket or an alert pasted under the log they are about, in the
shapes trackers print them. Each is a header naming who spoke and when, with the words on the same line or on
the lines below it:

- "[14/May/24 10:40] priya.n: paged for …", "[Sep 3, 2024 10:09 AM] Tobias Krüger: Acked." (chat and alert notes),
  and a name alone after the time, the words below it: "[17/09 14:06] Freja Lund" (Teams' messages, copied);
- "2024-06-03 08:31 rafael.m: …" (a time, a name and a colon, no level between);
- "[04 Jun 2024 03:31] Camille Dubois (on-call):" with the comment on the lines below;
- "2024-08-14 09:58:40 - Lucia Romero (Work notes)" (ServiceNow's journal; a zone may follow the time);
- "Jana Novák added a comment - 02/Apr/24 2:14 PM" (Jira's issue view and e-mails; its history, "… made changes -
  …", too), "Jana Novák - 02/Apr/24
  2:14 PM" (its Comments export), "**hannah-vogt** commented on Apr 7, 2025" (GitHub's issue page copied as text);
- "Comment by Noor Haddad [ 06/May/24 7:50 AM ]" (Jira's printable view and Word/XML exports); "mira-halvorsen
  (Member) • May 12, 2025" (the GitHub CLI's `gh issue view --comments`); "#10 by Mareike Brandt at 2025-06-11
  10:20 CEST:" (an incident tool's export); "Gareth Pryce · via email · 10.03.2025 08:21" (Zammad's ticket view);
  "Tomás Arriaga · Oct 6, 2025, 8:58 AM" and "X changed status from Done to Todo · Oct 15, 2025, 10:09 AM"
  (Linear's issue page and its activity); "daniel.oyelaran added a comment.Nov 5 2025, 8:03 AM" (Phabricator's);
  "Jonas Feddersen  @jonas.f  03:41" (Rocket.Chat or Mattermost copied, under a day between rules);
- "Jana Novak - 2024-06-02 13:20:" (a name, then the time, as plain-text exports and e-mails write a header), and
  after the post's kind: "[Private note] Hamid Serrano - Mon, 8 Jul 2024 at 09:38 AM" (Freshdesk, Zendesk), or
  after two spaces: "Tomás Ferreira  Feb 13, 2025, 09:41 GMT  (internal note)" (a help desk's export); a help
  desk's printed ticket, "Priya Venkatesh added a private note -- Mon, 11 Mar 2024 10:41 AM" (Freshservice), and
  Request Tracker's printed history, "Thu May 22 10:06:20 2025  dkovac - Comments added";
- any of these drawn between rules: "--- comment by Dami Okafor (2024-07-21 09:21) ---";
- an issue tracker's page copied as text: "Priya Raman @praman · 2 weeks ago" (GitLab; its system notes, "… @mnovak
  closed 1 week ago", too), "#note-4  Updated by Ingrid Solberg about 1 month ago" (Redmine), and a help desk's
  printed view, "Internal note -- Jesper Holm  (Mar 4, 2025, 09:05 CET)" (a name may hold "de", "van", …). An
  e-mail's "On Tue, 4 Mar 2025 at 08:12, X wrote:" is a quote's header, no one speaking.

A name is a handle ("priya.n") or up to four capitalised words ("Camille Dubois"); a level word before it makes
the line a log line, not a person ("[10:40] ERROR db: …", "17/06/09 20:10:41 INFO Remoting: …").
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from poimen.text.log_lines import level_of, time_of

_HANDLE = r"[^\W\d_][\w.@-]{0,40}"  # priya.n, tobias, ops-bot
_CAPITALISED = r"(?:[A-Z]|[^\W\d_\x00-\x7f])[\w'.-]*"  # Dubois, Krüger, Ólafur, O'Neil
_PARTICLE = r"(?:de|da|di|du|del|della|der|den|van|von|le|la|ten|ter|dos|das|bin|al|el) "  # Arjen de Wit
_PERSON = rf"{_CAPITALISED}(?: (?:{_PARTICLE})*{_CAPITALISED}){{1,3}}"
_NAME = rf"(?:{_PERSON}|{_HANDLE})"
_ROLE = r"(?:\s+\([^()]{1,40}\))?"
_BRACKET = re.compile(rf"^\[(?P<time>[^\]]{{4,40}})\]\s+(?P<who>{_NAME}){_ROLE}:(?:\s+\S.*)?$")
# Microsoft Teams' messages copied from a channel: "[17/09 14:06] Freja Lund" over the message (bench/incidents25)
_BRACKET_ALONE = re.compile(rf"^\[(?P<time>[^\]]{{0,24}}\d{{1,2}}:\d{{2}}[^\]]{{0,12}})\]\s+(?P<who>{_PERSON})\s*$")
# (a directory's "Last, First" too: TOPdesk's "10-06-2025 08:12 Morrow, Lydia:" over the action; bench/incidents44)
_AFTER_TIME = re.compile(rf"^\]?\s*(?P<who>{_NAME}|{_CAPITALISED}, {_CAPITALISED}){_ROLE}:(?:\s+\S.*)?$")
# after the time, and its zone if written ("2025-02-12 19:05:40 GMT - Dmitri Olsen (Work notes)"; bench/incidents16)
_JOURNAL = re.compile(rf"^(?:\s+(?:[A-Z]{{2,5}}|[+-]\d{{2}}:?\d{{2}}))?\s+[-–—]\s+(?P<who>{_NAME}){_ROLE}\s*$")
# GitHub's issue page copied as text bolds the handle: "**hannah-vogt** commented on Apr 7, 2025" (bench/incidents14)
_TRACKER = re.compile(rf"^(?P<b>\*\*|__)?(?P<who>{_NAME})(?(b)(?:\*\*|__)) (?:added a comment|commented|made changes)(?: on)?\s*[-–—,]?\s*"
                      r"(?P<time>\S.*\d.*)$")
# "Comment by Noor Haddad [ 06/May/24 7:50 AM ]" (Jira's printable view and XML/Word exports), "Note by X (date)"
_BY = re.compile(rf"^(?:Comment|Note|Work note|Update|Reply) by (?P<who>{_NAME}){_ROLE}\s*[\[(]\s*(?P<time>[^\])]*\d[^\])]*?)"
                 r"\s*[\])]\s*:?$", re.I)


# A help desk's printed view names the post's kind first: "Internal note -- Jesper Holm  (Mar 4, 2025, 09:05 CET)"
# ... or Help Scout's "Note · Lowri Pugh (Jul 8, 2025, 10:03 UTC)" (bench/incidents44)
_KIND_FIRST = r"(?:(?:Internal|Private|Public) (?:note|reply|comment)\s*(?:[-–—:]+\s*)|(?:Note|Reply|Internal note) · )"
# GitLab's issue page copied as text: "Priya Raman @praman · 2 weeks ago" over the author's role ("Maintainer"), and
# its system notes, "Marek Novák @mnovak closed 1 week ago" (bench/incidents20); pasted as Markdown, the name in bold
# and the author's role after it: "**Odile Marchetti** @odile.m · Maintainer · 2025-03-03 16:02" (bench/incidents21)
_WHEN = (r"(?:about |over |almost |less than )?(?:\d+|an?|one) \w+ ago"  # "2 weeks ago", "about 1 month ago"
         r"|(?:on )?(?:\d{4}-\d{2}-\d{2}|\d{1,2} \w{3,9},? \d{4}|\w{3,9} \d{1,2},? \d{4}|\d{1,2}/\d{1,2}/\d{2,4})\b.*")
_GITLAB = re.compile(rf"^(?P<b>\*\*|__)?(?P<who>{_NAME})(?(b)(?:\*\*|__)) @[\w.-]+(?: ·(?: [A-Z][\w ]{{1,30}} ·)?| (?:mentioned|closed|reopened|changed|added|removed|assigned|"
                     r"unassigned|marked|set|created|requested|approved|merged|made|linked)\b.*?)\s+"
                     rf"(?P<time>{_WHEN})$")
_AGO = re.compile(r"^(?:about |less than )?(\d+|an?|one) (minute|hour|day|week)s? ago$")
_UNIT_DAYS = {"minute": 0, "hour": 0, "day": 1, "week": 7}
_AS_OF = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")


def as_of(header: str) -> str:
    """The date a page was copied on, from its header ("… (copied from the web UI on 2025-02-28)"): its one ISO
    date; "" for a header with none or several."""
    found = _AS_OF.findall(header)
    return "-".join(found[0]) if len(found) == 1 else ""


def dated(when: str, copied: str) -> str:
    """A tracker's relative time ("2 weeks ago", "3 days ago") as the day it was, counted back from the date the page
    was ``copied`` on (``as_of``), so a comment finds the log lines of its days; ``when`` as given when it is no
    relative time or there is no date to count from. Not "about 1 month ago" nor "over 2 years ago": a tracker says
    that of anything from four weeks to six, and the day it names could be a week off (a comment placed before the
    failure it answers; bench/incidents20's Redmine page)."""
    m = _AGO.match(when.strip())
    if not m or not copied:
        return when
    count = 1 if m.group(1) in ("a", "an", "one") else int(m.group(1))
    try:
        day = date.fromisoformat(copied) - timedelta(days=count * _UNIT_DAYS[m.group(2)])
    except (ValueError, OverflowError):
        return when
    return day.isoformat()


# Redmine's journal: "#note-4  Updated by Ingrid Solberg about 1 month ago", "Updated by X on 2025-03-04 10:12"
# The GitHub CLI's `gh issue view N --comments`: "mira-halvorsen (Member) • May 12, 2025", "… • Newest comment" after
# the day, the comment indented under it (bench/incidents27)
_GH_CLI = re.compile(rf"^(?P<who>{_HANDLE}) \((?:Member|Owner|Collaborator|Contributor|None|First-time contributor)\)"
                     r"(?: \[[^\]]{1,20}\])? • (?P<time>[A-Z][a-z]{2,8} \d{1,2}, \d{4})(?: • .{1,30})?$")
# An incident tool's export: "#10 by Mareike Brandt at 2025-06-11 10:20 CEST:" over the comment (bench/incidents27)
_NUMBERED_BY = re.compile(rf"^#\d{{1,4}} by (?P<who>{_NAME}) (?:at|on) (?P<time>[^()]*?\d{{1,2}}:\d{{2}}[^()]*?):?$")
# Trac's ticket page, copied: "comment:7 Changed 2025-06-03T15:05:17Z by tmbeki", "Changed 3 days ago by tmbeki" over
# what it says (bench/incidents44)
_TRAC = re.compile(rf"^(?:comment:\d{{1,4}}\s+)?(?:Changed|Modified)\s+(?P<time>\S.*?\d.*?)\s+by\s+"
                   rf"(?P<who>{_NAME})\s*$")
# OpenProject's activity, copied: "#3  Owen Madoc  commented on 07/08/2025 08:31 AM", "#1  Service Desk (sd.bot)
# created on …", "#8  Elin Hargreaves  updated on …" over what it says, indented (bench/incidents42)
_ACTIVITY = re.compile(rf"^#\d{{1,4}}\s{{2,}}(?P<who>{_NAME}){_ROLE}\s{{2,}}(?:commented|updated|created|changed)"
                       r" on (?P<time>\S.*\d{1,2}:\d{2}(?: ?[AaPp][Mm])?)\s*$")
# Zammad's ticket zoom, copied: "Gareth Pryce · via email · 10.03.2025 08:21", "Ines Rutter · internal note · …"
_ZAMMAD = re.compile(rf"^(?P<who>{_PERSON}) · (?:via [\w -]{{2,20}}|internal note|note|phone) · "
                     r"(?P<time>\d{1,2}\.\d{1,2}\.\d{4},? \d{1,2}:\d{2})$")
# Linear's issue page copied from the browser: "Tomás Arriaga · Oct 6, 2025, 8:58 AM" over the comment, and its
# activity, "Inês Caldeira changed status from Done to Todo · Oct 15, 2025, 10:09 AM", "Sentry linked ROOMHOLD-2F1 …
# · 312 events · Oct 6, 2025, 8:52 AM" (bench/incidents29)
# ... and Basecamp's, with no year: "Fenna Ruiz · May 12 at 8:09am (edited)" (bench/incidents40)
# ... and Jira Service Management's queue exported as text, the post's kind after the time: "Nadia Farrell ·
# 08/Oct/24 10:34 AM · Internal note", "… · Reply to customer" (bench/incidents47)
# ... and Freshdesk's, the weekday first: "Dafydd Morgan added a private note · Tue, 5 Nov 2024 at 8:44 AM", and
# Freshservice's printed ticket, a double dash before it: "Priya Venkatesh added a private note -- Mon, 11 Mar 2024
# 10:41 AM", "Workflow Automator -- Fri, 15 Mar 2024 05:00 PM" (bench/incidents34)
_DOTTED = re.compile(rf"^(?P<who>{_NAME})(?: [a-z][\w-]*\b[^·]*?)?(?: · [^·]{{1,40}})? (?:·|--|—) (?P<time>(?:[A-Z][a-z]{{2}}, )?(?:[A-Z][a-z]{{2,8}} \d{{1,2}}|"
                     r"\d{1,2} [A-Z][a-z]{2,8})(?:,? \d{4})?,? (?:at )?\d{1,2}:\d{2}(?: ?[AaPp][Mm])?"
                     r"|\d{1,2}/[A-Z][a-z]{2}/\d{2,4} \d{1,2}:\d{2}(?: ?[AaPp][Mm])?)(?:\s*\((?:edited|updated)\))?"
                     r"(?: · [A-Z][a-z]+(?: [a-z]+){0,3})?$")
# An IRC client's log: irssi's "10:05 < ruth> …", "08:52 <+promrelay> …" (the nick's mode before it), weechat's
# "10:05:11 <ruth> …" (bench/incidents40)
# osTicket's print view heads each thread entry with its time, the poster and the entry's kind: "04/08/25 10:11 am
# Mateo Okafor   [Internal Note]", "… SYSTEM   [Event]" (bench/incidents42)
_POSTED = re.compile(rf"^(?P<time>(?:\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}),? \d{{1,2}}:\d{{2}}(?::\d{{2}})?(?: ?[AaPp][Mm])?)"
                     rf"\s{{2,}}(?P<who>{_NAME})\s{{2,}}\[[A-Z][A-Za-z ]{{1,24}}\]$")
_IRC = re.compile(r"^(?P<time>\d{1,2}:\d{2}(?::\d{2})?)\s+<[ @+%&~]?(?P<who>[^\s<>]{1,30})>\s+\S")
# Phabricator's task page copied from the browser runs the story and its time together: "daniel.oyelaran added a
# comment.Nov 5 2025, 8:03 AM", "kofi.mensah created this task.Nov 12 2025, 10:02 AM" (bench/incidents29)
_PHABRICATOR = re.compile(rf"^(?P<who>{_NAME}) [a-z][^\n]{{0,160}}?\.(?P<time>[A-Z][a-z]{{2}} \d{{1,2}} \d{{4}}, \d{{1,2}}:\d{{2}}"
                          r"(?: ?[AP]M)?)$")
# Rocket.Chat's and Mattermost's channel copied from the browser: "Jonas Feddersen  @jonas.f  03:41", a bot's
# "alertmanager  BOT  03:30", over the message; the day stands between rules above them (bench/incidents34)
_CHAT_COPY = re.compile(rf"^(?P<who>{_PERSON}|{_HANDLE})\s{{2,}}(?:@[\w.-]+|BOT|APP|Bot|App)\s{{2,}}"
                        r"(?P<time>\d{1,2}:\d{2}(?: ?[AaPp][Mm])?)$")
# FogBugz's case events: "Opened by Ffion Parry 8/6/2024 (Tue) 9:02 AM", "Edited by …", "Resolved (Fixed) and
# assigned to X by Y …", the event's words under it, indented (bench/incidents47)
_FOGBUGZ = re.compile(rf"^(?:[A-Z][a-z]+(?: \([A-Za-z ]{{1,30}}\))?(?: and assigned to [^\n]{{1,40}}?| to [^\n]{{1,40}}?)?) by (?P<who>{_NAME}) "
                      r"(?P<date>\d{1,2}/\d{1,2}/\d{4}) \([A-Z][a-z]{2}\) (?P<clock>\d{1,2}:\d{2} ?[AP]M)$")
# Request Tracker's ticket history, printed: "Thu May 22 10:06:20 2025  dkovac - Comments added", "… RT_System -
# Outgoing email recorded" over the entry's words, indented (a C clock's date, then who, then what happened)
_RT = re.compile(r"^\s*(?P<time>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})\s{2,}"
                 r"(?P<who>[^\s]{1,60}) - [A-Z][a-z]+(?: [\w#'-]+){0,6}$")
_REDMINE = re.compile(rf"^(?:#note-\d+\s+)?Updated by (?P<who>{_NAME})\s+(?P<time>{_WHEN})$")
# An e-mail's quote header, "On Tue, 4 Mar 2025 at 08:12, Arjen de Wit <…> wrote:": what follows it is quoted
_WROTE = re.compile(r"^On .{5,120}\bwrote:\s*$")


# "Jana Novak - 2024-06-02 13:20:", "Marco Bellini, 2 Jun 2024 14:06", "ops-bot (2024-06-02 14:40):" (a header alone)
# Freshdesk and Zendesk put the post's kind first: "[Private note] Hamid Serrano - Mon, 8 Jul 2024 at 09:38 AM"
_NAME_TIME = re.compile(rf"^(?:\[[A-Za-z][A-Za-z ]{{1,20}}\]\s+|{_KIND_FIRST})?(?P<who>{_NAME}){_ROLE}\s*(?:[-–—,]\s*|\(\s*)(?P<time>[^()]*\d[^()]*?)\)?"
                        r"(?:\s*\([^()]{1,30}\))?\s*:?\s*$")  # "…, 08:05 (internal note)": Zendesk's kind after the time


# A name, two spaces or more, then the date as a tracker prints it, as a help desk's export lays a post's header out:
# "Tomás Ferreira  Feb 13, 2025, 09:41 GMT  (internal note)" (Zendesk; bench/incidents16). The name in capitals, not
# a handle: a table's row ("node-1  2024-05-01 10:00") is no one speaking.
# Shortcut's story page lays its comments and activity out the same way: "Freya Lindqvist   Sep 22, 2025 at 9:41 am",
# "Bo Kjærgaard created this Story   Sep 22, 2025 at 9:24 am", its bot "GitHub   Sep 22, …" (bench/incidents29)
_SPACED = re.compile(rf"^(?P<who>{_CAPITALISED}(?: {_CAPITALISED}){{0,3}})(?: [a-z][\w-]*\b[^\t]*?)?\s{{2,}}"
                     r"(?P<time>[^()]*\d[^()]*?)(?:\s*\([^()]{1,30}\))?\s*$")


_ADDRESS = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")
_CLOCK_ONLY = re.compile(r"^\d{1,2}:\d{2}(?: ?[AaPp][Mm])?\s*$")
# A header's date as trackers print it, not as logs do: "Mon, 8 Jul 2024 at 09:38 AM"
_DATE = re.compile(r"(?:\b\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?,?|"
                   r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2},?)\s+\d{4}\b\D{0,8}\d{1,2}:\d{2}"
                   # Jira's "02/Apr/25 09:04 AM" ("Marta Sokolowska - 02/Apr/25 09:04 AM", its Comments export)
                   r"|\b\d{1,2}/(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/\d{2,4}\s+\d{1,2}:\d{2}")


# A header drawn between rules: "--- comment by Dami Okafor (2024-07-21 09:21) ---", "=== Jana Novak, 2 Jun ==="
_FRAMED = re.compile(r"^\s*[-=~#*_]{2,}\s+(?P<core>\S.*?\S)\s+[-=~#*_]{2,}\s*$")
# ... or led by one: "---- Callum Reid · Private comment · 10 Sep 2024 08:37 AM" (Zoho Desk's thread; bench/incidents47)
_LED = re.compile(r"^\s*[-=~*_]{3,}\s+(?P<core>[A-Z]\S*(?: \S+){1,12})\s*$")


# Bugzilla's comment header, "Comment 3 Dorota Kwiatek 2025-03-18 09:45:20 UTC", and its description's, the name and
# the time alone (bench/incidents22)
_BUGZILLA = re.compile(rf"^(?:Comment \d+\s+)?(?P<who>{_PERSON})\s+(?P<time>\d{{4}}-\d{{2}}-\d{{2}} \d{{1,2}}:\d{{2}}"
                       r"(?::\d{2})?(?:\s+(?:[A-Z]{2,5}|[+-]\d{2}:?\d{2}))?)$"
                       # ... and MantisBT's note, its number, the reporter's login and access level first: "(0021904)
                       # amaru.quispe (developer) 2025-09-16 09:40" (bench/incidents36)
                       rf"|^\(\d{{4,8}}\) (?P<login>{_HANDLE}) \((?:viewer|reporter|updater|developer|manager|"
                       r"administrator)\) (?P<at>\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}(?::\d{2})?)$")
# A header of two lines: the name, then the time alone, as Jira Cloud's activity copies ("Katja Ferreira" over
# "6 May 2025 at 11:15 (edited)"; bench/incidents22)
NAME_ALONE = re.compile(rf"^(?P<who>{_PERSON})$")
TIME_ALONE = re.compile(r"^(?P<time>(?:\d{1,2} [A-Z][a-z]{2,8},? \d{4}|[A-Z][a-z]{2,8} \d{1,2}(?:,? \d{4})?|\d{4}-\d{2}-\d{2})"
                         r",?(?: at)? \d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?|(?:about )?\d+ \w+ ago|yesterday at "
                         r"\d{1,2}:\d{2})(?:\s*\((?:edited|updated)\))?$")
GROUP_MARK = re.compile(r"^(?:unread|read),?$")  # a mailing list archive's mark between a post's name and time
ADDRESSED = re.compile(r"^to [\w.@-]+(?:, [\w.@-]+)*$")  # ... and whom the post went to, under its time
# An article's or an e-mail's header fields, one to a line: "From:     Jonas Brenner", "Subject:  Note", "Created:
# 2025-04-14 08:05:37" (a help desk's ticket print, OTRS/Znuny; bench/incidents22)
FIELD_LINE = re.compile(r"^(?P<key>From|To|Cc|Subject|Date|Created|Sent|Channel|Sender|Type)\s*:\s*(?P<value>.*)$", re.I)
_TIME_KEYS = ("date", "created", "sent")


def header(lines: list[str]) -> tuple[str, str] | None:
    """(time, author) of a header over several lines: a name over the time alone (``NAME_ALONE``, ``TIME_ALONE``),
    or an article's fields (``FIELD_LINE``) with a sender and a time; None for any other lines."""
    # (Google Groups copies a post's header as the name, "unread,", the time and "to platform-oncall";
    # bench/incidents44: the marks around the name and time say nothing)
    said = [x for x in lines if not GROUP_MARK.match(x)]
    said = said[:-1] if len(said) == 3 and len(lines) > 3 and ADDRESSED.match(said[-1]) else said
    if len(said) == 2 and (who := NAME_ALONE.match(said[0])) and (when := TIME_ALONE.match(said[1])):
        return when.group("time"), who.group("who")
    fields = [FIELD_LINE.match(x) for x in lines]
    if len(lines) < 2 or not all(fields):
        return None
    got = {m.group("key").lower(): m.group("value").strip() for m in fields}
    when = next((got[k] for k in _TIME_KEYS if got.get(k)), "")
    who = re.sub(r"\s*<[^>]*>\s*$", "", got.get("from", "")).strip().strip('"')
    return (when, who) if when and who else None


def speaker(line: str) -> tuple[str, str] | None:
    """(time, author) of a line that is someone speaking (or of a header over several, ``header``); None for a log
    line or any other."""
    if "\n" in line:
        return header(line.split("\n"))
    if framed := _FRAMED.match(line) or _LED.match(line):
        line = framed.group("core")
    if _WROTE.match(line):
        return None
    m = (_GITLAB.match(line) or _REDMINE.match(line) or _GH_CLI.match(line) or _NUMBERED_BY.match(line)
         or _ACTIVITY.match(line) or _TRAC.match(line)
         or _ZAMMAD.match(line) or _DOTTED.match(line) or _PHABRICATOR.match(line) or _CHAT_COPY.match(line)
         or _IRC.match(line) or _POSTED.match(line) or _RT.match(line))
    if m and not level_of(line[:m.end("who")]):
        return m.group("time").strip(), m.group("who")
    if m := _FOGBUGZ.match(line):
        return f"{m.group('date')} {m.group('clock')}", m.group("who")
    m = _BRACKET.match(line) or _BRACKET_ALONE.match(line)
    if m and not level_of(line[:m.end("who")]):
        return m.group("time"), m.group("who")
    m = _TRACKER.match(line) or _BY.match(line) or _BUGZILLA.match(line)
    if m:
        return (m.group("at"), m.group("login")) if m.groupdict().get("login") else (m.group("time").strip(),
                                                                                     m.group("who"))
    m = _NAME_TIME.match(line)  # (a letter alone is Ruby Logger's level: "I, [2025-05-14T10:22:30.004112 #12] …")
    if m and (time_of(m.group("time")) or _DATE.search(m.group("time"))) and not level_of(m.group("who")) \
            and len(m.group("who")) > 1 and not _ADDRESS.search(m.group("time")):  # (a header's "X-Forwarded-For:
        # 10.20.31.77" is no one speaking at a dotted date)
        return m.group("time").strip(), m.group("who")
    m = _SPACED.match(line)
    if m and (_DATE.search(m.group("time")) or (_CLOCK_ONLY.match(m.group("time")) and " " in m.group("who"))) \
            and not level_of(m.group("who")):  # (Zulip's and Slack's copied page: "Lena Hartmann  04:21", a full name
        return m.group("time").strip(), m.group("who")  # and a clock, under the day; bench/incidents36)
    time = time_of(line)
    if not time:
        return None
    rest_at = line.index(time) + len(time)
    rest = line[rest_at:]
    m = _JOURNAL.match(rest)
    if m:
        return time, m.group("who")
    m = _AFTER_TIME.match(rest)
    if m and not level_of(line[:rest_at + m.end("who")]):
        return time, m.group("who")
    return None
