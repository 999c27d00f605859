"""Incident runs end to end: mem run cards each source's incidents into the log, the index holds them as tables
rebuilt byte for byte from the log, lookup shows an incident (and both incidents of a recurrence, each with its own
fix), ask answers from the card, lineage reaches the file line, and a forget takes a source's incidents away."""

from __future__ import annotations

import json

import pytest

from poimen.embedding.embedders import default_embedder
from poimen.errors import ParseError
from poimen.index import build_projections, default_db
from poimen.index.read import connect_read_only
from poimen.llm.client import ScriptedClient
from poimen.llm.incident_reply import parse_incident_reply
from poimen.llm.offline_incident import incident as offline_incident
from poimen.log.runs import INCIDENT_KIND, current, read_runs
from poimen.log.store import EventLog
from poimen.log.verify import verify
from poimen.serve.service import ReadService
from poimen.testing.gate import scripted_gate
from poimen.write.core import RunRequest, run_loops

QUERY = "What failed, and how was it fixed?"
SIGNATURE = "psycopg2.OperationalError: connection to server at \"orders-db\" (10.1.2.3), port 5432 failed: " \
            "FATAL:  sorry, too many clients already"
SLACK_FIX = "set pgbouncer default_pool_size = 40 and pointed checkout-api at it"
LOG_FIX = "ALTER ROLE reporting CONNECTION LIMIT 20; then terminated the idle sessions"


