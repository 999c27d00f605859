"""Which questions ``mem ask`` answers from an incident's card (those about what was done, why, or what did it),
and which card a lookup puts first when two hold the same error."""

from __future__ import annotations

import pytest

from poimen.read.incidents import asks_about_incident


@pytest.mark.parametrize("question", [
    "how was the 413 on uploads fixed?",
    "what was the root cause of the checkout outage?",
    "which timeouts did we raise on the payments client?",  # what people did
    "how did we get the consumers back into their group?",
    "what did the team end up changing on the gateway?",
    "how were the stuck writes unblocked?",  # a passive done to the thing
    "what finally cleared the queue backlog?",  # what did it
    "what was filling the root volume on the build hosts?",
    "what was behind the 502s from the edge?",
    "which settings let the big messages through?",  # the change itself
    "what change stopped the pods from restarting?",
    "the gateway threw 5xx because its redis was full; what got memory down?",  # what got it back
    "what finally got it working?",
    "the partner API answered 503 in the night; what brought it back?",
    "which option or release stops the duplicates?",  # what keeps it from coming back
    "what turned a slowdown into an outage and what caps it now?",
    "what ran out and what did the follow-up release change?",
    "carriers could not connect hours later; why, and what got them working again?",
    "how were writes restored and kept from happening again?",
    "what network pieces were the new subnets missing?",
    "a restart cleared it; what was the lasting change so the next rotation does not hit us?",  # named after a verb
    "rolling back did not help; what had to be updated?",  # what it took
    "it crashed even after we doubled the heap; what was actually changed to make them go through?",
    "what had someone changed and how was it undone?",
    "who was blocking the cleanup and what keeps it from happening again?",
    "curl from the same box works; is there a knob that avoids it without downgrading?",
    "rolling back our release did nothing; what got the poller updating parcels again?",
    "every upload to our object storage is refused; what do I put in the config to make it work?",  # what to do
    "my app stops booting since the new image; what do I have to do?",
    "imports fail a few seconds in; why, and what makes it work?",  # why, then more
    "the nightly job died again. why?",
])
def test_questions_about_what_was_done_or_why(question):
    assert asks_about_incident(question)


@pytest.mark.parametrize("question", [
    "What did Caroline research?",  # a conversation's questions about people are no incident questions
    "When did Melanie paint a sunrise?",
    "What inspired Caroline to paint?",
    "How long has Mel been married?",
    "what is the on-call rotation for the payments team?",
    "which dashboards show the checkout latency?",
    "What did Caroline do after the race?",
    "What keeps Melanie busy?",
    "What got Caroline interested in art?",
    "What is John missing most?",
    "What was the best change Caroline made this year?",
    "What had to be packed for the camping trip?",
    "How was the cake made?",
    "What keeps Caroline from going back to school?",
    "Is there a way to the lake from the campsite?",
    "What should Caroline add to her garden?",
    "What do you think Caroline will do next?",
    "What made them go to the beach that day?",
])
def test_other_questions(question):
    assert not asks_about_incident(question)


def test_of_two_cards_with_one_error_the_one_naming_what_the_error_names_ranks_first():
    import numpy as np

    from poimen.read.context_lines import Origin
    from poimen.read.incidents import IncidentLine, IncidentView, rank_cards

    error = "FATAL: sorry, too many clients already"

    def card(sha: str, service_line: str) -> IncidentView:
        origin = Origin("memory", "L1", sha * 64, "s.md", 0, 1)
        return IncidentView(sha * 64, sha, "", "s.md", "", "", (
            IncidentLine("symptom", f"{error} on {service_line}", origin),
            IncidentLine("action", f"raised the pool size of {service_line}", origin)))

    class Engine:  # every line the same score: only what the question names can tell the two cards apart
        def __init__(self, views):
            self.candidate = {line.text: i for i, line in enumerate(l for v in views for l in v.lines)}

        def scores(self, question):
            return np.full(len(self.candidate), 0.9)

    views = {v.sha: v for v in (card("a", "orders-db"), card("b", "checkout-api"))}
    ranked = rank_cards(Engine(views.values()), f"{error} (checkout-api-5b8f9c7d6-q2w4e)", views)
    assert [v.title for _, v in ranked] == ["b", "a"]
    ranked = rank_cards(Engine(views.values()), f"{error} (orders-db)", views)
    assert [v.title for _, v in ranked] == ["a", "b"]



