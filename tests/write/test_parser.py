"""The gate reply format and its written-down case and spacing rules."""

import pytest

from poimen.errors import ParseError
from poimen.write.gate_parser import parse_gate_reply


@pytest.mark.parametrize("text, update, memory, exit_", [
    ("<check>yes</check><update>m</update><next>continue</next>", True, "m", False),
    ("  \n<check> YES </check>\n<update>\n  m  \n</update>\n<next>End</next>\n", True, "m", True),
    ("<think>reasoning <check>no</check></think>\n<check>no</check><update></update><next>continue</next>", False, "", False),
    ("<check>no</check><update>ignored</update><next>end</next>", False, "ignored", True),
    ("<check>yes</check><update>a &lt;tag&gt; &amp; b</update><next>continue</next>", True, "a <tag> & b", False),
])
def test_valid_replies(text, update, memory, exit_):
    r = parse_gate_reply(text)
    assert (r.update, r.memory, r.exit) == (update, memory, exit_)


@pytest.mark.parametrize("text, reason", [
    ("", "empty reply"),
    ("yes", "expected one <check>"),
    ("<check>maybe</check><update>m</update><next>continue</next>", "check must be yes or no"),
    ("<check>yes</check><update>m</update><next>stop</next>", "next must be continue or end"),
    ("<check>yes</check><update></update><next>continue</next>", "update is empty"),
    ("<check>yes</check><check>no</check><update>m</update><next>continue</next>", "expected one <check>"),
    ("<update>m</update><check>yes</check><next>continue</next>", "out of order"),
    ("Sure! <check>yes</check><update>m</update><next>continue</next>", "out of order"),
    ("<check>yes</check><update>m</update><next>continue</next> thanks", "out of order"),
    ("<CHECK>yes</CHECK><update>m</update><next>continue</next>", "expected one <check>"),
    ("<check>yes</check><update>m</update><next>continue</next><think>late</think>", "<think>"),
])
def test_invalid_replies_name_the_reason(text, reason):
    with pytest.raises(ParseError) as exc:
        parse_gate_reply(text)
    assert reason in exc.value.reason