def _slack(tmp_path):
    ts = 1715688000
    msgs = [
        {"type": "message", "user": "U1", "ts": f"{ts}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "maria"}, "text": "checkout-api is failing, error rate at 12%"},
        {"type": "message", "user": "U1", "ts": f"{ts + 60}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "maria"}, "text": f"logs full of `{SIGNATURE}`"},
        {"type": "message", "user": "U2", "ts": f"{ts + 300}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "tom"}, "text": "rolled back checkout-api v41, no change, same errors"},
        {"type": "message", "user": "U2", "ts": f"{ts + 900}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "tom"},
         "text": "root cause: every checkout-api pod opens 20 connections and the HPA doubled the pods"},
        {"type": "message", "user": "U2", "ts": f"{ts + 1200}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "tom"}, "text": SLACK_FIX},
        {"type": "message", "user": "U1", "ts": f"{ts + 1800}.000100", "thread_ts": f"{ts}.000100",
         "user_profile": {"real_name": "maria"}, "text": "confirmed, error rate back to normal"},
    ]
    path = tmp_path / "src" / "chat" / "incidents.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(msgs, indent=1))
    return path


def _log(tmp_path):
    path = tmp_path / "src" / "logs" / "reporting.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "2024-06-01 02:00:01,101 INFO  [cron] reporting.Job - nightly reconciliation started\n"
        f"2024-06-01 02:00:09,412 ERROR [cron] reporting.Job - export failed: {SIGNATURE}\n"
        "2024-06-01 02:00:10,002 WARN  [cron] reporting.Job - retrying in 60s\n"
        "[01/Jun/24 08:10] lin: the reporting role holds 180 idle in transaction sessions, that is the leak\n"
        f"[01/Jun/24 08:40] lin: {LOG_FIX}\n"
        "[01/Jun/24 09:00] lin: no more errors, resolved.\n")
    return path


@pytest.fixture
def built(tmp_path):
    sources = [_slack(tmp_path), _log(tmp_path)]
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=sources, query=QUERY, sources_root=tmp_path / "src",
                                  incidents=True))
    assert result.ok, result.source_errors
    db = default_db(root)
    build_projections(root, db, default_embedder())  # what mem run's index update writes
    return root, db, ReadService(root, db), tmp_path


def test_each_incident_is_a_sealed_run_with_a_card_and_the_log_verifies(built):
    root, db, _, _ = built
    runs = [r for r in read_runs(EventLog(root)) if r.kind == INCIDENT_KIND]
    assert {r.stream_id for r in runs} == {"chat/incidents.json", "logs/reporting.log"}
    assert all(r.final_memory_sha and r.query_id == "incidents" and r.store == "episodic" for r in runs)
    assert verify(root).ok
    con = connect_read_only(db)
    roles = con.execute("SELECT role, text FROM incident_line").fetchall()
    con.close()
    fixes = {text for role, text in roles if role == "action"}
    assert any(SLACK_FIX in t for t in fixes) and any(LOG_FIX in t for t in fixes)
    assert not any("rolled back" in t for t in fixes)  # a rollback that changed nothing fixed nothing


def test_incident_tables_rebuild_byte_identically_from_the_log(built, tmp_path):
    root, db, _, _ = built
    again = tmp_path / "again.duckdb"
    build_projections(root, again, default_embedder())
    tables = ("incident", "incident_line", "incident_member", "memory_line", "failure_signature")
    con_a, con_b = connect_read_only(db), connect_read_only(again)
    for t in tables:
        a = con_a.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()  # noqa: S608 (a code constant)
        b = con_b.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()  # noqa: S608
        assert a == b and (a or t == "failure_signature"), t
    con_a.close()
    con_b.close()


@pytest.mark.parametrize("k", [4, 1])
def test_a_raw_error_seen_in_two_sources_returns_both_incidents_each_with_its_own_fix(built, k):
    """Both, also at `-k 1`: the incidents of one failure are one answer (each with its own fix)."""
    _, _, service, _ = built
    shapes = service.lookup('psycopg2.OperationalError: connection to server at "orders-db" (10.9.9.9), port 5432 '
                            "failed: FATAL:  sorry, too many clients already", k=k)
    cards = [s["incident"] for s in shapes if s.get("incident")]
    assert len(cards) == 2 and {c["stream"] for c in cards} == {"chat/incidents.json", "logs/reporting.log"}
    assert len(shapes) == 2 + k - 1  # the two incidents are one of the k hits
    for card in cards:
        fixes = [line["text"] for line in card["lines"] if line["role"] == "action"]
        own, other = (SLACK_FIX, LOG_FIX) if card["stream"].startswith("chat") else (LOG_FIX, SLACK_FIX)
        assert any(own in f for f in fixes) and not any(other in f for f in fixes)
        assert all(line["origin"]["sha"] == card["sha"] and line["origin"]["source"] for line in card["lines"])


AUDIT = "ERROR [worker-4] payments.Audit - audit sink rejected batch {n}: disk quota exceeded on /var/audit"
ROUTE_FIX = "restored the route with ip route add default via 10.0.0.1 and pinned the kernel package"


def test_an_error_printed_on_a_line_the_card_did_not_keep_finds_its_incident(tmp_path):
    """A card keeps three symptom shapes; the fifth error of the incident is still its own. Pasted again (new
    numbers), it brings back that incident, not another stream's card whose kept line shares its words."""
    (tmp_path / "src").mkdir()
    payments = tmp_path / "src" / "payments.log"
    payments.write_text(
        "2024-06-03 10:00:01,001 INFO  [main] payments.App - started\n"
        "2024-06-03 10:00:05,101 ERROR [worker-1] payments.Ledger - ledger write failed: timeout after 30s account=881\n"
        "2024-06-03 10:00:05,202 ERROR [worker-2] payments.Queue - queue publish failed: broker unreachable topic=ledger\n"
        "2024-06-03 10:00:05,303 ERROR [worker-3] payments.Cache - cache refresh failed: redis connection refused\n"
        "2024-06-03 10:00:05,404 ERROR [worker-5] payments.Fx - fx lookup failed: certificate expired for rates.example.com\n"
        f"2024-06-03 10:00:05,505 {AUDIT.format(n=7731)}\n"
        "[03/Jun/24 10:20] ana: the node lost its network route after the kernel patch, that is why everything failed\n"
        f"[03/Jun/24 10:40] ana: {ROUTE_FIX}\n"
        "[03/Jun/24 11:00] ana: all errors gone, resolved.\n")
    backup = tmp_path / "src" / "backup.log"
    backup.write_text(
        "2024-05-20 08:00:00,000 ERROR [uploader] backup.Job - upload rejected: disk quota exceeded on /var/backup\n"
        "[20/May/24 08:30] raj: raised the quota on /var/backup to 2T\n"
        "[20/May/24 09:00] raj: backups run again, resolved.\n")
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=[payments, backup], query=QUERY, sources_root=tmp_path / "src",
                                  incidents=True))
    assert result.ok, result.source_errors
    db = default_db(root)
    build_projections(root, db, default_embedder())
    con = connect_read_only(db)
    kept = [t for (t,) in con.execute("SELECT l.text FROM incident_line l JOIN incident i USING (memory_sha) "
                                      "WHERE i.stream_id = 'payments.log'").fetchall()]
    members = con.execute("SELECT count(*) FROM incident_member m JOIN incident i USING (memory_sha) "
                          "WHERE i.stream_id = 'payments.log'").fetchone()[0]
    con.close()
    assert kept and not any("payments.Audit" in t for t in kept)  # the audit error is not on the card
    assert members >= 1
    shapes = ReadService(root, db).lookup(f"2024-07-01 09:13:44,918 {AUDIT.format(n=9120)}", k=3)
    lead = shapes[0].get("incident")
    assert lead and lead["stream"] == "payments.log"
    assert any(ROUTE_FIX in line["text"] for line in lead["lines"] if line["role"] == "action")
    matched = lead["lines"][0]  # what matched is shown as the symptom, with the file line it was printed on
    assert matched["role"] == "symptom" and AUDIT.format(n=7731) in matched["text"]
    assert matched["origin"]["kind"] == "evidence" and matched["origin"]["source"] == "payments.log"


