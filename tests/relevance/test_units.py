"""How text is cut into scoring units (``poimen.relevance.split_units``): records whole, prose joined, spans exact."""

from poimen.relevance import split_units

RUNBOOK = """Disk pressure runbook

- restart the ingest pod with kubectl rollout restart, then
  drain the node if the eviction repeats within the hour
- page the storage on-call
  * check replication lag first
1. rotate the logs, which on this cluster are
   kept under /var/log/ingest
2024-03-01 12:00:01 ERROR disk full on node-7
  at com.acme.Writer.flush(Writer.java:88)

The ingest service writes every batch to local disk before it ships the
batch upstream, so a slow upstream fills the disk within minutes and the
kubelet starts evicting pods on the node.
"""


def units():
    return split_units(RUNBOOK)


def test_every_unit_is_its_span_of_the_source_modulo_line_breaks():
    for u in units():
        assert " ".join(RUNBOOK[u.start:u.end].split()) == u.text


def test_a_wrapped_list_item_is_one_unit():
    texts = [u.text for u in units()]
    assert ("- restart the ingest pod with kubectl rollout restart, then drain the node if the eviction repeats "
            "within the hour") in texts
    assert "1. rotate the logs, which on this cluster are kept under /var/log/ingest" in texts
    assert not any(t.startswith("drain the node") or t.startswith("kept under") for t in texts)


def test_a_nested_item_and_a_stack_frame_stay_their_own_units():
    texts = [u.text for u in units()]
    assert "- page the storage on-call" in texts
    assert "* check replication lag first" in texts
    assert "2024-03-01 12:00:01 ERROR disk full on node-7" in texts
    assert "at com.acme.Writer.flush(Writer.java:88)" in texts


def test_hard_wrapped_prose_is_joined_into_sentences():
    texts = [u.text for u in units()]
    assert any(t.startswith("The ingest service writes every batch") and t.endswith("evicting pods on the node.")
               for t in texts)


def test_a_continuation_that_opens_in_bold_stays_with_its_item_and_a_star_bullet_stays_a_bullet():
    text = ("   - JSON body `{\"message\":\"Request size limit exceeded\"}`: rejected by\n"
            "     **Kong**'s request-size-limiting plugin. Check the plugin on the\n"
            "     ingress.\n"
            "   * a star bullet is still its own item\n")
    texts = [u.text for u in split_units(text)]
    assert texts == ["- JSON body `{\"message\":\"Request size limit exceeded\"}`: rejected by **Kong**'s "
                     "request-size-limiting plugin. Check the plugin on the ingress.",
                     "* a star bullet is still its own item"]


def test_an_items_sentence_runs_on_over_a_clock_that_starts_its_next_line():
    """"- Cause: product moved the flag from 5% to 100% at" / "  13:22 (planned step …)": one sentence wrapped
    where a clock happened to fall (bench/incidents24); an entry under a label that ends its line stays its own."""
    text = ("- Cause: product moved flag `orders.export_v2` from 5% to 100% in Flagpole at\n"
            "  13:22 (planned step, but 25% was the plan).\n"
            "- Timeline:\n"
            "  13:40 first OOMKilled pod\n")
    texts = [u.text for u in split_units(text)]
    assert texts[0].endswith("in Flagpole at 13:22 (planned step, but 25% was the plan).")
    assert "13:40 first OOMKilled pod" in texts
