"""Jira/Confluence wiki markup saved as text reads as the page it renders (bench/incidents30's review page): "h2."
headings, "||header||" tables and their rows, a box of rows with no header, {noformat}/{code} blocks, macros that
only frame ({panel}, {info}, {status}, {{mono}}, [~user], *bold*), each line at its file line; a page of two reviews
is two incidents, each with its own fix, and a decision not to act is no fix."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.incidents.cues import DECIDED_AGAINST
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect

PAGE = """\
h1. Incident reviews - May 2025

{info}Page owner: [~h.lindqvist]. One section per incident.{info}

{toc:maxLevel=2}

----

h1. REL-INC-041: image builds failing on apt signature check (2025-05-06)

{panel:title=At a glance|borderStyle=solid}
||Field||Value||
|Status|{status:colour=Green|title=Resolved}|
|Ticket|{jira:REL-1182}|
{panel}

h2. What we saw

{noformat}
#7 2.913 W: GPG error: https://apt.example.internal/stable jammy InRelease: The following signatures were invalid: EXPKEYSIG 6A1F0C23D4B7E915
#7 ERROR: process "/bin/sh -c apt-get update" did not complete successfully: exit code: 100
{noformat}

h2. Timeline (CEST)

||Time||What happened||
|07:52|Suspect: the Artifactory remote. Remote cache purged.|
|08:10|No difference. Artifactory ruled out.|
|09:40|Subkey validity extended, repository re-signed.|

h2. Root cause

The repository signing subkey was created with a two-year validity and expired on 2025-05-06.

h2. Resolution

* On the signing host, {{gpg --quick-set-expire 5B0E 2y '*'}} extended the subkey to 2027-05-06.

We did *not* put {{[trusted=yes]}} on the sources line, not even for an hour.

----

h1. REL-INC-044: artifact-indexer crash loop (2025-05-20)

h2. What we saw

{code:java}
java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached
{code}

h2. Resolution

artifact-indexer 3.9.1 (PR !2291) replaces the per-call pool with one shared 8-thread ExecutorService bean.

We did not roll back to 3.8.4: it lacks the fix for the corrupted index entries.
"""


def _page(tmp_path):
    f = tmp_path / "REL-incident-reviews.txt"
    f.write_text(PAGE, encoding="utf-8")
    return f


def _line(needle: str) -> int:
    return next(n for n, x in enumerate(PAGE.split("\n"), 1) if needle in x)


def test_wiki_markup_reads_as_the_page_it_renders(tmp_path):
    f = _page(tmp_path)
    assert detect(f) == "wiki"
    recs = list(records(f))
    said = {r.text: r for r in recs}
    assert "Field: Status; Value: Resolved" in said and "Field: Ticket; Value: REL-1182" in said
    row = next(r for r in recs if "Subkey validity extended" in r.text)
    assert row.kind == "table_row" and row.time == "09:40" and row.line_start == _line("|09:40|")
    assert row.headings[-2:] == ("REL-INC-041: image builds failing on apt signature check (2025-05-06)", "Timeline (CEST)")
    code = next(r for r in recs if r.kind == "code" and "EXPKEYSIG" in r.text)
    assert code.line_start == _line("{noformat}") and "{noformat}" not in code.text
    fix = next(r for r in recs if "extended the subkey" in r.text)
    assert fix.text == "- On the signing host, gpg --quick-set-expire 5B0E 2y '*' extended the subkey to 2027-05-06."
    assert not any("{info}" in r.text or "{toc" in r.text or "[~" in r.text for r in recs)
    assert next(r for r in recs if "trusted=yes" in r.text).text.startswith("We did not put [trusted=yes]")


def test_a_page_of_two_reviews_is_two_incidents_each_with_its_fix(tmp_path):
    f = _page(tmp_path)
    cards = [build_card(i) for i in incidents({f.name: list(records(f))})]
    apt = next(c for c in cards if any("EXPKEYSIG" in x.text for x in c.symptoms))
    jvm = next(c for c in cards if any("unable to create native thread" in x.text for x in c.symptoms))
    assert apt is not jvm
    assert any("extended the subkey" in x.text for x in apt.actions)
    assert any("ExecutorService" in x.text for x in jvm.actions)
    assert not any("trusted=yes" in x.text or "did not roll back" in x.text for c in cards for x in c.actions)


def test_a_decision_not_to_act_is_no_fix():
    assert DECIDED_AGAINST.search("We did not roll back to 3.8.4: it lacks the fix")
    assert not DECIDED_AGAINST.search("We did not see errors after the restart")


def test_two_wiki_headings_make_a_txt_wiki_and_one_does_not(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("h2. Summary\n\nSomething broke.\n", encoding="utf-8")
    assert detect(f) == "text"
