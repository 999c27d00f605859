"""The incident suites' labels: exact substrings of their streams, probes that are new text, a real split."""

from __future__ import annotations

from collections import Counter

import pytest

from bench import hybrid, incident_suite
from bench.incident_suite import SUITE, SUITES, load, score, stream_lines

QUESTION, INCIDENTS = load()
ALL = [(folder, inc) for folder, _ in SUITES for inc in load(folder)[1]]


def test_the_suite_has_its_size_formats_and_both_splits():
    assert len(INCIDENTS) >= 24
    assert len({i.id for i in INCIDENTS}) == len(INCIDENTS)
    formats = Counter(i.format for i in INCIDENTS)
    assert len(formats) >= 6 and min(formats.values()) >= 4, formats
    splits = Counter(i.split for i in INCIDENTS)
    assert set(splits) == {"dev", "test"} and abs(splits["dev"] - splits["test"]) <= 4, splits
    assert QUESTION.strip()


@pytest.mark.parametrize("folder, inc", ALL, ids=lambda x: getattr(x, "id", getattr(x, "name", "")))
def test_labels_are_exact_substrings_and_every_incident_has_probes(folder, inc):
    text = (folder / inc.stream).read_text(encoding="utf-8")
    decoded = "\n".join(stream_lines(folder / inc.stream))  # a JSON export's strings, unescaped
    for role in ("symptom", "cause", "fix"):
        labels = getattr(inc, role)
        assert labels, f"{inc.id}: no {role}"
        where = inc.fix_stream if role == "fix" and inc.fix_stream else inc.stream
        told = (folder / where).read_text(encoding="utf-8"), "\n".join(stream_lines(folder / where))
        for label in labels:
            assert any(label in t for t in told), f"{inc.id}: {role} {label!r} is not in {where}"
    assert inc.ask.strip() and 1 <= len(inc.probes) <= 2, inc.id
    for probe in inc.probes:  # the same error next time: never a copy of a line of the stream
        assert probe not in text, f"{inc.id}: probe copies the stream"


@pytest.mark.parametrize("folder", [folder for folder, _ in SUITES], ids=lambda f: f.name)
def test_every_suite_has_unique_ids_and_streams_that_exist(folder):
    question, incidents = load(folder)
    assert question.strip() and len({i.id for i in incidents}) == len(incidents) >= (7 if folder.name == "incidents18"
                                                                                   else 10)
    assert all((folder / i.stream).is_file() for i in incidents)
    if folder.name in ("incidents5", "incidents6"):  # the supplements of multi-incident files: 12 incidents each
        streams = {i.stream for i in incidents}
        assert all(sum(i.stream == s for i in incidents) >= 2 for s in streams)  # each holds several
    elif folder.name == "incidents15":  # the held-out streams' six formats, two incidents each
        assert len({i.format for i in incidents}) == 6 and len(incidents) == 12
    elif folder.name in ("incidents11", "incidents12", "incidents13", "incidents14", "incidents16", "incidents20"):
        # 3 formats (incidents20: Java logs under GitLab, Redmine and Zendesk threads, postmortems, PagerDuty)
        assert len({i.format for i in incidents}) == 3
    elif folder.name in ("incidents17", "incidents19", "incidents21"):  # PagerDuty Markdown, postmortems, a chat or
        # a shell, issues (incidents21: issues, shell, a FireHydrant-style review, a Discord export)
        assert len({i.format for i in incidents}) == 4
    elif folder.name == "incidents18":  # Java logs under a pasted GitHub issue, a Jira export and ServiceNow notes
        assert {i.format for i in incidents} == {"java"} and len({i.stream for i in incidents}) == 3
    elif folder.name in ("incidents22", "incidents23", "incidents25", "incidents27"):  # Java logs under Jira Cloud, YouTrack,
        # Bugzilla and OTRS threads; under GitHub, Linear, ServiceNow, Redmine and mailing-list threads; under Jira
        # Server, PagerDuty, Zendesk, Azure DevOps, Teams, Opsgenie and Trello
        assert {i.format for i in incidents} == {"java"} and len({i.stream for i in incidents}) == 4
    elif folder.name in ("incidents32", "incidents33"):  # Slack day files and GitHub issues JSON; shell sessions
        # and Markdown reviews
        assert len({i.format for i in incidents}) == 2 and len({i.stream for i in incidents}) == 5
    elif folder.name in ("incidents29", "incidents34"):  # JVM logs under Linear, Outlook threads, Shortcut and
        # Phabricator; under Freshservice, Taiga, Rocket.Chat and PR reviews
        assert {i.format for i in incidents} == {"applog"} and len({i.stream for i in incidents}) == 4
    elif folder.name == "incidents28":  # PagerDuty Markdown and shell sessions, five streams
        assert {i.format for i in incidents} == {"pagerduty", "shell"} and len({i.stream for i in incidents}) == 5
    elif folder.name in ("incidents24", "incidents26", "incidents30", "incidents35"):  # postmortems: SRE-style, Atlassian-style, an
        # e-mail, a digest, reST; a status page, Notion, a Google Doc as text, a blog post, a quarterly log; a COE,
        # Confluence wiki markup, a forum, minutes, Org-mode notes, an incident log (six streams)
        assert {i.format for i in incidents} == {"postmortem"}
        assert len({i.stream for i in incidents}) == (6 if folder.name in ("incidents30", "incidents35") else 5)
    elif folder.name in ("incidents36", "incidents37", "incidents38", "incidents39", "incidents40", "incidents42",
                         "incidents43"):  # one format each, in layouts none of the others used (incidents42: JVM
        # logs whose incidents share exception classes; incidents43: incident tools' Markdown exports): JVM logs under
        # JSM, RT, Mailman, GLPI, Mantis and Zulip; on-call
        # tools' exports (PagerDuty log entries, Opsgenie dumps, Grafana OnCall, a Statuspage feed, a war room,
        # Rootly); shell recordings (asciinema, zsh with powerlevel10k, an ssh jump, tmux captures, history with
        # notes); trackers' REST answers (Jira, GitLab notes, Bugzilla, YouTrack, Redmine, Azure DevOps); non-JVM
        # logs (Python, Go, Node, .NET, Rails, Rust) under Sentry, IRC, ClickUp, Google Chat, Basecamp, Telegram
        assert len({i.format for i in incidents}) == 1 and len({i.stream for i in incidents}) in (5, 6)
    elif folder.name == "incidents41":  # write-ups: AsciiDoc, MediaWiki, a saved .eml reply, an ops review, pipe-table
        # timelines, a Jeli-style investigation
        assert {i.format for i in incidents} == {"postmortem", "pagerduty"} and len({i.stream for i in incidents}) == 6
    elif folder.name == "incidents44":  # JVM logs, each with the comment stream pasted under it (Trac, Help Scout,
        # Google Groups, TOPdesk, WhatsApp, todo.sr.ht)
        assert {i.format for i in incidents} == {"log"} and len({i.stream for i in incidents}) == 6
    elif folder.name == "incidents47":  # JVM logs with their tickets or chat, the ticket first in some
        assert {i.format for i in incidents} == {"java"} and len({i.stream for i in incidents}) == 6
    elif folder.name in ("incidents45", "incidents46"):  # timelines and postmortems in Markdown and text; GitHub
        # issues as JSON and kubectl/helm/argocd/terraform shell sessions
        assert len({i.format for i in incidents}) == 2 and len({i.stream for i in incidents}) == 6
    elif folder.name == "incidents31":  # Trello and Asana JSON, Confluence HTML, Matrix and Teams JSON, a timeline CSV
        assert {i.format for i in incidents} == {"tracker", "wiki", "chat", "timeline"}
        assert len({i.stream for i in incidents}) == 6
    else:  # incidents7 to incidents10, the held-out streams' formats again, are supplements of 17 or 18
        assert len(incidents) >= (15 if folder.name in ("incidents7", "incidents8", "incidents9", "incidents10")
                                  else 20)
        assert len({i.format for i in incidents}) >= (2 if folder.name in ("incidents9", "incidents10") else 5)


