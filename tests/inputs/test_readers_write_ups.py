"""The readers on the shapes multi-incident documents and recordings take: a review's incident headings written
without markup, boxed and date-led headings, a title over its fields, indented command blocks, bold item lines in
Markdown, and a ``script`` typescript with its terminal bytes."""

from __future__ import annotations

from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect
from poimen.text.terminal import shown


def _heads(path):
    return [(r.headings, r.kind, r.text.splitlines()[0]) for r in records(path)]


def _heads_of(tmp_path, text: str, name: str = "doc.txt"):
    """The headings, kinds and first lines of a plain-text document written from ``text``."""
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return _heads(f)


def test_a_long_incident_heading_with_a_colon_opens_a_section(tmp_path):
    f = tmp_path / "digest.txt"
    f.write_text("Q2 review digest\n\nIntro paragraph about the quarter.\n\n"
                 "Incident 2: Refund jobs stuck after the database upgrade in May\n"
                 "refund-scheduler jobs hung and the queue grew.\n\n"
                 "Why\nThe upgrade reset max_connections to 100.\n", encoding="utf-8")
    heads = _heads(f)
    assert heads[2][0] == ("Q2 review digest", "Incident 2: Refund jobs stuck after the database upgrade in May")
    assert heads[3][0][1] == "Incident 2: Refund jobs stuck after the database upgrade in May"
    # a plain sentence with a colon stays prose
    assert _heads_of(tmp_path, "Title\n\nNote: we restarted it twice and it came back.\nMore text here.\n")[1][0] \
        == ("Title",)


def test_boxed_and_dated_headings_and_a_title_over_its_fields(tmp_path):
    f = tmp_path / "pir.txt"
    f.write_text("Incident report: orders-db down, then replica loss\nIncident ID: INC-2291    Date: 2024-05-27\n"
                 "Severity: SEV1\n\n"
                 "------------------------------\nChecks failing after the upgrade\n------------------------------\n"
                 "Body one.\n\n"
                 "2024-06-18 -- Billing exports stuck\n-----------------------------------\n\nBody two.\n",
                 encoding="utf-8")
    heads = [h for h, _, _ in _heads(f)]
    title = "Incident report: orders-db down, then replica loss"
    assert heads[0] == (title,)
    assert heads[1] == (title, "Checks failing after the upgrade")
    assert heads[-1] == (title, "2024-06-18 -- Billing exports stuck")


def test_a_second_underline_style_heads_the_parts_of_a_section(tmp_path):
    # A wiki page exported to text: "===" under each incident, "---" under the parts of one (setext's H1 and H2,
    # reStructuredText's order of first use), so one incident's "Resolution" never takes the place of the incident.
    f = tmp_path / "reviews.txt"
    f.write_text("Incident reviews: August\n========================\n\nIntro.\n\n"
                 "INC-1187  Partner API unreachable\n=================================\n\n"
                 "Resolution\n----------\n\nTTL cut to 300.\n\n"
                 "INC-1203  Ingest refusing connections\n=====================================\n\n"
                 "Resolution\n----------\n\nLimitNOFILE raised.\n", encoding="utf-8")
    heads = {t: h for h, _, t in _heads(f)}
    assert heads["TTL cut to 300."] == ("Incident reviews: August", "INC-1187  Partner API unreachable", "Resolution")
    assert heads["LimitNOFILE raised."] == ("Incident reviews: August", "INC-1203  Ingest refusing connections",
                                           "Resolution")


def test_an_indented_command_is_code_and_indented_prose_is_not(tmp_path):
    f = tmp_path / "pm.txt"
    f.write_text("Title\n\n08:10  Marked it out so data moves off it:\n\n           ceph osd out osd.17\n\n"
                 "       Slow ops dropped to zero within 4 minutes.\n", encoding="utf-8")
    kinds = [(k, t) for _, k, t in _heads(f)]
    assert kinds[2] == ("code", "ceph osd out osd.17")
    assert kinds[3][0] == "paragraph"


def test_a_numbered_bold_line_heads_the_labels_under_it(tmp_path):
    f = tmp_path / "review.md"
    f.write_text("# Ops review\n\n**1. Kafka consumer lag on orders (Jun 9)**\n\nLag climbed.\n\n**Root cause**\n\n"
                 "Polls too big.\n\n**2. Search results empty (Jun 21)**\n\nEmpty results.\n\n**Fix**\n\nAlias back.\n",
                 encoding="utf-8")
    heads = {t: h for h, _, t in _heads(f)}
    assert heads["Polls too big."] == ("Ops review", "1. Kafka consumer lag on orders (Jun 9)", "Root cause")
    assert heads["Alias back."] == ("Ops review", "2. Search results empty (Jun 21)", "Fix")


