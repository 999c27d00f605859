"""Sections: a unit carries the heading it stands under, and the scorer lets that heading count for it; sentences
are not cut after an initial or a title ("Dr. Cora Norman")."""

import duckdb
import pytest

from poimen.write.core import RunRequest, run_loops
from poimen.embedding.embedders import HashEmbedder
from poimen.write.gate_parser import parse_gate_reply
from poimen.index import build_projections
from poimen.llm import offline
from poimen.llm.client import ScriptedClient
from poimen.llm.offline import respond
from poimen.llm.prompts import render
from poimen.relevance import Outline, Scorer, split_units, split_units_under
from poimen.text.words import split_sentences

ARTICLE = """Document 7:
Neighbours
Neighbours is an Australian television soap opera. It was first broadcast on the Seven Network on 18 March 1985. \
It was created by TV executive Reg Watson, who proposed a show about realistic stories. Seven decided to commission \
the show after the success of another series, which aired on the network. Although successful in Melbourne, the \
show underperformed in the Sydney market and struggled for months. The show was then bought by a rival network. \
It has since become the longest running drama series in Australian television, and it was inducted into a hall \
of fame in 2005. It moved to a digital channel in 2011."""
Q = "Who created Neighbours?"
FACT = "It was created by TV executive Reg Watson, who proposed a show about realistic stories."


def test_a_title_line_heads_the_paragraph_under_it_and_a_label_does_not_replace_it():
    units = split_units(ARTICLE)
    by_text = {u.text: u for u in units}
    assert by_text["Document 7:"].heading == "" and by_text["Neighbours"].heading == ""
    assert by_text[FACT].heading == "Neighbours"  # the long paragraph is cut into sentences, each under its title
    assert all(u.heading == "Neighbours" for u in units[2:])
    assert "".join(ARTICLE[u.start:u.end] for u in units[2:3]) == units[2].text  # spans still index the text


def test_markdown_headings_head_every_block_until_the_next_and_lines_that_are_records_head_nothing():
    text = ("# Upload outage\n\n## Fix\nWe rolled back the proxy change.\n\nThe error rate fell within minutes.\n\n"
            "```\nkubectl rollout undo deploy/proxy\n\n# then check the error rate\ncurl -s localhost/metrics\n```\n\n"
            "## Timeline\nPages went out at 10:02.\n\nStarting server\n2024-01-01 12:00:01 ERROR boom\n\n"
            "alice: hi\nbob: restarting the pod now, ok\n\nSteps:\n- drain the node\n- restart\n\n"
            "# Follow-ups\n\nAdd an alert.")
    heads = {u.text: u.heading for u in split_units(text)}
    assert heads["We rolled back the proxy change."] == "Upload outage · Fix"  # the page's title, then the section
    assert heads["The error rate fell within minutes."] == "Upload outage · Fix"  # it runs on past a blank line
    assert heads["curl -s localhost/metrics"] == "Upload outage · Fix"  # a shell comment in a fence is no heading
    assert heads["Pages went out at 10:02."] == "Upload outage · Timeline"
    assert heads["2024-01-01 12:00:01 ERROR boom"] == "Upload outage · Timeline"  # "Starting server" titles no log line
    assert heads["bob: restarting the pod now, ok"] == "Upload outage · Timeline"  # nor is a speaker's line a title
    assert heads["- drain the node"] == "Upload outage · Timeline · Steps"  # a one-word label heads its list
    assert heads["Add an alert."] == "Follow-ups"  # a heading of the same level ends the sections under the last


def test_a_heading_counts_for_its_units_at_its_weight_and_only_where_the_unit_lacks_the_words():
    sc = Scorer()
    q = sc.query(Q)
    plain, headed = sc.score(q, [FACT, FACT], headings=["", "Neighbours"])
    assert headed > plain
    off = Scorer(heading_weight=0.0)
    assert abs(float(off.score(q, [FACT], headings=["Neighbours"])[0]) - float(off.score(q, [FACT])[0])) < 1e-6
    named = "Neighbours was created by TV executive Reg Watson."  # holds the word itself: the heading adds nothing
    a, b = sc.score(q, [named, named], headings=["", "Neighbours"])
    assert abs(float(a) - float(b)) < 1e-6


def test_the_gate_keeps_a_sentence_whose_subject_is_only_in_its_title(monkeypatch):
    from poimen import relevance
    from poimen.llm import offline

    units = split_units(ARTICLE)
    at = [u.text for u in units].index(FACT)
    sc = offline.scorer()
    q = sc.query(Q)
    plain, headed = (float(sc.score(q, [u.text for u in units], True, heads)[at])
                     for heads in ([""] * len(units), [u.heading for u in units]))
    assert headed > plain
    monkeypatch.setattr(relevance, "THRESHOLD", (plain + headed) / 2)  # the mechanism, not the calibrated bar
    monkeypatch.setattr(relevance, "FILL_MARGIN", 0.0)

    def kept() -> list[str]:
        r = render("gate", question=Q, memory="", chunk=ARTICLE, budget=1024)
        return parse_gate_reply(respond(r.system, r.user)).memory.split("\n")

    assert FACT in kept()
    monkeypatch.setattr(sc, "heading_weight", 0.0)
    assert FACT not in kept()


