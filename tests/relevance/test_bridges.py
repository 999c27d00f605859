"""Name bridges: a multi-word name the memory holds pulls in its second hop, even when its words are common."""

from poimen.write.gate_parser import parse_gate_reply
from poimen.llm.offline import respond
from poimen.llm.prompts import render
from poimen.relevance import Scorer, name_phrases, stem

Q = "Grace Krilanovich's first novel came out with an independent publisher; in which city is it based?"
Q2 = "Where is the publisher of Krilanovich's novel based?"
FIRST_HOP = "Grace Krilanovich is an American author whose first novel was published by Two Dollar Radio."
SECOND_HOP = "Two Dollar Radio is based in Columbus, Ohio, and was founded in 2005."
LOOKALIKE = "The radio station in Dayton, Ohio, was founded in 2005."


def gate(memory: str, chunk: str, question: str = Q):
    r = render("gate", question=question, memory=memory, chunk=chunk, budget=1024)
    return parse_gate_reply(respond(r.system, r.user))


def test_a_name_is_its_content_stems_weighed_together():
    names = name_phrases(FIRST_HOP)
    assert frozenset(stem(w) for w in ("two", "dollar", "radio")) in names
    assert frozenset(stem(w) for w in ("grace", "krilanovich")) in names
    assert not name_phrases("ERROR WARN INFO Radio")  # log levels are not names, and one word is not a name
    assert not name_phrases("The radio was loud.")


def test_a_memory_name_raises_a_unit_that_holds_it_whole_and_no_other():
    sc = Scorer()
    plain, bridged = sc.query(Q), sc.query(Q, [FIRST_HOP])
    second, lookalike = sc.score(plain, [SECOND_HOP, LOOKALIKE]), sc.score(bridged, [SECOND_HOP, LOOKALIKE])
    assert lookalike[0] - second[0] > 0.05  # the whole name counts...
    assert abs(lookalike[1] - second[1]) < 1e-6  # ...and "radio" alone counts nothing more
    assert not any(set(s) <= set(plain.terms) for s, _ in bridged.bridges)  # the question's own names do not bridge


def test_a_bridge_found_in_a_chunk_pulls_its_second_hop_from_the_same_chunk(monkeypatch):
    from poimen import relevance

    # The bar between the second hop's plain and bridged scores (the hash embedder scores low): the mechanism, not
    # the calibrated value, is under test.
    sc = Scorer()
    plain, bridged = (float(sc.score(q, [SECOND_HOP])[0]) for q in (sc.query(Q2), sc.query(Q2, [FIRST_HOP])))
    assert bridged > plain
    monkeypatch.setattr(relevance, "THRESHOLD", (plain + bridged) / 2)
    monkeypatch.setattr(relevance, "FILL_MARGIN", 0.0)
    # Premises: the second hop alone does not open the gate; after the first hop it does.
    assert not gate("", SECOND_HOP, Q2).update
    later = gate(FIRST_HOP, SECOND_HOP, Q2)
    assert later.update and SECOND_HOP in later.memory
    # Both in one chunk: the same memory as reading them one chunk after the other.
    together = gate("", f"{FIRST_HOP}\n\nLunch is at noon today.\n\n{SECOND_HOP}", Q2)  # not neighbours
    assert together.update and together.memory.split("\n") == later.memory.split("\n")