def test_the_raw_line_an_incident_printed_names_its_class_for_the_card():
    """Two incidents of one health check: each card kept the diagnosis, not the class; the raw line each incident
    printed ("BLOCKED on com.x.PartnerTokenCache@…") names the monitor, and the question names one of them."""
    import numpy as np

    from poimen.read.card_rank import rank_cards
    from poimen.read.context_lines import Origin
    from poimen.read.incidents import IncidentLine, IncidentView
    from poimen.read.incident_view import named

    check = 'STUCK_THREAD: Stuck Thread: "http-listener(1)" id={} BLOCKED on com.acme.claims.{}@{} owned by id={}'

    def card(sha: str, owner: str) -> IncidentView:
        origin = Origin("memory", "L1", sha * 64, "s.txt", 0, 1)
        return IncidentView(sha * 64, sha, "", "s.txt", "", "", (
            IncidentLine("symptom", f"the portal hung: every request thread waited ({sha})", origin),
            IncidentLine("action", f"moved the slow call out of the lock ({sha})", origin)),
            members=((sha * 64, 0, 20),)), check.format(131, owner, "6e2d91f0", 103)

    class Engine:  # every line the same score, and each card's incident printed the check once
        def __init__(self, views, printed):
            self.texts = [line.text for v in views for line in v.lines] + printed
            self.candidate = {text: i for i, text in enumerate(self.texts)}
            self.origins = [[] for _ in self.texts[:-len(printed)]] + [
                [Origin("chunk", "L0", v.sha, "s.txt", 0, 9)] for v in views]

        def scores(self, question):
            return np.full(len(self.texts), 0.9)

    (a, printed_a), (b, printed_b) = card("a", "PartnerTokenCache"), card("b", "ClaimNumberAllocator")
    views = {v.sha: v for v in (a, b)}
    asked = check.format(207, "ClaimNumberAllocator", "7a11c3e2", 88)
    assert ("class", "ClaimNumberAllocator") in named(asked)
    ranked = rank_cards(Engine(list(views.values()), [printed_a, printed_b]), asked, views)
    assert [v.title for _, v in ranked] == ["b", "a"]
    asked = check.format(207, "PartnerTokenCache", "7a11c3e2", 88)
    ranked = rank_cards(Engine(list(views.values()), [printed_a, printed_b]), asked, views)
    assert [v.title for _, v in ranked] == ["a", "b"]

def _view(sha: str, role: str = "action"):
    from poimen.read.incidents import IncidentLine, IncidentView

    line = IncidentLine(role, f"{sha}: raised the pool to 30", None)
    return IncidentView(sha, sha, "", "s", "", "", (line,))


class _Hit:
    def __init__(self, sha: str, score: float):
        self.sha, self.score, self.kind = sha, score, "memory"


class _Index:
    def __init__(self, *hits):
        self.hits = list(hits)

    def search(self, question, k, provenance=True):
        return self.hits[:k]


@pytest.mark.parametrize("second, lines, picked", [
    (0.0300, {"a": 0.5, "b": 0.9}, "b"),  # a tie (the same fused score): the lines tell them apart
    (0.0299, {"a": 0.5, "b": 0.9}, "b"),  # within CARD_TIE of the first: a tie too
    (0.0290, {"a": 0.5, "b": 0.9}, "a"),  # clearly second: the fused order stands, whatever its lines
    (0.0300, {"a": 0.9, "b": 0.9}, "a"),  # tied lines as well: the fused order
])
def test_an_ask_between_two_cards_that_tie_goes_to_the_one_whose_lines_match(monkeypatch, second, lines, picked):
    import poimen.read.incidents as module

    views = {"a": _view("a"), "b": _view("b")}
    monkeypatch.setattr(module, "incident_views", lambda db, shas: {s: views[s] for s in shas})
    monkeypatch.setattr(module, "rank_cards",
                        lambda engine, q, vs: sorted(((lines[s], v) for s, v in vs.items()), key=lambda x: -x[0]))
    opened = []
    card = module.matched_card("db", "how was it fixed?", _Index(_Hit("a", 0.0300), _Hit("b", second)),
                               lambda: opened.append(1) or "engine")
    assert card.sha == picked
    assert bool(opened) == (second >= 0.0300 * (1 - module.CARD_TIE))  # the engine is opened only for a tie


def _card(sha: str, roles: tuple[str, ...], names: str):
    from poimen.read.incidents import IncidentLine, IncidentView

    return IncidentView(sha, sha, "", "s", "", "", tuple(IncidentLine(r, f"{r} on {names}", None) for r in roles))


@pytest.mark.parametrize("explaining, lead", [
    # the pasted error is the line of a card that says no fix; the card that does names another service: it is
    # another incident, and no card leads (the lookup ranks its hits, the exact line first)
    (_card("b", ("symptom", "cause"), "lz4-java"), []),
    # the card that says the fix names the host the other card's alert names: one incident told in two cards
    (_card("b", ("symptom", "cause"), "docs.example.net"), ["b"]),
])
def test_a_card_of_symptoms_alone_that_matches_clearly_better_keeps_another_incidents_fix_from_leading(
        monkeypatch, explaining, lead):
    import poimen.read.incidents as module

    views = {"a": _card("a", ("symptom",), "invalid-test-host and docs.example.net"), "b": explaining}
    scores = {"a": 2.7, "b": 1.4}  # the explaining card scores under CLOSE of the other
    monkeypatch.setattr(module, "rank_cards",
                        lambda engine, q, vs: sorted(((scores[s], v) for s, v in vs.items()), key=lambda x: -x[0]))
    assert [v.sha for _, v in module.leading_cards(None, "Tests run: 51, Failures: 2", views)] == lead
    scores["b"] = 2.6  # close to the card of symptoms alone: it leads, whatever it names
    assert [v.sha for _, v in module.leading_cards(None, "Tests run: 51, Failures: 2", views)] == ["b"]
