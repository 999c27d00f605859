"""Phrase matching for card ranking: the message a pasted error shares with the line it was printed as, word for
word, across the ids, hashes and counts that differ between occurrences."""

from __future__ import annotations

from poimen.read.card_rank import PHRASE_TOKENS, phrase_tokens, shared_run


def test_a_hash_and_a_pod_suffix_differ_between_occurrences_as_a_number_does():
    printed = "GET https://static.shop.example/assets/js/7313.4be1c0a2.chunk.js net::ERR_ABORTED 403 (Forbidden)"
    again = "GET https://static.shop.example/assets/js/5120.91af3d7e.chunk.js net::ERR_ABORTED 403 (Forbidden)"
    assert shared_run(phrase_tokens(again), phrase_tokens(printed)) >= PHRASE_TOKENS
    pod = "Readiness probe failed for pod ledger-api-6c8f7d9b5-p2m4x: connection refused on port 8080"
    assert phrase_tokens(pod) == phrase_tokens(pod.replace("6c8f7d9b5-p2m4x", "7d9f8b6c5-x2k4q"))


def test_words_and_short_versions_stay_words():
    assert phrase_tokens("OOMKilled in worker v2 after 3 retries") == ["oomkilled", "in", "worker", "v", "0", "after",
                                                                      "0", "retries"]
    assert phrase_tokens("checkout-api returned 502 Bad Gateway") == ["checkout", "api", "returned", "0", "bad",
                                                                     "gateway"]


def test_a_short_alert_firing_again_with_other_labels_is_its_own_message():
    from poimen.read.card_rank import run_needed

    before = phrase_tokens("[FIRING:1] LoginSuccessRateLow auth-web (prod-use1, severity=page)")
    again = phrase_tokens("[FIRING:1] LoginSuccessRateLow auth-web (prod-euw1, severity=page)")
    assert run_needed(again) < PHRASE_TOKENS <= len(again)  # a long pasted error still needs the full run
    assert shared_run(again, before) >= run_needed(again)
    other = phrase_tokens("[FIRING:1] CheckoutLatencyHigh cart-api (prod-euw1, severity=page)")
    assert shared_run(again, other) < run_needed(again)
    long = phrase_tokens("Caused by: org.postgresql.util.PSQLException: FATAL: sorry, too many clients already "
                         "for role app on database orders")
    assert run_needed(long) == PHRASE_TOKENS


def _view(sha: str, symptoms: list[str]):
    from poimen.read.context_lines import Origin
    from poimen.read.incident_view import IncidentLine, IncidentView

    origin = Origin("memory", "L1", sha, "orders.log", 0, -1, "episodic")
    return IncidentView(sha, sha, "", "orders.log", "", "", tuple(IncidentLine("symptom", s, origin) for s in symptoms))


def test_a_field_every_error_of_a_card_logs_alike_tells_two_cards_of_one_message_apart():
    """Two incidents print one message ("checkout failed … step=… took=…"): the step is the same in each of a card's
    errors and differs between the cards, while the cart and the request differ within one. A new occurrence's step
    says which incident it is; its cart and request say nothing."""
    from poimen.read.card_rank import _fields, _fields_agree

    line = "checkout failed requestId=c-{} cart={} step={} took=3001{}ms"
    pricing = _view("a", [line.format("4be1a9d7", "NL-221", "pricing", 1), line.format("71f0e2aa", "DE-904", "pricing", 6)])
    stock = _view("b", [line.format("9e01f3c2", "NL-221", "stock", 4), line.format("c2b51e40", "FR-310", "stock", 2)])
    asked = _fields(line.format("3c8d51fa", "IT-077", "pricing", 9))
    assert _fields_agree(asked, pricing) == 1.0
    assert _fields_agree(asked, stock) == -1.0
    assert _fields_agree(_fields("checkout failed for every cart"), pricing) == 0.0  # no field: no vote
    one = _view("c", [line.format("4be1a9d7", "NL-221", "pricing", 1)])
    assert _fields_agree(asked, one) == 0.0  # one error alone shows no field to be the same in all
