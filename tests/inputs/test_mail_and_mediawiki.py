"""Two more write-up formats (bench/incidents41): an e-mail saved as .eml (a reply that corrects a postmortem and
quotes it), and a wiki page's MediaWiki source. Each is read as a reader of it sees it, each line at its file line."""

from __future__ import annotations

import base64

import pytest

from poimen.errors import SourceError
from poimen.inputs.chunking import records
from poimen.inputs.readers.detect import detect

REPLY = (
    "Return-Path: <r.iyer@ashgrove.example>\r\n"
    "Message-ID: <b2f4@ashgrove.example>\r\n"
    "Date: Thu, 14 Aug 2025 17:02:11 +0100\r\n"
    "Subject: Re: [Postmortem] Claims intake parser timeouts\r\n"
    "To: Tom Bexley <t.bexley@ashgrove.example>,\r\n"
    " eng-incidents@ashgrove.example\r\n"
    "From: Rhea Iyer <r.iyer@ashgrove.example>\r\n"
    "Content-Type: text/plain; charset=UTF-8; format=flowed\r\n"
    "Content-Transfer-Encoding: quoted-printable\r\n"
    "\r\n"
    "It was not cold starts. The subnets have no route to the internet, so the=20\r\n"
    "call to Secrets Manager hangs =E2=80=93 until the timeout kills it.\r\n"
    "\r\n"
    "Fix in PR #2231: an interface endpoint for secretsmanager in the claims V=\r\n"
    "PC, private DNS on.\r\n"
    "\r\n"
    "--=20\r\n"
    "Rhea Iyer\r\n"
    "\r\n"
    "On 12/08/2025 10:47, Tom Bexley wrote:\r\n"
    "> ROOT CAUSE (PRELIMINARY)\r\n"
    ">=20\r\n"
    "> We believe the 2.0.0 release made cold starts slower.\r\n")


def test_an_e_mail_reads_its_body_decoded_under_its_subject_by_its_sender(tmp_path):
    """Quoted-printable soft breaks joined and "=E2=80=93" decoded, each line at the file lines it came from; the
    signature under "-- " left out; the quoted postmortem read as the document it was, its "ROOT CAUSE" a heading
    again; the subject titles the message and the sender is its author."""
    p = tmp_path / "Re-postmortem.eml"
    p.write_bytes(REPLY.encode("ascii"))
    assert detect(p) == "mail"
    recs = list(records(p))
    said = [(r.line_start, r.line_end, r.text) for r in recs]
    assert said[0] == (11, 12, "It was not cold starts. The subnets have no route to the internet, so the\n"
                               "call to Secrets Manager hangs \u2013 until the timeout kills it.")
    assert said[1] == (14, 15, "Fix in PR #2231: an interface endpoint for secretsmanager in the claims VPC, private "
                               "DNS on.")
    assert not any("Rhea Iyer" == r.text for r in recs)  # the signature
    assert {r.author for r in recs} == {"Rhea Iyer"}
    assert recs[0].headings == ("Re: [Postmortem] Claims intake parser timeouts",)
    believed = next(r for r in recs if r.text.startswith("We believe"))
    assert believed.headings[-1] == "ROOT CAUSE (PRELIMINARY)" and believed.line_start == 23
    bare = tmp_path / "saved-message"  # a message saved with no suffix is one by its header block
    bare.write_bytes(REPLY.encode("ascii"))
    assert detect(bare) == "mail"


def test_a_multipart_message_reads_its_plain_part_and_a_broken_body_names_the_file(tmp_path):
    body = base64.b64encode("Raised max_connections to 400 on db-2.\n".encode()).decode()
    p = tmp_path / "multi.eml"
    p.write_text("From: ops@example.org\nSubject: db fix\nMIME-Version: 1.0\n"
                 'Content-Type: multipart/alternative; boundary="b1"\n\n--b1\n'
                 "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
                 f"{body}\n--b1\nContent-Type: text/html\n\n<p>ignored</p>\n--b1--\n", encoding="utf-8")
    assert [r.text for r in records(p)] == ["Raised max_connections to 400 on db-2."]
    bad = tmp_path / "bad.eml"
    bad.write_text("From: ops@example.org\nSubject: x\nContent-Transfer-Encoding: base64\n\n@@@\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"bad\.eml:5: invalid base64 body"):
        list(records(bad))


WIKI = """\
{{Infobox team page
| team    = Hosting Operations
}}
__TOC__

== 2025-03-04 – Control panel 502 after the SSO change ==
{| class="wikitable"
! Field !! Value
|-
| Severity || SEV-2
|-
| Ticket || {{Jira|HOPS-3310}}
|}

=== What the edge logged ===
<pre>
2025/03/04 09:06:13 [error] 31877#31877: *5520193 upstream sent too big header
</pre>

=== Resolution ===
* Edge config MR !482: the <code>panel</code> location now has <code>proxy_buffer_size 16k;</code>, by [[User:Mireille.Dufresne|Mireille]].
"""


def test_a_mediawiki_page_reads_its_headings_tables_blocks_and_lists(tmp_path):
    """"== … ==" headings by their level, a "{| … |}" table's rows as "key: value" rows, a ``<pre>`` block as code,
    a list item without its markup; the infobox template and "__TOC__" are no text of the page."""
    p = tmp_path / "Incident_reviews.mediawiki"
    p.write_text(WIKI, encoding="utf-8")
    recs = list(records(p))
    assert not any("Hosting Operations" in r.text or "__TOC__" in r.text for r in recs)
    rows = [(r.line_start, r.text) for r in recs if r.kind == "table_row"]
    assert rows == [(10, "Field: Severity; Value: SEV-2"), (12, "Field: Ticket; Value: HOPS-3310")]
    logged = next(r for r in recs if "too big header" in r.text)
    assert logged.kind == "code" and (logged.line_start, logged.line_end) == (16, 18)
    assert logged.headings[-1] == "What the edge logged"
    fix = recs[-1]
    assert fix.text == ("- Edge config MR !482: the `panel` location now has `proxy_buffer_size 16k;`, by Mireille.")
    assert fix.line_start == 21 and fix.headings[-1] == "Resolution"
    saved = tmp_path / "page.txt"  # the source saved as text is a MediaWiki page by its markup
    saved.write_text(WIKI, encoding="utf-8")
    assert detect(saved) == "mediawiki"
    plain = tmp_path / "notes.txt"  # "== … ==" lines alone are a plain text's banners
    plain.write_text("== day one ==\nall quiet\n\n== day two ==\nstill quiet\n", encoding="utf-8")
    assert detect(plain) != "mediawiki"
