"""Incident streams the role cues were developed on: a Slack thread, a PagerDuty-style Markdown timeline, a Java
log with Jira comments, a kubectl session with ``#`` notes. (``incident_heldout`` is the check they generalise.)
"""

from __future__ import annotations

from poimen.inputs.records import Record


def rec(text: str, line: int, kind: str = "paragraph", **fields) -> Record:
    end = fields.pop("end", line + text.count("\n"))
    return Record(text=text, line_start=line, line_end=end, kind=kind, **fields)


def stored_lines(tmp_path, name: str, text: str, role: str) -> list[str]:
    """The lines of ``role`` of the cards ``mem run`` stores for one source (the offline engine's replies, then the
    writer's cap on each role), as the index's ``incident_line`` table holds them."""
    from poimen.embedding.embedders import default_embedder
    from poimen.index import build_projections, default_db
    from poimen.index.read import connect_read_only
    from poimen.write.core import RunRequest, run_loops

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_text(text, encoding="utf-8")
    root = tmp_path / "log"
    result = run_loops(RunRequest(root=root, sources=[tmp_path / "src" / name], sources_root=tmp_path / "src",
                                  query="What failed, and how was it fixed?", incidents=True))
    assert result.ok, result.source_errors
    db = default_db(root)
    build_projections(root, db, default_embedder())
    con = connect_read_only(db)
    try:
        return [t for (t,) in con.execute("SELECT text FROM incident_line WHERE role = ?", [role]).fetchall()]
    finally:
        con.close()


# Slack channel export: a fix in the thread, an unrelated incident later in the same channel, chatter.
SLACK = (
    rec("checkout-api is throwing 413s on image uploads for some merchants", 3, "message",
        time="1709388311.000200", author="maria", thread="1709388311.000200"),
    rec("seeing `413 Request Entity Too Large` from ingress-nginx on checkout-api-7d9f8b6c4-x2k9p", 9, "reply",
        time="1709388400.000300", author="li", thread="1709388311.000200"),
    rec("We rolled back checkout-api to v41 but that changed nothing, still getting 413", 15, "reply",
        time="1709389000.000100", author="maria", thread="1709388311.000200"),
    rec("I think it might be the WAF rule we added Tuesday?", 21, "reply",
        time="1709389100.000100", author="sam", thread="1709388311.000200"),
    rec("WAF is not the cause, its logs show nothing blocked", 27, "reply",
        time="1709389300.000100", author="li", thread="1709388311.000200"),
    rec("Root cause: the ingress default client_max_body_size is 1m and the new image encoder sends 3-4 MB bodies",
        33, "reply", time="1709390100.000100", author="li", thread="1709388311.000200"),
    rec("Bumped proxy-body-size: 16m in the checkout-api ingress annotations (OPS-2231)", 39, "reply",
        time="1709390500.000100", author="li", thread="1709388311.000200"),
    rec("confirmed, uploads go through again and the 413s are gone", 45, "reply",
        time="1709391000.000100", author="maria", thread="1709388311.000200"),
    rec("lunch order closes at 12, reply in the sheet", 51, "message", time="1709392000.000100", author="kim",
        thread="1709392000.000100"),
    rec("search-indexer lag alert firing on es-data-3, consumer backlog at 2M", 57, "message",
        time="1709402000.000100", author="bot", thread="1709402000.000100"),
    rec("the indexer was stuck because es-data-3 disk filled up past the flood-stage watermark", 63, "reply",
        time="1709402600.000100", author="ana", thread="1709402000.000100"),
    rec("deleted old snapshots and raised cluster.routing.allocation.disk.watermark.flood_stage to 97%", 69,
        "reply", time="1709403000.000100", author="ana", thread="1709402000.000100"),
    rec("backlog recovered, lag back to normal", 75, "reply", time="1709404000.000100", author="ana",
        thread="1709402000.000100"),
)
SLACK_FIX = SLACK[6].text
SLACK_CAUSE = SLACK[5].text
SLACK_ROLLBACK = SLACK[2].text
SLACK_HERRINGS = (SLACK[3].text, SLACK[4].text)

