"""Model faults over real HTTP: litellm against a loopback OpenAI-compatible server that misbehaves on cue.

The retry policy as designed: transport faults (timeouts, 429 with
Retry-After, 5xx, cut or dropped responses) are litellm's to retry, and when
its retries run out the run stops resumably (``ModelUnavailable``: status
interrupted, journal kept, verify ok, ``--resume`` finishes). Reply faults
(truncated, empty, extra or repeated tags, unicode junk) are the loop's: the
same chunk is asked again, at most three calls, then ``parse_failed`` — never
a defaulted gate, and ``parse_failed`` only ever for a reply that did not parse.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from poimen.testing.openai_server import CUT, DROP, FakeOpenAI, hang, status, transformed
from helpers import loop_run_ids

from poimen.cli.options import explain
from poimen.errors import RunInterrupted
from poimen.write.core import RunRequest, run_loops
from poimen.domain import canonical_json
from poimen.errors import ParseError
from poimen.write.gate_parser import parse_gate_reply
from poimen.llm.client import LiteLLMClient
from poimen.log.journal import read_journal
from poimen.log.store import EventLog
from poimen.log.verify import verify

QUERY = "What caused the outage?"
PARAGRAPHS = [
    "At 09:14 the upload outage began: nginx returned 413 Request Entity Too Large for files over 1 MB.",
    "The lunch order for the team was pizza, and nobody remembered the drinks.",
    "The outage was caused by client_max_body_size falling back to the 1m default after the ingress chart upgrade.",
]
MODEL = "openai/fake-gate"


pytestmark = pytest.mark.usefixtures("fake_api_key")


@pytest.fixture
def source(tmp_path) -> Path:
    p = tmp_path / "incident.md"
    p.write_text("\n\n".join(PARAGRAPHS) + "\n")
    return p


def run(root: Path, server: FakeOpenAI, source: Path, resume: bool = False, **client_kw):
    client = LiteLLMClient(MODEL, api_base=server.api_base, **{"timeout": 5.0, "num_retries": 3, **client_kw})
    req = RunRequest(root=root, sources=[source], query=QUERY, chunk_tokens=30, resume=resume, concurrency=1)
    return run_loops(req, client=client)


def events(root: Path) -> list:
    log = EventLog(root)
    return [e for rid in loop_run_ids(log) for e in log.run_events(rid)]


def rows(root: Path, kinds=("gate", "evidence", "memory", "run_end")) -> list[str]:
    return [canonical_json({k: v for k, v in e.to_row().items() if k not in ("hash", "prev_hash", "attrs")})
            for e in events(root) if e.kind in kinds]


@pytest.fixture
def clean(tmp_path, server, source) -> list[str]:
    """The fault-free run: three turns, the outage paragraphs opened, the lunch paragraph not."""
    server.reset()
    result = run(tmp_path / "clean", server, source)
    assert result.ok and server.calls == 3
    gates = [e for e in events(tmp_path / "clean") if e.kind == "gate"]
    assert [g.update for g in gates] == [True, False, True]
    server.reset()
    return rows(tmp_path / "clean")


TRANSPORT_FAULTS = {
    "500": [status(500)],
    "503x2": [status(503), status(503)],
    "429-retry-after": [status(429, retry_after=1)],
    "cut-body": [CUT],
    "dropped-connection": [DROP],
}


@pytest.mark.parametrize("fault", list(TRANSPORT_FAULTS))
def test_transport_fault_is_retried_by_litellm_and_changes_nothing(tmp_path, server, source, clean, fault):
    server.script(*TRANSPORT_FAULTS[fault])
    t0 = time.monotonic()
    result = run(tmp_path / "log", server, source)
    elapsed = time.monotonic() - t0
    assert result.ok, [o.error for o in result.outcomes]
    assert server.calls == 3 + len(TRANSPORT_FAULTS[fault]), "each fault costs exactly one extra HTTP call"
    assert rows(tmp_path / "log") == clean, "a retried transport fault is not a gate decision"
    assert not [e for e in events(tmp_path / "log") if e.kind == "parse_failed"]
    if fault == "429-retry-after":
        assert elapsed >= 0.9, "Retry-After is honoured"


def test_timeout_is_retried(tmp_path, server, source, clean):
    server.script(hang(3))
    result = run(tmp_path / "log", server, source, timeout=0.5)
    assert result.ok
    assert server.calls == 4 and rows(tmp_path / "log") == clean


def test_retries_run_out_stop_the_run_resumably(tmp_path, server, source, clean):
    """A model that keeps failing: turn 1 resolves, turn 2 exhausts litellm's retries; nothing is defaulted."""
    server.script(transformed(lambda r: r), *[status(500)] * 4)
    result = run(tmp_path / "log", server, source, num_retries=3)
    (outcome,) = result.outcomes
    assert outcome.status == "interrupted" and isinstance(outcome.problem, RunInterrupted)
    assert outcome.problem.events_kept == 4 and "fake status 500" in outcome.problem.cause
    assert "--resume" in explain(outcome.problem), "the CLI renders the hint the core leaves out"
    assert server.calls == 1 + 4, "one good call, then one call plus three litellm retries"
    log = EventLog(tmp_path / "log")
    assert not loop_run_ids(log) and len(log.journals()) == 1
    report = verify(tmp_path / "log")
    assert report.ok and report.resumable_runs == 1
    journal_kinds = [e.kind for e in read_journal(log.journals()[0])[0]]
    assert journal_kinds == ["run_start", "gate", "evidence", "memory"], "only the resolved turn is kept"
    server.reset()
    result = run(tmp_path / "log", server, source, resume=True)
    assert result.ok and server.calls == 2, "resume asks only for the unresolved turns"
    assert rows(tmp_path / "log") == clean
    assert verify(tmp_path / "log").ok


