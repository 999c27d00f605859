"""Held-out incident streams: written before any cue in ``poimen.incidents.roles`` existed, and never tuned on.

If a test over these fails, the fix is a cue that is generic on-call English (added to the docstring lists of
``poimen.incidents.cues``), never a cue that names this wording. Two formats the tuning fixtures do not use: a
plain-text postmortem with its own section names, and a GitHub issue with comments.
"""

from __future__ import annotations

from poimen.inputs.records import Record

POSTMORTEM_STREAM = "postmortems/2024-03-media.md"


def _para(text: str, line: int, *headings: str) -> Record:
    return Record(text=text, line_start=line, line_end=line, kind="paragraph", headings=headings)


TITLE = "Postmortem: media uploads failing"
POSTMORTEM = (
    _para("On 2024-03-02 between 14:05 and 15:40 UTC, image uploads to media-svc returned HTTP 502 for roughly 30% "
          "of users.", 3, TITLE, "Summary"),
    _para("Initial suspicion fell on the CDN cache purge that ran at 13:50; it was ruled out after the errors "
          "persisted with the CDN bypassed.", 7, TITLE, "Investigation"),
    _para("Memory graphs for media-svc-6c8d9f7b5-qw2lz showed the container hitting its 512Mi limit and being "
          "OOMKilled every few minutes.", 9, TITLE, "Investigation"),
    _para("The underlying problem was that thumbnail generation loaded full-resolution images into memory after "
          "the libvips upgrade to 8.15.", 11, TITLE, "Investigation"),
    _para("Raised the memory limit for media-svc to 1Gi and set VIPS_CONCURRENCY=2 (PR #4521).", 15, TITLE,
          "Remediation"),
    _para("Pinned libvips back to 8.14.2 until the streaming fix lands.", 16, TITLE, "Remediation"),
    _para("Uploads have been stable since 15:40; the 502 rate is at baseline.", 20, TITLE, "Follow-up"),
)
POSTMORTEM_CAUSE = POSTMORTEM[3].text
POSTMORTEM_FIXES = (POSTMORTEM[4].text, POSTMORTEM[5].text)
POSTMORTEM_HERRING = POSTMORTEM[1].text

ISSUE_STREAM = "github/issues.json"


def _issue(text: str, line: int, kind: str, time: str, author: str, number: str) -> Record:
    return Record(text=text, line_start=line, line_end=line + 2, kind=kind, time=time, author=author, thread=number)


ISSUES = (
    _issue("Scheduler jobs stuck in PENDING after upgrade to v2.3.0\nSince this morning, cron jobs on sched-worker-2 "
           "never leave PENDING. Logs show `ERROR lock acquisition timed out after 30s (key=jobs:lease)`.",
           10, "ticket", "2024-05-14T08:12:00Z", "amira", "#812"),
    _issue("Could this be the clock skew alert from ntp on the same hosts?", 14, "comment",
           "2024-05-14T08:40:00Z", "jo", "#812"),
    _issue("Clock skew is unrelated, it fired on hosts that run fine too.", 18, "comment",
           "2024-05-14T09:02:00Z", "amira", "#812"),
    _issue("Found it: v2.3.0 changed the default lease TTL, so leases from the old workers never expire.", 22,
           "comment", "2024-05-14T10:30:00Z", "dev-k", "#812"),
    _issue("Workaround: set scheduler.lease_ttl=60s and restart the workers. Fixed properly in #815.", 26,
           "comment", "2024-05-14T10:41:00Z", "dev-k", "#812"),
    _issue("Applied the workaround on prod, jobs are draining again. Closing.", 30, "comment",
           "2024-05-14T11:15:00Z", "amira", "#812"),
    _issue("Docs: the README still mentions the old config file name\nSmall typo in the install section.", 40,
           "ticket", "2024-05-15T09:00:00Z", "lee", "#830"),
)
ISSUE_CAUSE = ISSUES[3].text
ISSUE_FIX = ISSUES[4].text
ISSUE_HERRINGS = (ISSUES[1].text, ISSUES[2].text)