def test_a_typescript_reads_as_the_session_it_shows(tmp_path):
    esc = "\x1b"

    def prompt(cmd):
        return f"{esc}]0;ops@bastion: ~\x07{esc}[01;32mops@bastion{esc}[00m:{esc}[01;34m~{esc}[00m$ {cmd}"
    lines = ['Script started on 2024-06-03 09:14:02+00:00 [TERM="xterm"]',
             prompt(f"{esc}[?2004h# invoice-worker alerts firing{esc}[?2004l"),
             prompt("kubectl -n billing logs invoice-worker-7d9c8b6f5-xk2lp --previous"),
             "Error: connect ECONNREFUSED 10.4.2.17:6379",
             prompt("kubectl -n billing set env deployment/invoice-worker REDIS_URL=redis://redis.cache:6379")]
    f = tmp_path / "typescript"
    f.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    assert detect(f) == "shell"
    recs = list(records(f))
    assert [r.kind for r in recs] == ["log", "note", "command", "output", "command"]
    assert all(esc not in r.text and "\r" not in r.text for r in recs)
    assert recs[2].text.startswith("ops@bastion:~$ kubectl -n billing logs")
    assert recs[3].line_start == 4  # lineage still reaches the file line


def test_shown_drops_what_drew_the_screen():
    assert shown("plain line") == "plain line"
    assert shown("\x1b[31mERROR\x1b[0m disk full") == "ERROR disk full"
    assert shown(" 40%\r100% done\r") == "100% done"
    assert shown("lss\x08 -la") == "ls -la"


def test_a_box_with_a_line_under_its_heading_and_parts_over_indented_bodies(tmp_path):
    # a weekly review's incident: a rule, the heading, its ticket and times, a rule; then its parts, each a short line
    # over an indented body, whatever the body's first word ("Why" over "  fielddata=18.9gb is …")
    rule = "-" * 40
    f = tmp_path / "review.txt"
    f.write_text("WEEKLY INCIDENT REVIEW, WEEK 10\n\nTwo incidents this week.\n\n"
                 f"{rule}\n1. SEARCH CLUSTER REJECTING QUERIES (SEV-2)\n   INC-244, Tue 09:20 - 11:05 UTC\n{rule}\n\n"
                 "Why\n  fielddata=18.9gb is the giveaway: the template set fielddata on a text field.\n\n"
                 "What we tried that did not help\n  - Rolling restart of the two worst data nodes.\n\n"
                 "What fixed it\n  10:22  The fielddata cache cleared.\n\n"
                 f"{rule}\n2. CONSUMER STUCK IN A REBALANCE LOOP (SEV-2)\n   INC-249, Thu 06:40 - 08:55 UTC\n{rule}\n\n"
                 "Why\n  The projector calls carrier-eta for every record.\n", encoding="utf-8")
    heads = {text: h[1:] for h, _, text in _heads(f)}
    first, second = "SEARCH CLUSTER REJECTING QUERIES (SEV-2)", "CONSUMER STUCK IN A REBALANCE LOOP (SEV-2)"
    assert heads["Why"] == (first, "Why") or heads["What fixed it"] == (first, "What fixed it")
    parts = [h[1:] for h, _, _ in _heads(f)]
    assert (first, "Why") in parts and (first, "What we tried that did not help") in parts
    assert (first, "What fixed it") in parts and (second, "Why") in parts
    # a sentence over an indented continuation heads nothing
    assert _heads_of(tmp_path, "Title\n\nWe restarted it twice.\n  It came back.\n")[1][0] == ("Title",)


def test_an_underlined_heading_may_open_with_a_path(tmp_path):
    heads = [h[1:] for h, _, _ in _heads_of(
        tmp_path, "Ops review, March\n\nIntro.\n\nDunning run skipped on the DST night\n====================\n\n"
        "The cron job did not run.\n\n/var/log filling up on ledger-api hosts\n====================\n\n"
        "The log partition filled.\n")]
    assert heads[-1] == ("/var/log filling up on ledger-api hosts",)


def test_a_table_aligned_in_columns_is_rows_not_a_paragraph_or_a_heading(tmp_path):
    doc = ("Action Items\n\nType       Owner       Bug       Item\n  ---------  ----------  --------  ----------\n"
           "  mitigate   henrike     KF-3310   Lower max.poll.records (DONE)\n"
           "  prevent    joaquin     KF-3311   Batch ETA lookups (DONE in 5.14.2)\n\nLessons\n\nA sentence.\n")
    got = _heads_of(tmp_path, doc)
    rows = [(kind, first.strip()) for _, kind, first in got if kind == "table_row"]
    assert rows == [("table_row", "Type       Owner       Bug       Item"),
                    ("table_row", "mitigate   henrike     KF-3310   Lower max.poll.records (DONE)"),
                    ("table_row", "prevent    joaquin     KF-3311   Batch ETA lookups (DONE in 5.14.2)")]
    assert "Type       Owner       Bug       Item" not in {h for heads, _, _ in got for h in heads}