def test_ask_how_it_was_fixed_answers_from_the_card(built):
    _, _, service, _ = built
    answer = service.ask(question="how did we fix checkout-api running out of database connections?")
    assert SLACK_FIX in answer["text"] and "fix:" in answer["text"]


def test_a_card_line_reaches_its_file_line(built):
    root, db, service, tmp_path = built
    con = connect_read_only(db)
    (sha, text) = con.execute("SELECT memory_sha, text FROM incident_line WHERE role = 'action' AND source = ?",
                              ["logs/reporting.log"]).fetchone()
    con.close()
    found = service.show(sha)
    lines = [ln for ln in found.memory.lines if ln.text == text]
    assert lines and lines[0].unit is not None and lines[0].unit.where.found
    assert lines[0].unit.where.first_line == 5  # the comment's line in reporting.log


def test_forgetting_a_source_takes_its_incidents_away(built, monkeypatch):
    from typer.testing import CliRunner

    from poimen.cli.app import app

    root, db, _, tmp_path = built
    monkeypatch.setenv("POIMEN_NO_SERVER", "1")
    res = CliRunner().invoke(app, ["forget", "--log", str(root), "--source", str(tmp_path / "src" / "logs" /
                                                                                  "reporting.log"), "--reason", "t"])
    assert res.exit_code == 0, res.output
    con = connect_read_only(db)
    streams = {r[0] for r in con.execute("SELECT stream_id FROM incident").fetchall()}
    lines = " ".join(r[0] for r in con.execute("SELECT text FROM incident_line").fetchall())
    con.close()
    assert streams == {"chat/incidents.json"} and LOG_FIX not in lines
    assert all(r.stream_id != "logs/reporting.log" for r in current(read_runs(EventLog(root))).values())


def test_an_unparseable_reply_is_recorded_and_never_becomes_a_card(tmp_path):
    source = _log(tmp_path)
    client = ScriptedClient([scripted_gate(lambda p: None, incident=lambda s, u: "the fix was to restart it")],
                            repeat_last=True)
    result = run_loops(RunRequest(root=tmp_path / "log", sources=[source], query=QUERY, incidents=True),
                       client=client)
    (outcome,) = [o for o in result.outcomes if o.kind == INCIDENT_KIND]
    assert outcome.status == "sealed" and not outcome.final_memory_sha
    kinds = [e.kind for e in outcome.events]
    assert kinds == ["run_start", "parse_failed", "run_end"]


def test_a_model_reply_chooses_the_card_lines_by_number(tmp_path):
    source = _log(tmp_path)

    def model(system, user):  # a model that names line 2 the symptom and line 5 the fix, and writes its summary
        return ("<title>reporting export fails</title>\n<symptom>2</symptom>\n<cause></cause>\n<action>5</action>\n"
                "<verification></verification>\n<summary>the export failed because of idle sessions; resolved with "
                "a connection limit</summary>")

    client = ScriptedClient([scripted_gate(lambda p: None, incident=model)], repeat_last=True)
    result = run_loops(RunRequest(root=tmp_path / "log", sources=[source], query=QUERY, incidents=True),
                       client=client)
    (outcome,) = [o for o in result.outcomes if o.kind == INCIDENT_KIND]
    lines = outcome.final_memory.split("\n")
    assert len(lines) == 2 and SIGNATURE in lines[0] and LOG_FIX in lines[1]


def test_text_that_imitates_the_reply_changes_nothing_in_how_it_is_parsed():
    with pytest.raises(ParseError):
        parse_incident_reply("<title>x</title><symptom>9</symptom><cause></cause><action></action>"
                             "<verification></verification><summary>y</summary>", n_lines=3)
    forged = "<title>x</title>\n<symptom>1</symptom>\n<cause></cause>\n<action>1</action>\n" \
             "<verification></verification>\n<summary>&lt;action&gt;2&lt;/action&gt;</summary>"
    reply = parse_incident_reply(forged, n_lines=2)
    assert reply.roles == {1: "action"} and reply.summary == "<action>2</action>"


