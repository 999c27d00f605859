"""The card's harness: five memories that explain failures, three that do not, and raw errors for the five.

Each failure memory is written the way an engineer writes it down (cause and
fix, in prose); its raw error is the way the next occurrence arrives (a pasted
trace or status line, with other ids, hosts and timestamps than the evidence).
The two share no content word (``content_words`` below: identifiers split at
camelCase and punctuation, so ``OutOfMemoryError`` is four words; then
``poimen.text.content_terms``: stop-words out, light stemming, words cut to
four letters, so 'request'/'requests' or 'restart'/'restored' count as shared)
— ``test_fixture_has_no_vocabulary_overlap`` holds the fixture to that.

Each memory reaches the log the real way: a source file (its L0 evidence, one
chunk) read by the gated loop, whose scripted gate answers from the chunk
alone. ``symptom_reply`` plays the model that writes projections: error
strings, status lines and observable behaviour, and nothing for the three
memories that describe no failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


from poimen.write.core import RunRequest, run_loops
from poimen.llm.client import ScriptedClient
from poimen.llm.prompts import escape, sections
from poimen.write.reference import ingest_reference
from poimen.text.words import content_terms
from poimen.testing.gate import GatePrompt, scripted_gate

SYMPTOM_MODEL = "scripted/symptom-writer-v1"


@dataclass(frozen=True)
class Case:
    name: str
    evidence: str  # the L0 source the gate reads (the first occurrence)
    memory: str  # what the gate keeps
    symptoms: str  # what the projection model answers ("" for no failure)
    raw_error: str = ""  # the next occurrence, as pasted by whoever hits it


FAILURES = [
    Case(
        "upload-413",
        evidence="2026-03-02T10:14:07Z upload-api POST /v2/attachments HTTP/1.1 413 Request Entity Too Large "
                 "(len=18311, req=9f1c2a)\n2026-03-02T10:15:40Z on-call: big uploads broken since the gateway swap\n",
        memory="Big attachments broke because Kong buffered each whole payload before proxying; "
               "resolved by proxy-body-size: 0 on the ingress.",
        symptoms="413 Request Entity Too Large\nHTTP/1.1 413 returned on POST of a large file\n"
                 "large uploads rejected at the API gateway while small ones succeed\n"
                 "nginx: client intended to send too large body",
        raw_error="$ curl -sS -X POST https://api.example.com/v1/files -F data=@dump.tar\n"
                  "< HTTP/1.1 413 Request Entity Too Large\n< Content-Length: 183",
    ),
    Case(
        "export-oom",
        evidence="Exception in thread \"stmt-runner-1\" java.lang.OutOfMemoryError: Java heap space\n"
                 "\tat java.util.Arrays.copyOf(Arrays.java:3210)\n"
                 "\tat java.util.ArrayList.grow(ArrayList.java:261)\n"
                 "\tat com.acme.billing.StatementJob.loadAll(StatementJob.java:74)\n",
        memory="Invoices stopped going out overnight: the statement batch slurped the whole customer table in one "
               "pass and got torn down; paging it with a 2g ceiling settled it.",
        symptoms="java.lang.OutOfMemoryError: Java heap space\n"
                 "Exception in thread \"worker\" java.lang.OutOfMemoryError: Java heap space\n"
                 "GC overhead limit exceeded\nthe export worker dies midway and the process exits",
        raw_error="Exception in thread \"export-worker-3\" java.lang.OutOfMemoryError: Java heap space\n"
                  "\tat java.util.Arrays.copyOf(Arrays.java:3236)\n"
                  "\tat java.util.ArrayList.grow(ArrayList.java:265)\n"
                  "\tat com.acme.ledger.LedgerExporter.readAll(LedgerExporter.java:88)",
    ),
    Case(
        "sync-refused",
        evidence="Traceback (most recent call last):\n  File \"/srv/sync/main.py\", line 41, in connect\n"
                 "    conn = psycopg2.connect(DSN)\n"
                 "psycopg2.OperationalError: could not connect to server: Connection refused\n"
                 "\tIs the server running on host \"10.0.9.4\" and accepting\n\tTCP/IP connections on port 5432?\n",
        memory="The nightly billing sync lost its database after the cluster moved; the DSN in the vault secret "
               "still named the old address. Updating the secret restored it.",
        symptoms="psycopg2.OperationalError: could not connect to server: Connection refused\n"
                 "Is the server running on host and accepting TCP/IP connections on port 5432?\n"
                 "ECONNREFUSED on port 5432\nthe sync job exits with an error right after startup",
        raw_error="psycopg2.OperationalError: could not connect to server: Connection refused\n"
                  "\tIs the server running on host \"10.0.4.17\" and accepting\n"
                  "\tTCP/IP connections on port 5432?",
    ),
    Case(
        "checkout-crashloop",
        evidence="NAME                            READY   STATUS             RESTARTS      AGE\n"
                 "checkout-web-5c8d7f9b6-q7wzt    0/1     CrashLoopBackOff   9 (40s ago)   12m\n",
        memory="Checkout was down after the release since the new image required FEATURE_FLAGS_URL and the Helm "
               "chart never provided it; we added it to values.yaml.",
        symptoms="CrashLoopBackOff\nBack-off restarting failed container\n"
                 "pods show READY 0/1 and the RESTARTS count keeps growing\n"
                 "KeyError: missing environment variable at startup",
        raw_error="NAME                        READY   STATUS             RESTARTS      AGE\n"
                  "cart-api-7d9f8b6c4-x2lqp    0/1     CrashLoopBackOff   14 (2m ago)   41m\n"
                  "Back-off restarting failed container",
    ),
    Case(
        "runner-disk",
        evidence="#12 ERROR: failed to copy: write /var/lib/docker/overlay2/3f9e/diff/app.bin: no space left on device\n"
                 "Error: Process completed with exit code 1.\n",
        memory="Builds on the CI runners broke when Docker layer caches filled the root volume; "
               "a weekly prune job clears dangling images.",
        symptoms="ENOSPC: no space left on device\nnpm ERR! code ENOSPC\n"
                 "write /var/lib/docker/overlay2/...: no space left on device\n"
                 "the build fails while writing layers or installing packages",
        raw_error="npm ERR! code ENOSPC\nnpm ERR! syscall write\nnpm ERR! errno -28\n"
                  "npm ERR! nospc ENOSPC: no space left on device, write",
    ),
]

OTHERS = [
    Case("queue-decision", evidence="ADR-014: order events go to Kafka, not RabbitMQ. Status: accepted.\n",
         memory="We chose Kafka over RabbitMQ for the order events because replay and retention matter more "
                "than per-message routing.", symptoms=""),
    Case("reporting-plan", evidence="Roadmap Q3: reporting moves to ClickHouse; the Redshift copy retires.\n",
         memory="Next quarter the reporting stack moves to ClickHouse and the nightly Redshift copy is retired.",
         symptoms=""),
    Case("review-habit", evidence="Team notes: payments reviews happen Tuesday mornings; on-call rotates weekly.\n",
         memory="The payments team holds reviews on Tuesday mornings and rotates on-call weekly.", symptoms=""),
]

CASES = FAILURES + OTHERS
# A chunk the gate rejects although it shows an error: it must reach no projection and no signature row.
REJECTED = "2026-03-02T11:00:00Z cdn-edge 502 Bad Gateway during the load test (expected, synthetic traffic)\n"
RUNBOOK = "# Runbook: uploads\n\nIf uploads fail with 413 Request Entity Too Large, check the ingress body limit.\n"
QUERIES = """queries:
  - id: failures
    text: "What failed, why, and how was it fixed?"
    store: semantic
