"""Entities: pod suffixes stripped, ids and hosts normalised, generic names weak."""

from __future__ import annotations

import pytest

from poimen.incidents.entities import GENERIC, entities, workload


def _values(text: str, kind: str) -> set[str]:
    return {e.value for e in entities(text) if e.kind == kind}


@pytest.mark.parametrize("name, expected", [
    ("checkout-api-7d9f8b6c4-x2k9p", "checkout-api"),   # Deployment pod: ReplicaSet hash and pod suffix
    ("fluentd-x2k9p", "fluentd"),                        # DaemonSet pod: the pod suffix alone
    ("kafka-2", "kafka"),                                # StatefulSet ordinal
    ("checkout-api", "checkout-api"),                    # a plain name stays
    ("media-svc", "media-svc"),                          # a 5-letter-free tail is not a pod suffix
    ("checkout-api-5b8f9c7d6-q2w4e", "checkout-api"),   # after a template hash, a retyped suffix (a vowel) too
    ("redis-cache-node1", "redis-cache-node1"),          # without one, only Kubernetes' own letters are a suffix
])
def test_workload_strips_pod_suffixes(name, expected):
    assert workload(name) == expected


def test_two_pods_of_one_deployment_name_one_service():
    a = _values("OOMKilled: checkout-api-7d9f8b6c4-x2k9p", "service")
    b = _values("OOMKilled: checkout-api-5b6c7d8f9-qq7zt", "service")
    assert a == b == {"checkout-api"}


def test_ticket_and_pr_ids_normalise():
    found = _values("see INC-4101 and OPS-12, fixed in #1234, PR 88, PR #89 and pull/90; UTF-8 is no ticket",
                    "ticket")
    assert found == {"INC-4101", "OPS-12", "#1234", "#88", "#89", "#90"}


def test_a_number_a_program_counts_its_threads_by_is_no_ticket():
    """Camel names its pool's threads "thread #41": every burst of that pool's log names a few, and two bursts of
    two incidents would share them as a ticket; "issue #41" stays one."""
    line = "2024-03-13 12:59:06,412 ERROR [Camel (edi-bridge) thread #41 - carrierPool] DefaultErrorHandler - Failed"
    assert _values(line, "ticket") == set()
    assert _values("worker #12 died on retry #33", "ticket") == set()
    assert _values("the same as issue #41, fixed in #4512", "ticket") == {"#41", "#4512"}


def test_hosts():
    found = _values("timeouts from db-1.prod.internal (10.0.3.4) and ip-10-0-1-2, config in app.yaml", "host")
    assert found == {"db-1.prod.internal", "10.0.3.4", "ip-10-0-1-2"}


def test_a_java_package_is_no_host():
    assert _values("java.net.SocketTimeoutException: Read timed out at org.example.Client", "host") == set()
    assert _values("GET http://fx-rates.pay.svc.cluster.local/v1/rates and api.example.com. Then", "host") == {
        "fx-rates.pay.svc.cluster.local", "api.example.com"}


def test_the_jvms_own_exception_names_a_family_and_an_apps_stays_shaped():
    trace = ("java.net.SocketTimeoutException: Read timed out\n"
             "\tat java.base/sun.nio.ch.NioSocketImpl.timedFinishRead(NioSocketImpl.java:288)")
    signatures = {e.value: e.weight for e in entities(trace) if e.kind == "signature"}
    assert signatures == {"java:java.net.SocketTimeoutException": 0.4}  # what any client of any service prints
    app = {e.value: e.weight for e in entities("org.postgresql.util.PSQLException: ERROR: column \"x\" does not exist")
           if e.kind == "signature"}
    assert max(app.values()) == 1.0


def test_config_keys_and_not_code_paths():
    text = ("set client_max_body_size 50m, spark.executor.memory=4g, max_connections and JAVA_OPTS; "
            "--max-old-space-size=4096; proxy-body-size: 0; java.lang.OutOfMemoryError at os.path.join(x)")
    assert _values(text, "config") == {"client_max_body_size", "spark.executor.memory", "max_connections",
                                       "JAVA_OPTS", "max-old-space-size", "proxy-body-size"}


def test_versions():
    assert _values("upgrade to 8.15, pinned v2.3.0, image:1.4 and libvips 8.14.2 at 14:05", "version") == \
        {"8.15", "2.3.0", "1.4", "8.14.2"}


def test_signatures_come_from_poimen_signatures_and_weigh_by_shape():
    found = {e.value: e.weight for e in entities("java.lang.OutOfMemoryError: Java heap space\n"
                                                 "\tat com.acme.Exporter.render(Exporter.java:212)\nHTTP 502")
             if e.kind == "signature"}
    # the JVM's own message names a family (any heap fills); the app's frame says where it filled
    assert "java:java.lang.OutOfMemoryError: Java heap space" not in found
    assert found["java:java.lang.OutOfMemoryError@com.acme.Exporter.render"] == 1.0
    assert found["java:java.lang.OutOfMemoryError"] < 1.0 and found["http:502"] < 1.0


