"""A word list in a question names alternatives: a unit about one of them answers it."""

from dataclasses import replace

from poimen.relevance import Scorer
from poimen.relevance.terms import alternatives, facets

Q = "What plans, goals and dreams did they talk about?"
TURN = "[8 May 2023] Caroline: My dream is to open a small bakery by the sea one day."


def test_a_list_of_three_or_more_words_becomes_one_question_per_word_and_names_stay_whole():
    assert alternatives(Q) == ["What plans did they talk about?", "What goals did they talk about?",
                               "What dreams did they talk about?"]
    assert alternatives("family, kids, partner and pets") == ["family", "kids", "partner", "pets"]
    assert alternatives("Which errors, warnings, or crashes occurred?") == [
        "Which errors occurred?", "Which warnings occurred?", "Which crashes occurred?"]
    assert not alternatives("Who founded the Institute of Arts and Letters?")  # two items, and a name
    assert not alternatives("Did Peter, Paul and Mary record it?")  # Title-case: names, not alternatives
    assert not alternatives("Which commands or config changes fixed a problem?")
    # A compound question keeps its clauses; the list's alternatives join them.
    both = facets("What failed, and which fixes, reverts or patches were applied?")
    assert both == ["What failed", "which fixes, reverts or patches were applied", "which fixes were applied",
                    "which reverts were applied", "which patches were applied"]


def test_a_unit_about_one_alternative_scores_as_if_the_question_asked_for_it_alone():
    sc = Scorer()
    q = sc.query(Q)
    assert len(q.facets) == 3
    listed = float(sc.score(q, [TURN])[0])
    whole_only = float(sc.score(replace(q, facets=()), [TURN])[0])
    alone = float(sc.score(sc.query("What dreams did they talk about?"), [TURN])[0])
    assert listed > whole_only
    assert abs(listed - max(alone, whole_only)) < 1e-5  # the best of the whole question and the "dreams" one
