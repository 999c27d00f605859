"""A chat copied from its app into a plain-text handover (Microsoft Teams' shape in bench/incidents47): a day alone on
its line, then messages under "Name  07:52" headers, the pods' logs pasted under a rule below. Each message is a chat
message on that day, in the year the document dates itself by, so the second day's chat and the second day's log
make one incident; a message that names the service the channel named the day before is no new topic; and the
header line is no part of what the message says."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.inputs.chunking import records
from poimen.inputs.readers.zones import heading_day, written_year

HANDOVER = """\
HANDOVER - ledger-web 4.2 rollout, 3-4 Mar 2025
Copied from the Teams chat "ledger-web go-live" on 04/03/2025, pod logs pasted underneath.

Monday, 3 March

Ines Ortega  09:10
4.2.0 is rolling out now

Ines Ortega  09:14
new pods are in CrashLoopBackOff, site is down

Alerts  09:15
Fired: ledger-web availability 0% for 3m

Rui Santos  09:22
the pods die on the session key check, the prod key is only 128 bits

Rui Santos  09:30
rotated it: vault kv patch secret/ledger-web/prod session_key=$(openssl rand -hex 32) and restarted

Ines Ortega  09:36
pods Ready, availability back

Tuesday, 4 March

Ines Ortega  08:02
4.2.1 going out, with the new report index

Ines Ortega  08:06
crashloop again, different error: "refusing to start: the database needs a manual fix"

Rui Santos  08:12
Vera said pgdb-main had a failover overnight, is it that?

Vera Lind  08:15
DBA here: no failover overnight, that was staging. ledger-web talks to the primary, it is fine

Rui Santos  08:24
found it: migration 31 builds its index CONCURRENTLY and our migrator wraps every script in a transaction

Rui Santos  08:35
ran the index by hand outside a transaction, marked migration 31 applied, restarted ledger-web

Ines Ortega  08:40
up again

==========================================================================
Pod logs (kubectl logs --previous)
==========================================================================

--- ledger-web-6d9f8b7c5-k2x8p, 2025-03-03 (4.2.0) ---
2025-03-03 09:13:01,877 [INFO] from app.Boot in main - starting ledger-web 4.2.0
2025-03-03 09:13:02,101 [ERROR] from app.Boot in main - refusing to start: the session key is too short for HS256

--- ledger-web-7b8c9d6f4-q7w2z, 2025-03-04 (4.2.1) ---
2025-03-04 08:05:11,300 [ERROR] from db.Migrator in main - migration 31 failed: CREATE INDEX CONCURRENTLY cannot run inside a transaction block
2025-03-04 08:05:11,318 [ERROR] from app.Boot in main - refusing to start: the database needs a manual fix
"""


def test_a_day_heading_names_its_day_in_the_documents_year():
    assert written_year("HANDOVER - ledger-web 4.2 rollout, 3-4 Mar 2025") == "2025"
    assert written_year("copied on 04/03/2025") == "2025" and written_year("the key from 2019") == ""
    assert heading_day("Monday, 3 March", "2025") == "2025-03-03"
    assert heading_day("Tuesday, March 4th", "2025") == "2025-03-04"
    assert heading_day("--- Tue, Oct 21 2025 ---", "") == "2025-10-21"
    # a weekday across New Year: the year next to the document's in which that day is that weekday
    assert heading_day("Thursday, 1 January", "2025") == "2026-01-01"
    assert heading_day("Wednesday, 3 March", "2025") == ""  # no year near 2025 makes it a Wednesday
    assert heading_day("Monday, 3 March", "") == ""  # a day with no year known dates nothing
    assert heading_day("Detection", "2025") == heading_day("May the pods recover", "2025") == ""


def test_messages_under_a_day_heading_are_chat_messages_on_that_day(tmp_path):
    f = tmp_path / "ledger-web_teams-then-podlogs.txt"
    f.write_text(HANDOVER, encoding="utf-8")
    recs = list(records(f))
    said = [(r.time, r.author) for r in recs if r.kind == "message"]
    assert said[:3] == [("2025-03-03 09:10", "Ines Ortega"), ("2025-03-03 09:14", "Ines Ortega"),
                        ("2025-03-03 09:15", "Alerts")]  # (a bot's one word too)
    assert said[-1] == ("2025-03-04 08:40", "Ines Ortega") and len(said) == 13
    assert all(not r.headings for r in recs if r.kind == "message")  # no day is a section: the chat is a flow
    # under the rule the document goes on: the pasted log is a log, its caption no message
    assert [r.time for r in recs if r.kind == "log"] == ["2025-03-03 09:13:01,877", "2025-03-03 09:13:02,101",
                                                         "2025-03-04 08:05:11,300", "2025-03-04 08:05:11,318"]


def test_the_second_days_log_joins_the_second_days_chat(tmp_path):
    f = tmp_path / "ledger-web_teams-then-podlogs.txt"
    f.write_text(HANDOVER, encoding="utf-8")
    cards = [build_card(i) for i in incidents({f.name: list(records(f))})]
    index = next(c for c in cards if any("CONCURRENTLY cannot run" in x.text for x in c.symptoms))
    assert any("ran the index by hand" in x.text for x in index.actions)
    assert any("wraps every script in a transaction" in x.text for x in index.causes)
    assert not any("vault kv patch" in x.text for x in index.lines)
    key = next(c for c in cards if any("vault kv patch" in x.text for x in c.actions))
    assert not any("CONCURRENTLY" in x.text for x in key.lines)
    # what a message says, without its header line ("Alerts  09:15" is no symptom)
    assert not any(x.text.startswith(("Rui Santos", "Ines Ortega", "Alerts", "Vera Lind")) for c in cards for x in c.lines)
