"""Issue 10 acceptance: one on-call channel, five incidents amid chatter, read the way a user reads it.

The flow is the one a user types::

    mem run --query "Which failures happened, what caused them, and how were they fixed?" \\
        --chunk-tokens 800 tests/fixtures/incidents/channel.jsonl
    mem rebuild --from-log
    mem ask "how was <incident> fixed?"
    mem lookup -k 1 "<the same failure, weeks later>"

The fixture (tests/fixtures/incidents/) is five incidents on different systems:
an ingress-nginx 413, a Java NullPointerException, a Python TypeError in a
Celery worker, a Kubernetes CrashLoopBackOff/OOMKilled, and Postgres "too many
clients" under a Node.js service. Each has its raw error, one "root cause: …"
record and one "fixed by …"/"mitigated by …" record; more than half of the
channel's records are chatter. raw_errors.yaml holds each incident's failure as
it would recur (other ids, pods, hosts, timestamps, outer frame line numbers)
and the exact text of its cause and fix records.

Output is compared with whitespace collapsed: rich wraps long lines at spaces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from poimen.inputs.chunking import iter_chunks
from poimen.cli.app import app
from poimen.log.store import EventLog
from poimen.log.runs import loop_runs, read_runs
from poimen.signatures import signature_keys

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "incidents"
CHANNEL = FIXTURES / "channel.jsonl"
QUERY = "Which failures happened, what caused them, and how were they fixed?"
INCIDENTS = yaml.safe_load((FIXTURES / "raw_errors.yaml").read_text(encoding="utf-8"))["incidents"]
IDS = [i["id"] for i in INCIDENTS]
RECORDS = [json.loads(line)["text"] for line in CHANNEL.read_text(encoding="utf-8").splitlines() if line.strip()]

# Chatter far from any incident: a memory holding one of these kept noise for its own sake.
CHATTER = ["morning all :coffee:", "lunch? burrito place?", "will there be pizza", "there will be pizza",
           "anyone watching the match tonight?", "ramen?", "have a good weekend"]


def flat(text: str) -> str:
    return " ".join(text.split())


def mem(home: Path, *args: str) -> str:
    """Run one `mem` command against the log at ``home``; fail with its output unless it exits 0."""
    res = CliRunner().invoke(app, list(args), env={"POIMEN_HOME": str(home), "POIMEN_EMBEDDER": "all-MiniLM-L6-v2"})
    if res.exit_code != 0:
        exc = "" if res.exception is None or isinstance(res.exception, SystemExit) else f" ({res.exception!r})"
        pytest.fail(f"mem {args[0]} exited {res.exit_code}{exc}:\n{res.output[-3000:]}")
    return res.output


def others(incident: dict) -> list[dict]:
    return [i for i in INCIDENTS if i["id"] != incident["id"]]


def preview(text: str, lines: int = 12) -> str:
    rows = [r for r in text.splitlines() if r.strip()]
    head = "\n".join(f"  | {r[:160]}" for r in rows[:lines])
    return f"{len(rows)} lines:\n{head}" + (f"\n  | … {len(rows) - lines} more" if len(rows) > lines else "")


# --- the fixture itself: cheap checks that keep it honest when someone edits it ---------------------------------


def test_fixture_has_enough_incidents_and_text():
    assert len(INCIDENTS) >= 4 and len({i["system"] for i in INCIDENTS}) == len(INCIDENTS)
    tokens = [c.tokens for c in iter_chunks(CHANNEL, 800)]
    assert sum(tokens) >= 3000 and len(tokens) >= 4, f"channel is {sum(tokens)} tokens in {len(tokens)} chunks"


@pytest.mark.parametrize("incident", INCIDENTS, ids=IDS)
def test_fixture_cause_and_fix_are_single_records(incident):
    assert incident["cause"].startswith("root cause: ")
    assert incident["fix"].startswith(("fixed by ", "mitigated by "))
    for field in ("cause", "fix"):
        assert RECORDS.count(incident[field]) == 1, f"{incident['id']} {field} is not exactly one channel record"


@pytest.mark.parametrize("incident", INCIDENTS, ids=IDS)
def test_fixture_raw_error_is_the_same_failure_with_other_details(incident):
    channel, raw = "\n".join(RECORDS), incident["raw_error"]
    new_lines = [line for line in raw.splitlines() if line.strip() and line.strip() not in channel]
    assert raw.strip() not in channel and len(new_lines) >= 3, f"{incident['id']}: only {new_lines} differ"
    shared = set(signature_keys(raw)) & set(signature_keys(channel))
    assert shared, f"{incident['id']}: raw error shares no failure signature with the channel"


# --- what a user reads ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """The channel read once for the failure query, then the index built from the log."""
    root = tmp_path_factory.mktemp("multi-incident") / "poimen-home"
    mem(root, "run", "--query", QUERY, "--chunk-tokens", "800", str(CHANNEL))
    mem(root, "rebuild", "--from-log")
    return root


@pytest.fixture(scope="module")
def memory(home) -> str:
    runs = [s for s in loop_runs(read_runs(EventLog(home)))
            if s.level == "L1" and s.query_text == QUERY and s.stream_id == CHANNEL.name]
    assert len(runs) == 1, f"expected one L1 run of the query over {CHANNEL.name}, found {len(runs)}"
    return runs[0].final_memory


@pytest.mark.slow
@pytest.mark.parametrize("incident", INCIDENTS, ids=IDS)
def test_failure_memory_holds_cause_and_fix(memory, incident):
    missing = [f for f in ("cause", "fix") if flat(incident[f]) not in flat(memory)]
    assert not missing, f"{incident['id']}: the final memory lacks its {' and '.join(missing)} line; memory has {preview(memory)}"


@pytest.mark.slow
def test_failure_memory_leaves_out_chatter(memory):
    lines = {flat(line) for line in memory.splitlines()}
    kept = [c for c in CHATTER if any(line == c or line.endswith(f": {c}") for line in lines)]
    assert not kept, f"the failure memory kept chatter {kept}"


@pytest.mark.slow
@pytest.mark.parametrize("incident", INCIDENTS, ids=IDS)
def test_ask_how_an_incident_was_fixed_prints_its_fix(home, incident):
    question = f"how was {incident['name']} fixed?"
    printed = mem(home, "ask", question)
    assert flat(incident["fix"]) in flat(printed), f"`mem ask {question!r}` printed:\n{printed[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("incident", INCIDENTS, ids=IDS)
def test_lookup_of_a_recurring_error_finds_its_fix_at_top_1(home, incident):
    printed = flat(mem(home, "lookup", "-k", "1", incident["raw_error"]))
    assert flat(incident["fix"]) in printed, f"{incident['id']}: top-1 hit lacks its fix line:\n{printed[:3000]}"
    foreign = [o["id"] for o in others(incident) if flat(o["fix"]) in printed]
    assert not foreign, f"{incident['id']}: top-1 hit also holds the fix lines of {foreign}:\n{printed[:3000]}"