def test_generic_names_link_weakly():
    weights = {e.value: e.weight for e in entities("localhost:8080 and 127.0.0.1 refused via ingress-nginx on "
                                                   "db-1.prod.internal")}
    assert weights["localhost"] == weights["127.0.0.1"] == weights["ingress-nginx"] == GENERIC
    assert weights["db-1.prod.internal"] > GENERIC
    # Kubernetes' own components are where an event came from, in every cluster
    events = {e.value: e.weight for e in entities("Warning FailedScheduling default-scheduler 0/6 nodes; "
                                                  "horizontal-pod-autoscaler failed; pg-analytics-1 Pending")}
    assert events["default-scheduler"] == events["horizontal-pod-autoscaler"] == GENERIC
    assert events["pg-analytics"] > GENERIC


def test_a_kafka_client_thread_and_its_log_prefix_name_no_service():
    line = ("2024-03-02 02:17:40,551 WARN  [kafka-producer-network-thread | ledger-events] o.a.k.clients.NetworkClient"
            " - [Producer clientId=ledger-events] Node 2 disconnected.")
    assert _values(line, "service") == set()
    assert _values("[Consumer clientId=consumer-enrich-7, groupId=enrich-geo] then enrich-geo fell behind",
                   "service") == {"enrich-geo"}  # what the message says outside the prefix still counts


def test_thread_names_and_english_are_no_services():
    assert _values("[pool-3-thread-7] a follow-up on the read-only replica", "service") == set()


def test_a_thread_in_parentheses_and_a_labelled_field_name_no_service():
    """Quarkus (Keycloak) and WildFly put the thread in parentheses, WebLogic labels its fields in brackets: the cards
    of a Keycloak log were all about "executor-thread", a WebLogic log's about "partition-name" (bench/incidents42,
    incidents36). What the message says outside them still counts."""
    assert _values("2025-07-08 06:38:57,330 WARN  [org.keycloak.services] (executor-thread-14) KC-SERVICES0013: "
                   "Failed authentication on sso-keycloak", "service") == {"sso-keycloak"}
    assert _values("<[severity-value: 8] [rid: 0:1] [partition-id: 0] [partition-name: DOMAIN] > <policy-search "
                   "failed>", "service") == {"policy-search"}


def test_empty_text_has_no_entities():
    assert entities("") == () and entities("   \n") == ()


def test_english_compounds_uuids_and_shell_prompts_name_no_service():
    assert _values("2.14.0 moved resources to per-component values at the top-level; non-replication slots", "service") == set()
    assert _values("Task reports.build[5c0e2f1a-9d7b-4e83-a1c6-0b2d4f6e8a14] raised", "service") == set()
    # the prompt's user, host and kube context say where a command ran, on every line of the session
    assert _values("[13:58:19] jlo@jump01 (prod-use1) ~ $ kubectl -n web get deploy nginx-edge", "service") == {"nginx-edge"}
    assert _values("checkout-api and reports-worker", "service") == {"checkout-api", "reports-worker"}


def test_a_chat_lines_speaker_and_an_environment_name_say_who_and_where_not_which():
    assert _values("[2026-11-12T15:20:34Z] deploy-bot: payments-worker config change merged", "service") == {
        "payments-worker"}
    weights = {e.value: e.weight for e in entities("rolled out to prod-eu and staging-us-east; orders-api is fine")}
    assert weights["prod-eu"] == weights["staging-us-east"] == GENERIC and weights["orders-api"] > GENERIC


def test_a_text_that_lists_tickets_is_about_none_of_them_alone():
    listed = {e.value: e.weight for e in entities("# scrollback saved by kb for DBA-88 / DBA-91") if e.kind == "ticket"}
    assert listed == {"DBA-88": 0.5, "DBA-91": 0.5}
    assert [e.weight for e in entities("DBA-91: the ALTER died again") if e.kind == "ticket"] == [1.0]


def test_english_compounds_ending_in_a_particle_and_a_commands_program_name_no_service():
    assert not [e for e in entities("the 16G journald drop-in and the add-on were left after the clean-up")
                if e.kind == "service"]
    assert not [e for e in entities("the primary handed out the same auto-increment id") if e.kind == "service"]
    named = {e.value for e in entities("cache-03:~ # systemd-analyze cat-config systemd/journald.conf")
             if e.kind == "service"}
    assert "systemd-analyze" not in named
    assert {e.value for e in entities("ops@jump:~$ sudo kubectl -n pay rollout restart deploy/ledger-api")
            if e.kind == "service"} == {"ledger-api"}


