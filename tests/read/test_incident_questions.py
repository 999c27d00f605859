"""Which questions ``mem ask`` answers from an incident's card: those about what was done, why, or what did it."""

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
])
def test_other_questions(question):
    assert not asks_about_incident(question)
