"""The "reliability" section of the benchmark report: faults injected, runs survived, events lost, bad inputs tried.

Runs the same harness as the reliability tests, smaller: SIGKILLs of ``mem run``
at seeded points against a slow loopback model (litellm over real HTTP), a storm
of transport and reply faults, and the bad-input zoo. Writes
``bench/out/reliability.json``. Run: ``python -m bench.reliability``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

QUERIES = """queries:
  - id: root-causes
    text: "What caused each failure or outage, and how was it fixed?"
  - id: remediation-steps
    text: "Which commands or config changes fixed or mitigated a problem?"
"""


def _sealed(root: Path) -> dict[str, list[str]]:
    from poimen.domain import canonical_json
    from poimen.log.store import EventLog

    log = EventLog(root)
    return {rid: [canonical_json(e.to_row()) for e in log.run_events(rid)] for rid in log.sealed_run_ids()}


def crash_figures(work: Path, server, kills: int = 10, seed: int = 20260) -> dict:
    from poimen.testing.crash import kill_after_calls, run_mem, start_mem
    from poimen.log.verify import verify

    sources = []
    for name in ("postmortem-upload-413.md", "incident-channel.jsonl"):
        shutil.copy(ROOT / "examples" / "sources" / name, work / name)
        sources.append(str(work / name))
    (work / "queries.yaml").write_text(QUERIES)

    def args(log: Path, resume: bool) -> list[str]:
        # --no-index: this measures the log across kills; and a `mem run` forked from a bench process that has
        # loaded torch must not embed (torch after fork crashed the child silently in CI: exit 1, no message).
        return ["run", "--no-index", "--log", str(log), "--model", "openai/fake-gate", "--api-base", server.api_base, "--queries",
                str(work / "queries.yaml"), "--chunk-tokens", "2000", "--concurrency", "2",
                *(["--resume"] if resume else []), *sources]

    code, out = run_mem(args(work / "baseline", False), work / "baseline.out")
    assert code == 0, out
    baseline = _sealed(work / "baseline")
    rng = random.Random(seed)
    landed = verified = chains = survived = lost = 0
    while landed < kills:
        chains += 1
        log = work / f"chain{chains}"
        for i in range(5):
            proc = start_mem(args(log, i > 0), work / f"c{chains}-{i}.out")
            if not kill_after_calls(proc, server, rng.randint(0, 9), jitter=0.03, rng=rng):
                break
            landed += 1
            verified += verify(log).ok
            if landed == kills:
                break
        code, _ = run_mem(args(log, True), work / f"c{chains}-final.out")
        final = _sealed(log)
        survived += code == 0 and final == baseline
        lost += sum(len(set(rows) - set(final.get(rid, []))) for rid, rows in baseline.items())
    return {"sigkills": landed, "verify_passed_after_kill": verified, "chains_resumed": chains,
            "chains_byte_identical": survived, "events_lost": lost}


def fault_figures(work: Path, server) -> dict:
    from poimen.testing.openai_server import CUT, DROP, hang, status, transformed
    from poimen.write.core import RunRequest, run_loops
    from poimen.llm.client import LiteLLMClient
    from poimen.log.verify import verify

    src = work / "incident.md"
    src.write_text("At 09:14 the upload outage began: nginx returned 413 for files over 1 MB.\n\n"
                   "The team ordered pizza.\n\n"
                   "The outage was caused by client_max_body_size falling back to 1m after the chart upgrade.\n")
    transport = [status(500), status(503), status(429, 0.2), CUT, DROP, hang(2)]
    replies = [transformed(f) for f in (lambda r: r[: len(r) // 2], lambda r: "", lambda r: r + "<check>no</check>",
                                        lambda r: r.replace("<update>", "<update><update>"),
                                        lambda r: "\u202e🙃" + r.replace("<check>", "<\u0441heck>"))]
    runs = survived = 0
    for i, action in enumerate(transport + replies):
        server.reset()
        server.script(action)
        client = LiteLLMClient("openai/fake-gate", api_base=server.api_base, timeout=0.5, num_retries=3)
        result = run_loops(RunRequest(root=work / f"fault{i}", sources=[src], query="What caused the outage?",
                                      chunk_tokens=30, concurrency=1), client=client)
        runs += 1
        survived += result.ok and verify(work / f"fault{i}").ok
    # exhausted retries: a resumable stop, then a resume
    server.reset()
    server.script(*[status(500)] * 4)
    client = LiteLLMClient("openai/fake-gate", api_base=server.api_base, timeout=0.5, num_retries=3)
    req = RunRequest(root=work / "exhausted", sources=[src], query="What caused the outage?", chunk_tokens=30)
    stopped = run_loops(req, client=client).outcomes[0].status == "interrupted" and verify(work / "exhausted").ok
    req.resume = True
    resumed = run_loops(req, client=client).ok
    return {"transport_faults": len(transport), "reply_faults": len(replies), "runs": runs, "runs_survived": survived,
            "retries_exhausted_stopped_resumably": bool(stopped and resumed)}


def bad_input_figures(work: Path) -> dict:
    from poimen.testing.bad_sources import bad_sources
    from poimen.inputs.chunking import iter_chunks
    from poimen.errors import SourceError

    d = work / "bad"
    d.mkdir()
    tried = rejected = 0
    for path, what in bad_sources(d).values():
        tried += 1
        try:
            list(iter_chunks(path))
        except SourceError as exc:
            rejected += str(path) in str(exc) and what in str(exc) and "\n" not in str(exc)
    return {"bad_inputs_tried": tried + 2, "rejected_with_one_line": rejected,
            "note": "+2: a path outside the sources root and a 200 MB single line (tests/test_bad_input.py)"}


def run(out_path: str | Path = ROOT / "bench" / "out" / "reliability.json", kills: int = 10) -> dict:
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-loopback")
    from poimen.testing.openai_server import FakeOpenAI

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(delay=0.01) as server:
        work = Path(tmp)
        (work / "crash").mkdir()
        (work / "faults").mkdir()
        crash = crash_figures(work / "crash", server, kills)
        faults = fault_figures(work / "faults", server)
        bad = bad_input_figures(work)
    figures = {
        # + 4: the 500s that exhaust litellm's retries (one call, three retries)
        "faults_injected": crash["sigkills"] + faults["transport_faults"] + faults["reply_faults"] + 4,
        "runs_survived": crash["chains_byte_identical"] + faults["runs_survived"],
        "runs_total": crash["chains_resumed"] + faults["runs"],
        "events_lost": crash["events_lost"],
        "bad_inputs_tried": bad["bad_inputs_tried"],
        "crash": crash, "model_faults": faults, "bad_input": bad,
        "model": "openai/fake-gate via litellm over loopback HTTP, replying as the offline engine",
        "seconds": round(time.monotonic() - started, 1),
    }
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    return figures


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