def test_timeouts_run_out_stop_the_run_resumably(tmp_path, server, source):
    server.script(hang(2), hang(2))
    result = run(tmp_path / "log", server, source, timeout=0.3, num_retries=1)
    assert result.outcomes[0].status == "interrupted"
    assert "Timeout" in result.outcomes[0].error
    assert verify(tmp_path / "log").ok
    server.reset()
    assert run(tmp_path / "log", server, source, resume=True).ok


def _truncated(r: str) -> str:
    return r[: len(r) // 2]


def _extra_tag(r: str) -> str:
    return r + "\n<check>yes</check>"


def _repeated(r: str) -> str:
    return r.replace("<update>", "<update><update>", 1)


def _junk(r: str) -> str:
    return "\u202e\ufeff\x00\udcff"[0:2] + "ｃｈｅｃｋ 🙃 " + r.replace("<check>", "<\u0441heck>")  # Cyrillic с


def _prose(r: str) -> str:
    return "Sure! Here is my answer:\n" + r


REPLY_FAULTS = {
    "truncated": _truncated,
    "empty": lambda r: "",
    "extra-tag": _extra_tag,
    "repeated-tag": _repeated,
    "unicode-junk": _junk,
    "prose-around-tags": _prose,
}


@pytest.mark.parametrize("fault", list(REPLY_FAULTS))
def test_reply_fault_then_good_reply_costs_one_more_call(tmp_path, server, source, clean, fault):
    server.script(transformed(REPLY_FAULTS[fault]))
    result = run(tmp_path / "log", server, source)
    assert result.ok and server.calls == 4
    evs = events(tmp_path / "log")
    first_gate = next(e for e in evs if e.kind == "gate")
    assert first_gate.attributes["attempts"] == 2 and len(first_gate.attributes["reasons"]) == 1
    assert not [e for e in evs if e.kind == "parse_failed"]
    assert rows(tmp_path / "log", kinds=("memory", "evidence")) == [r for r in clean if '"kind":"memory"' in r or '"kind":"evidence"' in r]


@pytest.mark.parametrize("fault", list(REPLY_FAULTS))
def test_three_bad_replies_are_parse_failed_never_a_default(tmp_path, server, source, fault):
    server.script(*[transformed(REPLY_FAULTS[fault])] * 3)
    result = run(tmp_path / "log", server, source)
    assert result.ok and server.calls == 3 + 2, "three calls for the bad chunk, then one per remaining chunk"
    evs = events(tmp_path / "log")
    turn1 = [e for e in evs if e.turn == 1 and e.kind != "run_start"]
    assert [e.kind for e in turn1] == ["parse_failed"], "no gate, no evidence, no memory for an unparsed turn"
    (failed,) = turn1
    assert failed.update is False and failed.exit is None
    assert failed.attributes["attempts"] == 3 and len(failed.attributes["replies"]) == 3
    for reply in failed.attributes["replies"]:  # parse_failed only for replies that really do not parse
        with pytest.raises(ParseError):
            parse_gate_reply(reply)
    end = evs[-1]
    assert end.kind == "run_end" and end.attributes["parse_failed"] == 1 and end.attributes["chunks_seen"] == 3
    memories = [e for e in evs if e.kind == "memory"]
    assert len(memories) == 1 and memories[0].turn == 3, "the loop went on and still opened turn 3"


def test_no_parse_failed_event_ever_holds_a_parsable_reply(tmp_path, server, source):
    """A mixed storm of transport and reply faults: every parse_failed reply is unparsable, every gate reply parses."""
    server.script(status(500), transformed(_truncated), DROP, transformed(_junk), status(429, 0), transformed(_extra_tag),
                  transformed(_repeated), CUT, transformed(lambda r: ""))
    result = run(tmp_path / "log", server, source)
    assert result.ok
    for e in events(tmp_path / "log"):
        if e.kind == "gate":
            parse_gate_reply(e.text)
        if e.kind == "parse_failed":
            for reply in e.attributes["replies"]:
                with pytest.raises(ParseError):
                    parse_gate_reply(reply)
    assert verify(tmp_path / "log").ok