def test_a_recurrence_names_its_twin_and_the_twins_fix_differently():
    by_id = {i.id: i for i in INCIDENTS}
    twins = [i for i in INCIDENTS if i.recurs_with]
    assert twins
    for inc in twins:
        other = by_id[inc.recurs_with]
        assert other.recurs_with == inc.id and other.stream != inc.stream
        assert not set(inc.fix) & set(other.fix)


def test_scoring_counts_the_own_fix_and_flags_another_incidents_fix():
    a, b = INCIDENTS[0], INCIDENTS[1]
    assert score(f"noise\n{a.fix[0]}\n", a, INCIDENTS) == (True, False)
    assert score(f"{b.fix[0]}", a, INCIDENTS) == (False, True)
    twin = next(i for i in INCIDENTS if i.recurs_with)
    other = next(i for i in INCIDENTS if i.id == twin.recurs_with)
    assert score(other.fix[0], twin, INCIDENTS) == (False, False)  # the twin's own fix is no confusion


def test_baseline_lines_hold_every_fix_of_their_stream():
    """The baselines read chat and CSV streams as text: every fix is reachable by them."""
    for inc in INCIDENTS:
        lines = "\n".join(stream_lines(SUITE / inc.stream))
        assert incident_suite.holds(lines, inc.fix), inc.id


def test_the_hybrid_fills_within_budget_and_mixes_neighbours():
    from poimen.embedding.embedders import HashEmbedder

    units = ["disk full on db-1", "raised the volume to 2TB", "unrelated chatter", "lunch at noon"]
    corpus = hybrid.HybridCorpus(units, ["a", "a", "a", "b"], HashEmbedder())
    alone = corpus.scores("disk full", 1.0, 0.0)
    mixed = corpus.scores("disk full", 1.0, 0.5)
    assert alone[1] == 0.0 and mixed[1] > 0.0  # the fix line under the error inherits from it
    assert mixed[3] == alone[3]  # another stream's unit is no neighbour
    text = hybrid.fill_text(corpus.ranked("disk full", 1.0, 0.5), units, 12)
    assert text.splitlines()[0] == "disk full on db-1" and sum(hybrid.line_cost(x) for x in text.splitlines()) <= 12


def test_a_fix_holds_as_a_reader_sees_it_with_inline_code_marks_left_out():
    """A wiki page's "<code>fsid=7</code>" is shown as "`fsid=7`" (bench/incidents41): the same fix, as read."""
    assert incident_suite.holds("fix: Put `fsid=7` back on the export line", ["Put <code>fsid=7</code> back"])
    assert not incident_suite.holds("fix: Put `fsid=8` back on the export line", ["Put <code>fsid=7</code> back"])