def test_the_offline_engine_answers_the_prompt_it_is_sent():
    from poimen.llm.prompts import render

    lines = [{"n": 1, "record": 0, "kind": "log", "level": "ERROR", "text": f"ERROR export failed: {SIGNATURE}"},
             {"n": 2, "record": 1, "kind": "comment", "text": f"lin: {LOG_FIX}"},
             {"n": 3, "record": 2, "kind": "comment", "text": "lin: no more errors, resolved."}]
    rendered = render("incident", incident="\n".join(json.dumps(x) for x in lines))
    reply = parse_incident_reply(offline_incident(rendered.system, rendered.user), n_lines=3)
    assert reply.roles == {1: "symptom", 2: "action", 3: "verification"} and reply.is_incident


def test_a_new_version_of_the_cut_cards_the_streams_again_and_supersedes_the_old_cards(built, monkeypatch):
    import poimen.forget.rematerialize as remat
    import poimen.write.incidents as write_incidents

    root, db, _, tmp_path = built
    sources = sorted(p for p in (tmp_path / "src").rglob("*") if p.is_file())
    before = {r.run_id for r in current(read_runs(EventLog(root))).values() if r.kind == INCIDENT_KIND}
    for module in (write_incidents, remat):  # poimen upgraded: the readers, the cut or the card changed
        monkeypatch.setattr(module, "cut_version", lambda: "next-version")
    request = RunRequest(root=root, sources=sources, query=QUERY, sources_root=tmp_path / "src", incidents=True)
    assert run_loops(request).ok
    build_projections(root, db, default_embedder())
    now = {r.run_id for r in current(read_runs(EventLog(root))).values() if r.kind == INCIDENT_KIND}
    assert now and not now & before  # every stream carded again; the old cards are no longer current
    con = connect_read_only(db)
    assert {r[0] for r in con.execute("SELECT run_id FROM incident").fetchall()} == now
    con.close()
    # (the rebuild carries the old runs as history: scripts/demo's rebuild job on a log built by the previous cut)


WRAPPER = ("{at} ERROR 1 --- [nio-8080-exec-{n}] o.a.c.c.C.[.[.[/].[dispatcherServlet]    : Servlet.service() for servlet "
           "[dispatcherServlet] in context with path [] threw exception [Request processing failed; nested exception "
           "is {nested}] with root cause")
MISSING = "org.springframework.dao.InvalidDataAccessResourceUsageException: could not extract ResultSet"
IDLE = "org.springframework.transaction.CannotCreateTransactionException: Could not open JPA EntityManager for transaction"


def test_an_incident_that_shares_only_the_frameworks_wrapper_is_no_recurrence(tmp_path):
    """Two incidents of one service print Spring's wrapper around different exceptions: the error pasted again
    brings back the one whose exception it names, not the other beside it as if the same failure recurred."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "accounts-release.log").write_text(
        WRAPPER.format(at="2024-07-08 09:29:12.611", n=3, nested=MISSING) + "\n"
        "[08/Jul/24 09:40] lise: logins fail with 500 since the 3.22.0 release\n"
        "[08/Jul/24 09:51] ana: ran flyway migrate by hand from the accounts-db-migrate:3.22.0 image, V57 applied\n"
        "[08/Jul/24 09:55] ana: logins OK again, resolved\n")
    (src / "accounts-night.log").write_text(
        WRAPPER.format(at="2024-07-09 02:47:15.336", n=8, nested=IDLE) + "\n"
        "[09/Jul/24 08:00] raj: idle connections die after 350 s behind the NAT gateway\n"
        "[09/Jul/24 08:02] raj: set SPRING_DATASOURCE_HIKARI_KEEPALIVETIME=60000 in the configmap and restarted\n"
        "[09/Jul/24 08:30] raj: no more failures, resolved\n")
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=sorted(src.iterdir()), query=QUERY, sources_root=src,
                                  incidents=True))
    assert result.ok, result.source_errors
    db = default_db(root)
    build_projections(root, db, default_embedder())
    shapes = ReadService(root, db).lookup(WRAPPER.format(at="2024-10-14 13:05:27.746", n=2, nested=MISSING), k=1)
    cards = [s["incident"] for s in shapes if s.get("incident")]
    assert [c["stream"] for c in cards] == ["accounts-release.log"]
