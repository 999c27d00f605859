"""A stream that holds two failures and a comment thread about both: the log is cut where the second failure
starts (a quiet log line naming every source sets no topic), an echo of a crash is no new failure, each comment
goes with the failure it speaks of, a quiet stretch never bridges two incidents, and what a login or a thread
name prints links nothing."""

from __future__ import annotations

from incident_fixtures import stored_lines

from poimen import incidents as inc
from poimen.incidents.card import build_card
from poimen.incidents.entities import entities
from poimen.incidents.episodes import episodes
from poimen.inputs.chunking import records
from poimen.inputs.readers.speakers import speaker
from poimen.text.line_levels import first_failure_level

LOG = """2024-06-02 12:58:00.012 INFO  [scheduling-1] c.f.ledger.sync.SyncScheduler - Starting run sources=[bank-nordfin, statements-sftp]
2024-06-02 12:58:02.466 ERROR [sync-worker-1] c.f.ledger.sync.nordfin.NordfinClient - Request to bank-nordfin failed, attempt 1/3
javax.net.ssl.SSLHandshakeException: PKIX path building failed: unable to find valid certification path to requested target
\tat java.base/sun.security.ssl.Alert.createSSLException(Alert.java:130)
2024-06-02 13:58:00.012 INFO  [scheduling-1] c.f.ledger.sync.SyncScheduler - Starting run sources=[bank-nordfin, statements-sftp]
2024-06-02 13:58:03.015 INFO  [sync-worker-3] c.f.ledger.sync.statements.StatementParser - Parsing alderpay_stmt_2024-05_FW-OPS-01.csv
2024-06-02 14:00:17.305 ERROR [sync-worker-3] c.f.ledger.sync.SyncWorker - Unhandled error in source statements-sftp, worker will exit
java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.nio.file.Files.readAllLines(Files.java:3340)
2024-06-02 14:00:17.911 INFO  [main] c.f.ledger.LedgerSyncApplication - Shutting down: worker sync-worker-3 died (OutOfMemoryError)

--- comments (FIN-3307: ledger-sync not importing bank transactions) ---

Jana Novak - 2024-06-02 13:20:
Log shows PKIX path building failed on every call to the nordfin bank since 12:58: the partner moved its chain to a new GlobalSign intermediate our truststore lacks.

Marco Bellini - 2024-06-02 14:06:
Second problem: the statements-sftp worker died with OutOfMemoryError reading the monthly statement with readAllLines.

Jana Novak - 2024-06-02 14:15:
Nordfin fixed: imported the new GlobalSign root and intermediate into the pinned truststore with keytool.

Marco Bellini - 2024-06-02 14:40:
Statements: turned on LEDGER_STATEMENTS_STREAMING_PARSER=true so the parser streams the monthly statement file.
"""