def test_sentences_run_on_past_initials_titles_and_abbreviations():
    text = ("The idea was conceived by Gov. William Winter, Dr. Cora Norman and Ann B. Davis in 1978. "
            "Love Forecast (; lit. Today's Love) is a film, e.g. a comedy. It ends here.")
    assert split_sentences(text) == [
        "The idea was conceived by Gov. William Winter, Dr. Cora Norman and Ann B. Davis in 1978.",
        "Love Forecast (; lit. Today's Love) is a film, e.g. a comedy.", "It ends here."]
    long = " ".join([text] * 8)  # past MAX_UNIT_TOKENS: the paragraph is cut into sentences, the same way
    assert "Dr. Cora Norman" in split_units(long)[0].text


def test_the_offline_answer_passes_over_headings_and_bare_labels_while_a_line_states_something():
    from poimen.llm.offline import answer

    question = "how was the 413 on uploads fixed?"
    heading = "## Symptom: uploads fail with 413"
    fact = "Mitigated at 09:43 by overriding the body-size annotation on the uploads ingress; the 413s stopped."
    memory = "\n".join([heading, "payments-worker:", fact, "Lunch is at noon."])
    r = render("answer", question=question, memory=memory)
    reply = answer(r.system, r.user)
    assert fact in reply and heading not in reply and "payments-worker:" not in reply
    r = render("answer", question=question, memory=heading)  # alone, a heading is still the best there is
    assert heading in answer(r.system, r.user)


RUNBOOK = ("# Payments runbook\n\n## Rotating the signing key\n"
           + "".join(f"Step {i}: check that replica {i} of the ledger reports healthy before going on.\n\n" for i in range(1, 9))
           + "```\nvault write -f transit/keys/payments/rotate\n\n# then restart\nkubectl rollout restart deploy/payments\n```\n\n"
           + "Finally page the ledger owners and close the change ticket.\n\n## Restoring a backup\nAsk the DBA team first.\n")


@pytest.mark.parametrize("cut", [i for i, ch in enumerate(RUNBOOK) if ch == "\n" and 0 < i < len(RUNBOOK) - 1])
def test_a_text_cut_anywhere_keeps_its_headings_when_the_outline_is_carried(cut):
    whole = {(u.start, u.text): u.heading for u in split_units(RUNBOOK)}
    first, outline = split_units_under(RUNBOOK[:cut + 1], Outline())
    rest, _ = split_units_under(RUNBOOK[cut + 1:], outline)
    carried = {(u.start + cut + 1, u.text): u.heading for u in rest}
    # Every unit of the second piece that is a unit of the whole text stands under the same headings (a cut inside
    # a paragraph makes other units, which have no counterpart to compare).
    shared = carried.keys() & whole.keys()
    assert shared or not rest
    assert {k: carried[k] for k in shared} == {k: whole[k] for k in shared}


def test_a_section_cut_over_several_chunks_heads_the_units_of_every_chunk(tmp_path):
    source = tmp_path / "runbook.md"
    source.write_text(RUNBOOK, encoding="utf-8")
    embedder = HashEmbedder()
    offline.configure(embedder)
    try:
        root = tmp_path / "log"
        client = ScriptedClient([offline.respond], repeat_last=True, model_id="scripted/offline")
        assert run_loops(RunRequest(root=root, sources=[source], query="How is the signing key rotated?",
                                    chunk_tokens=64), client=client).ok
        build_projections(root, root / "index.duckdb", embedder)
    finally:
        offline.configure()
    with duckdb.connect(str(root / "index.duckdb"), read_only=True) as db:
        rows = db.execute("SELECT text, heading, position FROM unit WHERE kind = 'evidence'").fetchall()
    heads = {text: (heading, position) for text, heading, position in rows}
    last = heads["Finally page the ledger owners and close the change ticket."]
    assert last[1] > 0  # in a later chunk than the headings: the case this is about
    assert last[0] == "Payments runbook · Rotating the signing key"
    assert heads["kubectl rollout restart deploy/payments"][0] == "Payments runbook · Rotating the signing key"
    assert heads["Ask the DBA team first."][0] == "Payments runbook · Restoring a backup"


def test_an_items_label_is_no_sentence_of_its_own():
    from poimen.text.words import split_sentences

    assert split_sentences("R5. Done: re-seeded the replica. R6. In progress: archiving.") == \
        ["R5. Done: re-seeded the replica.", "R6. In progress: archiving."]
    assert split_sentences("We ran step 2. Then it worked.") == ["We ran step 2.", "Then it worked."]
