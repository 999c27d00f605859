"""The gate rule of one turn, ``decide``, called directly: a parsed reply, the previous memory and the config in,
the turn's outcome out (update or not, budget exceeded, parse failed, exit)."""

from __future__ import annotations

import pytest

from poimen.text.tokens import count_tokens
from poimen.write.gate_parser import GateReply
from poimen.write.loop import Decision, LoopConfig, decide

PREVIOUS = "Uploads failed with HTTP 413: the ingress body limit was 10k."
CANDIDATE = PREVIOUS + " Raising proxy-body-size to 50m fixed them."
CFG = LoopConfig(memory_budget=64)


def test_an_update_within_the_budget_replaces_the_memory():
    d = decide(GateReply(True, CANDIDATE, False), PREVIOUS, count_tokens(PREVIOUS), CFG, use_exit_gate=False)
    assert d == Decision(parsed=True, asked=True, update=True, over_budget=False, exit=False, stop=False,
                         candidate=CANDIDATE, candidate_tokens=count_tokens(CANDIDATE), memory=CANDIDATE,
                         memory_tokens=count_tokens(CANDIDATE))


def test_no_update_keeps_the_memory_byte_for_byte():
    d = decide(GateReply(False, "", False), PREVIOUS, 11, CFG, use_exit_gate=False)
    assert (d.parsed, d.asked, d.update, d.over_budget) == (True, False, False, False)
    assert d.memory is PREVIOUS and d.memory_tokens == 11 and d.candidate == "" and d.candidate_tokens == 0


def test_a_candidate_over_the_budget_is_kept_aside_and_the_memory_stands():
    tight = LoopConfig(memory_budget=count_tokens(CANDIDATE) - 1)
    d = decide(GateReply(True, CANDIDATE, False), PREVIOUS, 11, tight, use_exit_gate=False)
    assert d.asked and d.over_budget and not d.update
    assert d.memory is PREVIOUS and d.memory_tokens == 11
    assert d.candidate == CANDIDATE and d.candidate_tokens == tight.memory_budget + 1


def test_a_candidate_exactly_at_the_budget_fits():
    d = decide(GateReply(True, CANDIDATE, False), "", 0, LoopConfig(memory_budget=count_tokens(CANDIDATE)), False)
    assert d.update and not d.over_budget and d.memory == CANDIDATE


def test_a_reply_that_never_parsed_changes_nothing_and_stops_nothing():
    d = decide(None, PREVIOUS, 11, CFG, use_exit_gate=True)
    assert d == Decision(parsed=False, asked=False, update=False, over_budget=False, exit=False, stop=False,
                         candidate="", candidate_tokens=0, memory=PREVIOUS, memory_tokens=11)


@pytest.mark.parametrize("use_exit_gate, stops", [(False, False), (True, True)])
def test_exit_is_recorded_always_and_acted_on_only_under_the_exit_gate(use_exit_gate, stops):
    d = decide(GateReply(True, CANDIDATE, True), PREVIOUS, 11, CFG, use_exit_gate)
    assert d.exit and d.stop is stops
    assert d.update, "an exit turn still applies its update"


def test_an_exit_with_a_candidate_over_the_budget_still_stops():
    d = decide(GateReply(True, CANDIDATE, True), PREVIOUS, 11, LoopConfig(memory_budget=4), use_exit_gate=True)
    assert d.stop and d.over_budget and d.memory is PREVIOUS


def test_decide_is_pure():
    reply, cfg = GateReply(True, CANDIDATE, True), LoopConfig(memory_budget=64, use_exit_gate=True)
    first = decide(reply, PREVIOUS, 11, cfg, True)
    assert decide(reply, PREVIOUS, 11, cfg, True) == first
    assert reply == GateReply(True, CANDIDATE, True) and cfg == LoopConfig(memory_budget=64, use_exit_gate=True)