def _cards(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return [build_card(i) for i in inc.incidents({name: list(records(f))})]


def test_two_failures_under_one_comment_thread_are_two_incidents_each_with_its_fix(tmp_path):
    cards = _cards(tmp_path, "ledger-sync.log", LOG)
    by_fix = {fix: [c for c in cards if any(fix in line.text for line in c.actions)]
              for fix in ("imported the new GlobalSign root", "LEDGER_STATEMENTS_STREAMING_PARSER=true")}
    pkix, oom = by_fix["imported the new GlobalSign root"], by_fix["LEDGER_STATEMENTS_STREAMING_PARSER=true"]
    assert len(pkix) == 1 and len(oom) == 1 and pkix != oom
    assert any("PKIX" in line.text for line in pkix[0].symptoms)
    assert any("OutOfMemoryError" in line.text for line in oom[0].lines)
    assert not any("OutOfMemoryError" in line.text for line in pkix[0].symptoms)


def test_a_comment_header_with_the_name_first_is_a_speaker():
    assert speaker("Jana Novak - 2024-06-02 13:20:") == ("2024-06-02 13:20", "Jana Novak")
    assert speaker("ops-bot (2024-06-02 14:40):") == ("2024-06-02 14:40", "ops-bot")
    assert speaker("ERROR - 2024-06-02 13:20:") is None
    assert speaker("Step 3 - see the runbook") is None
    # Jira's Comments export writes the date as its issue view does; GitHub's page copied as text bolds the handle
    assert speaker("Marta Sokolowska - 02/Apr/25 09:04 AM") == ("02/Apr/25 09:04 AM", "Marta Sokolowska")
    assert speaker("**hannah-vogt** commented on Apr 7, 2025") == ("Apr 7, 2025", "hannah-vogt")
    assert speaker("**bold claim** about the release on Apr 7, 2025") is None
    assert speaker("Release 02/Apr/25 09:04 AM") is None


def test_a_helpdesk_header_with_the_posts_kind_first_is_a_speaker():
    # Freshdesk and Zendesk: the post's kind, the name, the date as the helpdesk prints it
    assert speaker("[Private note] Hamid Serrano - Mon, 8 Jul 2024 at 09:38 AM") == (
        "Mon, 8 Jul 2024 at 09:38 AM", "Hamid Serrano")
    assert speaker("[Customer] Lise Moreau (Support) - Tue, 9 Jul 2024 at 07:58 AM") == (
        "Tue, 9 Jul 2024 at 07:58 AM", "Lise Moreau")
    assert speaker("[Private note] see the runbook - step 3") is None
    # Zendesk's export: drawn between rules, the month first, the post's kind after the time
    assert speaker("--- Rafael Quint, May 20, 2024, 08:05 (internal note) ---") == ("May 20, 2024, 08:05",
                                                                                 "Rafael Quint")


def test_a_comment_header_drawn_between_rules_is_a_speaker():
    assert speaker("--- comment by Dami Okafor (2024-07-21 09:21) ---") == ("2024-07-21 09:21", "Dami Okafor")
    assert speaker("=== Jana Novak - 2024-06-02 13:20 ===") == ("2024-06-02 13:20", "Jana Novak")
    assert speaker("======== OPS-5120 comments (exported 2024-07-22 08:10 UTC) ========") is None
    assert speaker("-- ******* ---- Linux-5.15.0-1064-aws-x86_64-with-glibc2.36 2024-07-21 08:50:04") is None


def test_a_start_up_banner_printed_at_every_restart_links_nothing(tmp_path):
    """A worker's banner names its database and settings at every restart: the two failures after two restarts
    share it, and nothing else, so they stay two incidents."""
    banner = ("[2024-07-21 {t}:00,000: INFO/MainProcess] payments.db: engine ready "
              "url=postgresql+psycopg2://payments@pgbouncer.payments.svc:6432/payments pool_size=8 max_overflow=4")
    p = tmp_path / "worker.log"
    p.write_text("\n".join([
        banner.format(t="09:10"),
        "[2024-07-21 09:14:37,502: ERROR/MainProcess] Task settle_capture raised TimeoutError: QueuePool limit reached",
        banner.format(t="11:40"),
        "[2024-07-21 11:45:02,118: ERROR/MainProcess] Task build_reconciliation raised ValueError: numpy.dtype size "
        "changed"]) + "\n", encoding="utf-8")
    eps = episodes(list(records(p)), "worker.log")
    assert len(eps) == 2 and len(inc.link(eps)) == 2


def test_what_a_thread_a_login_or_a_file_name_prints_is_no_entity():
    assert not [e for e in entities("2024-06-02 ERROR [sync-worker-3] c.f.Sync - failed") if e.kind == "service"]
    assert [e.value for e in entities("worker sync-worker died") if e.kind == "service"] == ["sync-worker"]
    banner = "Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-107-generic x86_64)\nLast login: Mon Jun 10 16:02 2024 from 10.8.0.14"
    assert entities(banner) == ()
    assert not [e for e in entities("Parsing alderpay_stmt_2024-05_FW-OPS-01.csv") if e.kind == "ticket"]
    assert [e.value for e in entities("see OPS-12.") if e.kind == "ticket"] == ["OPS-12"]
    assert not [e for e in entities("2024-06-02 12:58:00.012 INFO started") if e.kind == "version"]
    assert [e.value for e in entities("image:1.4") if e.kind == "version"] == ["1.4"]


def test_the_go_runtime_fatal_error_in_a_journal_line_is_a_fatal_level():
    level = first_failure_level("2024-06-04T03:12:44+0000 ingest-03 ingest-gateway[21877]: fatal error: concurrent map writes")
    assert level is not None and level.word == "fatal error" and level.grade == 2.0
    assert first_failure_level("panic: flagsync: decode rule").grade == 2.0
    assert first_failure_level("we had a panic: yes") is None
    tool = first_failure_level("Jun 12 06:00:03 reports-1 extract.sh[40775]: pg_dump: error: server version mismatch")
    assert tool is not None and tool.word == "error"


def test_a_quiet_stretch_joins_one_incident_and_bridges_none(tmp_path):
    from poimen.incidents.episodes import Episode
    from poimen.incidents.link import link
    from poimen.inputs.records import Record

    def ep(n, *texts):
        return Episode("s", f"flow:{n}", tuple(Record(t, i + 1, i + 1, kind="note") for i, t in enumerate(texts)))
    a = ep(0, "# checkout-api on web-3.prod.example.com failing with 502s", "# raised workers to 64, fixed")
    quiet = ep(1, "# checkout-api and ledger-api on web-3.prod.example.com look fine now, moving on")
    b = ep(2, "# ledger-api on web-3.prod.example.com failing with 503s", "# restarted ledger-api, fixed")
    found = link([a, quiet, b])
    assert len(found) == 2
    assert sum(quiet in i.episodes for i in found) == 1


TWO_TICKETS = """2024-09-18T10:08:31.006Z ERROR 1 --- [nio-8080-exec-41] o.h.e.j.s.SqlExceptionHelper : HikariPool-1 - Connection is not available, request timed out after 30000ms.
2024-09-18T10:11:17.388Z ERROR 1 --- [nio-8080-exec-12] c.t.i.ReservationController : reservation failed order=ORD-7731950
2024-09-19T07:58:44.190Z  INFO 1 --- [           main] c.t.i.InventoryApplication : Started InventoryApplication version=2.31.0
2024-09-19T08:02:11.004Z ERROR 1 --- [ntainer#0-0-C-1] c.t.i.e.StockEventPublisher : publish failed
org.apache.kafka.common.errors.SerializationException: Can't serialize data [StockChanged[sku=TB-44120-BLK]]

INV-2231  Reservations timing out / 500s on POST /api/v1/reservations
Type: Incident   Priority: High   Status: Done

Marta Kowalczyk added a comment - 18/Sep/24 10:21 AM
Checkout reports reservation failures since ~10:05; requests hang for 30s then 500.

Yusuf Demir added a comment - 18/Sep/24 4:47 PM
Real fix is in PR !298: reserve() no longer runs the warehouse hold inside @Transactional.

Henrik Aalto added a comment - 19/Sep/24 9:15 AM
!298 in prod since 2.31.0 this morning. Closing.

INV-2236  Stock events not published after 2.31.0
Type: Incident   Priority: Highest   Status: Done

Henrik Aalto added a comment - 19/Sep/24 8:09 AM
Since the 2.31.0 rollout no StockChanged events are published. 2.31.0 had PR !298 (INV-2231) and PR !301.

Marta Kowalczyk added a comment - 19/Sep/24 9:07 AM
2.31.1 is out with PR !304: KafkaConfig now injects the Jackson2ObjectMapperBuilder instead of its own mapper.
"""


def test_the_comments_of_two_tickets_under_one_log_stay_on_their_tickets(tmp_path):
    """Each comment goes with its ticket, not with the stretch of log written when it was (the first ticket's
    closing comment comes after the second failure began), and the second ticket naming the first's PR joins
    nothing: two tickets of one export are two incidents."""
    f = tmp_path / "inventory.log"
    f.write_text(TWO_TICKETS, encoding="utf-8")
    recs = list(records(f))
    assert {dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"} == {"INV-2231", "INV-2236"}
    # each ticket's header and its fields line, the page's own text, are the ticket's (no line the log printed)
    assert [r.text.split()[0] for r in recs if r.kind == "ticket"] == ["INV-2231", "Type:", "INV-2236", "Type:"]
    assert not [r for r in recs if r.kind == "log" and dict(r.attrs).get("ticket")]
    cards = _cards(tmp_path, "inventory.log", TWO_TICKETS)
    hikari = [c for c in cards if any("!298" in line.text for line in c.actions)]
    kafka = [c for c in cards if any("Jackson2ObjectMapperBuilder" in line.text for line in c.actions)]
    assert len(hikari) == 1 and len(kafka) == 1 and hikari != kafka
    assert any("HikariPool-1" in line.text for line in hikari[0].symptoms)
    assert not any("Jackson2ObjectMapperBuilder" in line.text for line in hikari[0].lines)
    assert any("Closing" in line.text for line in hikari[0].lines)


SAW = """2024-09-18T10:08:31.006Z ERROR 1 --- [exec-41] o.h.SqlExceptionHelper : HikariPool-1 - Connection is not available, request timed out after 30000ms.
2024-09-18T10:08:31.019Z ERROR 1 --- [exec-41] o.a.c.DispatcherServlet : Servlet.service() threw exception: CannotCreateTransactionException
2024-09-18T10:08:34.502Z ERROR 1 --- [exec-44] c.t.i.ReservationController : reservation failed order=ORD-7731950: 500 INTERNAL_SERVER_ERROR

Marta Kowalczyk added a comment - 18/Sep/24 10:21 AM
Checkout reports that stock reservations hang for 30s and then fail.

Henrik Aalto added a comment - 18/Sep/24 10:32 AM
Same from the warehouse app: picking lists time out and come back empty.

Yusuf Demir added a comment - 18/Sep/24 11:05 AM
Deployed the fix: spring.datasource.hikari.maximum-pool-size 10 -> 30 via the configmap.
"""


def test_a_card_of_logged_errors_also_says_what_people_saw(tmp_path):
    """Three shapes of machine error outscore a person's words, but a question is asked in the person's words."""
    card = next(iter(_cards(tmp_path, "inventory.log", SAW)))
    assert sum(line.text.startswith("2024-09-18T10:08") for line in card.symptoms) == 3
    assert any("stock reservations hang" in line.text for line in card.symptoms)
    assert any("picking lists time out" in line.text for line in card.symptoms)  # two people's words, not one


def test_the_card_a_run_stores_keeps_what_people_saw_beside_three_logged_errors(tmp_path):
    """The same card through ``mem run`` (the offline engine's reply, then the writer's cap on each role): the
    writer kept three symptoms, the three errors, and dropped the person's words a question is asked in."""
    symptoms = stored_lines(tmp_path, "inventory.log", SAW, "symptom")
    assert sum(t.startswith("2024-09-18T10:08") for t in symptoms) == 3
    assert any("stock reservations hang" in t for t in symptoms) and any("picking lists" in t for t in symptoms)