def test_a_flag_that_chooses_what_to_show_is_no_setting():
    assert not [e for e in entities("$ kubectl -n ledger logs ledger-api-5b7d --tail=3 --since 1h") if e.kind == "config"]
    assert {e.value for e in entities("$ helm upgrade x --max-history=5") if e.kind == "config"} == {"max-history"}


def test_a_hyphenated_phrase_joined_by_a_small_word_is_no_service():
    assert ("service", "report-exporter") in {(e.kind, e.value) for e in entities("report-exporter failed")}
    for phrase in ("bytes-per-inode", "end-of-life", "one-by-one"):
        assert not any(e.kind == "service" for e in entities(f"ext4 with default {phrase} ratio")), phrase


def test_a_request_id_is_no_service():
    """"requestId=q-9e41d7c2" on every failed quote named a new service each time (bench/incidents20): a value given to
    an id's key, or a letter and a hex id, names a request."""
    assert not [e for e in entities("quote failed traceId=checkout-abc lane=DE-PL") if e.kind == "service"]
    assert not [e for e in entities("q-9e41d7c2 timed out") if e.kind == "service"]
    assert [e.value for e in entities("checkout-api timed out") if e.kind == "service"] == ["checkout-api"]


def test_a_thread_name_is_no_service():
    """Payara stamps each record with its thread ("_ThreadName=http-thread-pool::http-listener-1(4)"): every card of
    the log was about "http-thread-pool" (bench/incidents25)."""
    text = "[tid: _ThreadID=104 _ThreadName=http-thread-pool::http-listener-1(4)] billing-portal request failed"
    assert [e.value for e in entities(text) if e.kind == "service"] == ["billing-portal"]


def test_a_programs_own_class_is_named_where_a_dump_prints_it_and_where_a_person_names_it():
    """A class named in three words or more, bare or as an object ("(a com.x.PartnerTokenCache)", "…Cache@3b1f0c2a"),
    links a dump to the diagnosis; a frame's or a logger's path, an exception and a short class do not (every trace
    through the framework prints those; bench/incidents44)."""
    assert _values("So: PartnerTokenCache.currentToken() is synchronized", "class") == {"PartnerTokenCache"}
    assert _values("- waiting to lock <0x00000000c7a04e18> (a com.orrinvale.claims.auth.PartnerTokenCache)",
                   "class") == {"PartnerTokenCache"}
    assert _values("BLOCKED on com.orrinvale.claims.numbering.ClaimNumberAllocator@51c8e0d7 owned by", "class") == \
        {"ClaimNumberAllocator"}
    assert _values("\tat com.orrinvale.claims.auth.PartnerTokenCache.refresh(PartnerTokenCache.java:88)", "class") == set()
    assert _values("ERROR [io.qua.ver.htt.run.QuarkusErrorHandler] (executor-thread-1) HttpClosedException, "
                   "StockClient failed", "class") == set()



@pytest.mark.parametrize("line", [
    "booking-web-7c5f9d8b4-2kqxn   0/1   CrashLoopBackOff   4 (38s ago)   5m",
    "ledger-export-84c6f9d7b-w2kxr    0/1     ImagePullBackOff   0    2m",
    "Normal   NotTriggerScaleUp  2m1s (x8 over 12m)  cluster-autoscaler  pod didn't trigger scale-up",
    "Warning  FailedCreatePodSandBox  41s  kubelet  Failed to create pod sandbox",
    "Warning  NodeHasDiskPressure  3m  kubelet  Node ip-10-0-3-17 status is now: NodeHasDiskPressure",
])
def test_a_kubernetes_reason_is_no_class_of_the_program(line):
    """Every cluster prints these reasons, for every incident of every service: naming one says nothing of which
    incident a line is about (a question naming CrashLoopBackOff ranked every crash-looping card up)."""
    assert _values(line, "class") == set()

def test_a_pod_named_in_full_is_where_it_ran_as_a_host_is():
    """"Thread dump from claims-intake-7d9c5b6f4-xk2lp is pasted under the export" and the dump's heading name one
    pod: that links them (a host); the service it belongs to stays a service."""
    found = entities("jcmd 1 Thread.print on claims-intake-7d9c5b6f4-xk2lp, 2024-10-08 10:31 UTC")
    assert {(e.kind, e.value) for e in found} >= {("host", "claims-intake-7d9c5b6f4-xk2lp"),
                                                   ("service", "claims-intake")}
    assert _values("fluentd-x2k9p restarted", "host") == set()  # (a DaemonSet's pod: its suffix alone, no template)