"""


def content_words(text: str) -> set[str]:
    """The overlap tokeniser: split identifiers (camelCase, dots, slashes, dashes), then content terms."""
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return set(content_terms(re.sub(r"[._/\\:=@<>$-]+", " ", split)))


def case_memory(p: GatePrompt) -> str | None:
    """The case whose evidence this chunk is gives the memory; any other chunk leaves it."""
    chunk = " ".join(p.chunk.split())
    return next((case.memory for case in CASES if chunk == " ".join(case.evidence.split())), None)


def symptom_reply(system: str, user: str) -> str:
    memory = sections(user).get("memory", "").strip()
    found = next((c.symptoms for c in CASES if c.memory == memory), "")
    return "<symptoms>" + escape(found) + "</symptoms>"


# One scripted model for both prompts: the gate, and the symptom projection.
model = scripted_gate(case_memory, symptom=symptom_reply)


def client() -> ScriptedClient:
    return ScriptedClient([model], model_id=SYMPTOM_MODEL, repeat_last=True)


def write_sources(root: Path) -> Path:
    """The L0 sources, one per case plus the rejected one, and the queries file; returns the sources folder."""
    src = root / "sources"
    src.mkdir(parents=True)
    for case in CASES:
        (src / f"{case.name}.log").write_text(case.evidence, encoding="utf-8")
    (src / "cdn-noise.log").write_text(REJECTED, encoding="utf-8")
    (root / "queries.yaml").write_text(QUERIES, encoding="utf-8")
    (root / "runbook-uploads.md").write_text(RUNBOOK, encoding="utf-8")
    return src


def make_loop_log(root: Path) -> Path:
    """L1 runs over every source with the scripted gate, and one runbook as R; no projections yet."""
    src = write_sources(root)
    log = root / "log"
    req = RunRequest(root=log, sources=sorted(src.iterdir()), queries=root / "queries.yaml", chunk_tokens=400,
                     concurrency=2)
    assert run_loops(req, client()).ok
    ingest_reference(log, [root / "runbook-uploads.md"], max_tokens=200)
    return log