# A PagerDuty-style Markdown incident timeline with a prose Resolution.
_PD = "INC-4101: payments-db connection exhaustion"
PAGERDUTY = (
    rec("Triggered: [FIRING] payments-api p99 latency > 2s, HTTP 503 rate 12%", 5, headings=(_PD, "Timeline")),
    rec("14:02 on-call acknowledged; Grafana shows payments-api pods restarting", 6, headings=(_PD, "Timeline")),
    rec("14:10 WARN disk usage 81% on pg-backup-1.payments.internal (paged separately, unrelated)", 7,
        headings=(_PD, "Timeline")),
    rec("14:15 we thought it was the 13:55 deploy of payments-api v3.8.1 and rolled it back; no improvement", 8,
        headings=(_PD, "Timeline")),
    rec("14:31 found that every pod held 50 idle connections, so max_connections=200 on payments-db was "
        "exhausted after the autoscaler added replicas", 9, headings=(_PD, "Timeline")),
    rec("Set the pool size to 10 per pod (spring.datasource.hikari.maximum-pool-size=10) and raised "
        "max_connections to 400 on payments-db.", 13, headings=(_PD, "Resolution")),
    rec("Error rate back to 0.1% at 14:52; p99 latency normal.", 14, headings=(_PD, "Resolution")),
    rec("Add an alert on connection count per database.", 18, headings=(_PD, "Action items")),
)
PAGERDUTY_FIX = PAGERDUTY[5].text
PAGERDUTY_CAUSE = PAGERDUTY[4].text
PAGERDUTY_HERRINGS = (PAGERDUTY[2].text, PAGERDUTY[3].text)

# A Java service log with a multi-line trace, then the Jira comments on its ticket (two streams).
LOG = (
    rec("2024-04-09 03:12:44,118 INFO  [main] c.a.o.OrderService - processed batch 88121 in 412ms", 100, "log",
        time="2024-04-09 03:12:44,118", level="INFO"),
    rec("2024-04-09 03:14:02,771 ERROR [pool-3-thread-7] c.a.o.OrderService - order export failed\n"
        "java.lang.OutOfMemoryError: Java heap space\n\tat com.acme.orders.Exporter.render(Exporter.java:212)\n"
        "\tat com.acme.orders.Exporter.export(Exporter.java:88)", 101, "log", time="2024-04-09 03:14:02,771",
        level="ERROR"),
    rec("2024-04-09 03:14:05,002 WARN  [gc] c.a.o.GcMonitor - GC overhead 97% on order-exporter-2", 105, "log",
        time="2024-04-09 03:14:05,002", level="WARN"),
)
JIRA = (
    rec("ORD-977 order-exporter OOM during nightly export\nThe 03:14 export died with java.lang.OutOfMemoryError: "
        "Java heap space in Exporter.render.", 2, "ticket", time="2024-04-09T07:30:00Z", author="ops-bot",
        thread="ORD-977"),
    rec("Heap dump shows the exporter buffering the whole month's orders in one list; the culprit is the "
        "unbounded findAll() in Exporter.render.", 5, "comment", time="2024-04-09T09:10:00Z", author="pat",
        thread="ORD-977"),
    rec("Raised -Xmx from 2g to 4g as a stopgap via JAVA_OPTS on order-exporter; streaming export is in PR #612.",
        8, "comment", time="2024-04-09T10:00:00Z", author="pat", thread="ORD-977"),
    rec("Nightly export completed at 03:20 with no more OOM.", 11, "comment", time="2024-04-10T07:00:00Z",
        author="ops-bot", thread="ORD-977"),
)
JIRA_FIX = JIRA[2].text
JIRA_CAUSE = JIRA[1].text

# A kubectl session with # notes: a restart that did not help, then the fix.
SHELL = (
    rec("$ kubectl get pods -n shop | grep cart", 1, "command", thread="session-1"),
    rec("cart-5c9d8f7b6-qh2mv   0/1   CrashLoopBackOff   7   12m", 2, "output", thread="session-1"),
    rec("$ kubectl rollout restart deploy/cart -n shop", 3, "command", thread="session-1"),
    rec("# restart didn't help, same CrashLoopBackOff", 4, "note", thread="session-1"),
    rec("$ kubectl logs cart-5c9d8f7b6-z8k4w -n shop --previous | tail -3", 5, "command", thread="session-1"),
    rec("FATAL: REDIS_URL not set, refusing to start", 6, "output", thread="session-1"),
    rec("# the configmap lost REDIS_URL in yesterday's refactor, that's why it crashes", 7, "note",
        thread="session-1"),
    rec("$ kubectl set env deploy/cart -n shop REDIS_URL=redis://redis-master.shop.svc.cluster.local:6379", 8,
        "command", thread="session-1"),
    rec("# pods healthy now, 3/3 running", 9, "note", thread="session-1"),
)
SHELL_FIX = SHELL[7].text
SHELL_RESTART = SHELL[2].text
SHELL_CAUSE = SHELL[6].text
