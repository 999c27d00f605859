"""poimen's own incident dev suite: does the fix come back, as a user asks for it and as the error shows up again?

    python -m bench.incident_suite            # prints the tables; --out DIR also writes DIR/REPORT.md

The streams and labels are ``bench/incidents/`` (``suite.yaml`` says how they
are labelled and split). Per run, as a user would:

1. Every stream file, as given, goes through ``mem run``'s code
   (``poimen.write.core.run_loops``) into one log (one on-call memory), with one
   generic standing query (``suite.yaml``'s ``question``), the offline engine
   and the command's default chunk bound. A file the readers refuse is
   reported with the reader's own message and scores nothing.
2. The index is built from the log (``build_projections``, what ``mem run``'s
   index update and ``mem rebuild`` write).
3. ``mem ask QUESTION`` and ``mem lookup -k 1 ERROR``: ``ReadService.ask`` and
   ``ReadService.lookup``, the code both commands run in-process. An answer
   is its text; a lookup's output is the top hit's shown lines as ``mem
   lookup`` prints them (its text, cut at 600 characters, when it has none).

Scored per incident: the answer (or top hit) holds the fix when it contains
one of the incident's fix substrings (whitespace-insensitive); it is a
confusion when it holds the fix of another incident (a ``recurs_with``
pair excepted, either way round); output tokens are ``count_tokens`` of what is printed.

In the same run, each at the SAME number of tokens as poimen's output for that
item (a comparison at equal output tokens):

- ``hybrid-lines`` / ``hybrid-windows``: ``bench.hybrid`` (stemmed BM25 +
  MiniLM, linear fusion, neighbour mixing) over the raw lines of the streams
  (chat messages and CSV cells read as their text, so the baseline is not
  handicapped by a format poimen refuses), and over 3-line windows; ``alpha``
  and ``w`` chosen on the dev incidents only.
- ``context+memory`` / ``context-no-memory``: what ``mem context`` gives, as
  untagged lines filled to the same tokens: the incident card it puts first
  (``read.incidents.card_first``), then ``ContextEngine``'s ranking; the second
  is the same engine over the raw units alone (no card, and the memory lines,
  the memory prior and the memories' failure signatures left out). Their
  difference is what the memory adds over the same scorer without it.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import hybrid
from bench.text import squash
from poimen.errors import PoimenError
from poimen.text.tokens import count_tokens

SUITE = Path(__file__).resolve().parent / "incidents"
# Every suite the report runs, with what it was to the cues: "dev" suites' misses were read while the roles, cards and
# episodes were written (bench/incidents was the first; incidents2 and incidents3 were written as held-out and then
# read as dev once their first figures were in; incidents5, multi-incident documents and sessions, was written as
# dev data by someone who read no code; incidents6, sessions with other prompts, a log under one ticket, shared-part
# write-ups and a Slack export, likewise; incidents7, the six formats of the held-out streams issue 27 names,
# likewise; incidents8, interleaved chat, Discord, GitHub JSON, Jira CSV, a write-up of two problems that never
# says so, likewise; incidents9, Java logs under five kinds of ticket comment stream and shell sessions with five
# prompts, likewise; incidents10, plain-text postmortems in six layouts and Markdown exports of four incident tools,
# likewise; incidents11, Slack day files, a GitHub REST issues export and postmortems in three layouts, and
# incidents12, PagerDuty-style Markdown, Spring Boot logs under Jira and ServiceNow comments and bastion sessions,
# likewise; incidents13, a Slack channel over two day files, bastion sessions and postmortems, and incidents14,
# PagerDuty Markdown, Java logs under Jira and GitHub threads as text and a GitHub issues CSV, likewise; 11 to 14
# were written in stop 35, their first figures, before any of their misses was read, are in the report's notes;
# incidents16, Java logs under help desk threads, a GitHub REST export and shell sessions, and incidents17, PagerDuty
# Markdown, plain-text postmortems, a Slack export and a GitHub issues CSV, likewise, in stop 36; incidents18, Java
# logs under a GitHub issue pasted as text that numbers two problems, a Jira export of three tickets and ServiceNow
# work notes of a recurrence, and incidents19, Markdown timelines, plain-text postmortems, a GitHub REST issues
# export with a two-problem report and a bastion session, likewise, in stop 37; incidents20, Java logs under GitLab,
# Redmine and Zendesk threads, postmortems and a PagerDuty postmortem, and incidents21, GitHub REST and GitLab
# issues, bastion sessions, a FireHydrant-style review and a Discord export, likewise, in stop 38; incidents22, Java
# logs under Jira Cloud, YouTrack, Bugzilla and OTRS threads, likewise, in stop 40: its first figures, at eb4d2e9
# before any of its misses was read, were ask 4/10, lookup 3/20, 7 confusions; incidents23, Java logs under GitHub,
# Linear, ServiceNow, Redmine and mailing-list threads, and incidents24, plain-text postmortems (SRE-style,
# Atlassian-style, an e-mail, a weekly digest, a reST page), likewise, in stop 41: first figures ask 4/10, lookup 4/20,
# 10 confusions (incidents23, at e5f3a0b) and ask 4/10, lookup 6/16, 9 confusions (incidents24, at c77a5a3));
# incidents25, Java logs (Open Liberty, Payara, Dropwizard, Pekko) under Jira Server, PagerDuty, Zendesk, Azure DevOps,
# Teams, Opsgenie and Trello threads, and incidents26, postmortems (a status-page history, a Notion export, a Google
# Doc as text, a blog post, a quarterly log), likewise, in stop 42: first figures at a3472fc, before any miss was read,
# ask 4/10, lookup 6/20, 11 confusions (incidents25) and ask 6/10, lookup 11/18, 6 confusions (incidents26);
# incidents27, Java logs (ECS JSON lines, Log4j 1.x, Jetty 12 with GC lines, JBoss EAP) under `gh issue view
# --comments`, a Jira comment export, an incident tool's newest-first export and Zammad tickets, and incidents28,
# PagerDuty log entries and retrospectives in Markdown and shell sessions with five prompts, likewise, in stop 42:
# first figures ask 3/10, lookup 5/20, 17 confusions (incidents27, at 84dc844) and ask 3/10, lookup 14/20, 1
# confusion (incidents28, at 9675650); incidents29, JVM logs (Quarkus, Kafka Connect, Micronaut, Play) under Linear,
# Outlook mail threads newest first, Shortcut and Phabricator, incidents30, postmortems (a correction-of-error with five
# whys, Confluence wiki markup, a forum's topics with replies, meeting minutes with ASCII tables, Org-mode notes, an
# incident log), and incidents31, exports in shapes no suite had (a Trello board's JSON, Asana's API JSON, a Confluence
# page's HTML, a Matrix room export, an incident.io timeline CSV, Teams messages from Microsoft Graph), likewise, in
# stop 43: first figures at 4c8b8c6 (incidents29 at e7838ff), before any miss was read, ask 7/10, lookup 17/20, 26
# confusions (incidents29), ask 6/10, lookup 10/20, 7 confusions (incidents30) and ask 1/10, lookup 4/20, 6 confusions
# (incidents31); incidents32, Slack day files (two merged with jq, blocks-only bots, a huddle) and GitHub issues
# (`gh issue list --json` on one line, a GraphQL response with timeline items), and incidents33, shell sessions
# (fish, `bash -x` with an Ansible play, Azure Cloud Shell) and Markdown reviews with zoned table timelines,
# likewise, in stop 43: first figures at a66c8c1, before any miss was read, ask 4/10, lookup 10/20, 7 confusions
# (incidents32) and ask 3/10, lookup 8/20, 5 confusions (incidents33);
# incidents35, postmortems in six more layouts (ITIL problem records, a slide deck, a Q&A learning review, an incident
# bot's summaries with human corrections, an essay with no headings, release notes with known issues), likewise, in
# stop 43: first figures at cad730e, before any miss was read, ask 6/10, lookup 12/20, 3 confusions;
# incidents34, JVM logs (Camel, Flink, Akka Streams over HBase, Ktor) under Freshservice, Taiga, Rocket.Chat and a
# `git log` with PR reviews, each tracker in another zone than its log, likewise, in stop 43: first figures at
# ded433c, before any miss was read, ask 4/10, lookup 8/20, 5 confusions;
# incidents36, JVM logs (Spring Cloud Gateway JSON, WebLogic, Kafka Streams, Solr, Helidon with a ZGC log, ActiveMQ)
# under Jira Service Management, Request Tracker, Mailman digests, GLPI, Mantis and Zulip, likewise, in stop 44: first
# figures at d36f71b, before any miss was read, ask 4/10, lookup 10/20, 5 confusions; incidents37, on-call tools'
# exports (PagerDuty log entries JSON, an Opsgenie dump under tail's banners, Grafana OnCall pages, a Statuspage
# history.atom, a Markdown war room in five zones, Rootly's incident events), and incidents38, shell recordings (an
# asciinema .cast, zsh with powerlevel10k and terraform, an ssh jump to a router, tmux captures, `history` with
# notes files), likewise, in stop 44: first figures at 71e5794, ask 6/10, lookup 14/20, 15 confusions (incidents37)
# and ask 0/10, lookup 2/20, 0 confusions (incidents38);
# incidents39, trackers' REST answers (Jira search, GitLab issue notes, Bugzilla, YouTrack, Redmine journals, Azure
# DevOps work item comments), incidents40, non-JVM logs (gunicorn and Celery tracebacks, a Go panic, pm2, Kestrel
# with inner exceptions, Rails and Sidekiq, a Rust panic) under Sentry, IRC, ClickUp, Google Chat, Basecamp and
# Telegram, and incidents41, write-ups (AsciiDoc, MediaWiki, a saved .eml reply, an ops review, pipe-table timelines,
# a Jeli-style investigation), likewise, in stop 45: first figures at 5502398, before any miss was read, ask 6/10,
# lookup 13/20, 12 confusions (incidents39), ask 3/10, lookup 4/20, 7 confusions (incidents40) and ask 4/10, lookup
# 9/20, 4 confusions (incidents41); incidents42, JVM logs whose incidents in one file share an exception class (two
# Hikari pool timeouts, two read timeouts, two OutOfMemoryErrors) under osTicket, Kayako, Spiceworks, OpenProject,
# HappyFox and a Mattermost thread, and incidents43, incident tools' Markdown exports (Splunk On-Call, xMatters,
# Squadcast, Zenduty, ilert, a JSM review with Statuspage updates), likewise: first figures, before any miss was read,
# ask 4/10, lookup 12/20, 3 confusions (incidents42, at 5b48a08) and ask 9/10, lookup 18/20, 6 confusions
# (incidents43, at 710cedc);
# incidents44, JVM logs (Spring Boot, Quarkus, Micronaut with Kafka Streams, Tomcat, WildFly, Akka) each with the
# comment stream pasted under it (Trac, Help Scout, Google Groups, TOPdesk, WhatsApp, todo.sr.ht), incidents45,
# timelines and postmortems (a PagerDuty page, Opsgenie alerts, a running log of `###` incidents, a quarterly digest
# with rule-boxed titles, a status digest, a postmortem told in numbered paragraphs), and incidents46, GitHub issues
# as `gh` and the REST API give them (with a timeline) and kubectl/helm/argocd/terraform sessions (Git Bash, fish in
# a `script` typescript, pasted `watch` screens), likewise, in stop 46: first figures at f271463, before any miss
# was read, ask 4/10, lookup 6/20, 7 confusions (incidents44), ask 5/10, lookup 16/20, 10 confusions (incidents45)
# and ask 5/10, lookup 12/20, 4 confusions (incidents46); incidents47, JVM logs (Payara Micro with thread dumps,
# Vert.x with log4j2 one-line traces, Dropwizard with GC logs, Play, Helidon on virtual threads, Jetty) with their
# tickets or chat, the ticket first in some (a JSM queue export, Pivotal Tracker, FogBugz, Teams, Zoho Desk,
# Freshdesk), likewise, mid-stop: first figures at ab1efbd, before any miss was read, ask 5/10, lookup 10/20,
# 14 confusions;
# "blind" suites were written by someone who read no code, and their misses were never read: incidents4, and
# incidents15 (the six formats of the held-out streams, two incidents each, written in stop 35 at `ca1b949`). The baselines' weights are chosen on bench/incidents' split "dev" alone.
SUITES = ((SUITE, "dev"), (SUITE.with_name("incidents2"), "dev"), (SUITE.with_name("incidents3"), "dev"),
          (SUITE.with_name("incidents5"), "dev"), (SUITE.with_name("incidents6"), "dev"),
          (SUITE.with_name("incidents7"), "dev"), (SUITE.with_name("incidents8"), "dev"),
          (SUITE.with_name("incidents9"), "dev"), (SUITE.with_name("incidents10"), "dev"),
          (SUITE.with_name("incidents11"), "dev"), (SUITE.with_name("incidents12"), "dev"),
          (SUITE.with_name("incidents13"), "dev"), (SUITE.with_name("incidents14"), "dev"),
          (SUITE.with_name("incidents16"), "dev"), (SUITE.with_name("incidents17"), "dev"),
          (SUITE.with_name("incidents18"), "dev"), (SUITE.with_name("incidents19"), "dev"),
          (SUITE.with_name("incidents20"), "dev"), (SUITE.with_name("incidents21"), "dev"),
          (SUITE.with_name("incidents22"), "dev"), (SUITE.with_name("incidents23"), "dev"),
          (SUITE.with_name("incidents24"), "dev"), (SUITE.with_name("incidents25"), "dev"),
          (SUITE.with_name("incidents26"), "dev"), (SUITE.with_name("incidents27"), "dev"),
          (SUITE.with_name("incidents28"), "dev"), (SUITE.with_name("incidents29"), "dev"),
          (SUITE.with_name("incidents30"), "dev"),
          (SUITE.with_name("incidents31"), "dev"), (SUITE.with_name("incidents32"), "dev"),
          (SUITE.with_name("incidents33"), "dev"), (SUITE.with_name("incidents34"), "dev"),
          (SUITE.with_name("incidents35"), "dev"), (SUITE.with_name("incidents37"), "dev"),
          (SUITE.with_name("incidents36"), "dev"), (SUITE.with_name("incidents38"), "dev"),
          (SUITE.with_name("incidents39"), "dev"), (SUITE.with_name("incidents40"), "dev"),
          (SUITE.with_name("incidents41"), "dev"), (SUITE.with_name("incidents42"), "dev"),
          (SUITE.with_name("incidents43"), "dev"), (SUITE.with_name("incidents44"), "dev"),
          (SUITE.with_name("incidents45"), "dev"), (SUITE.with_name("incidents46"), "dev"),
          (SUITE.with_name("incidents47"), "dev"),
          (SUITE.with_name("incidents4"), "blind"), (SUITE.with_name("incidents15"), "blind"))
WINDOW = 3
SHOWN_CHARS = 600  # mem lookup prints a hit without lines as its text cut here (poimen.cli.readout.print_hits)


@dataclass(frozen=True)
class Incident:
    id: str
    format: str
    stream: str
    split: str
    symptom: tuple[str, ...]
    cause: tuple[str, ...]
    fix: tuple[str, ...]
    ask: str
    probes: tuple[str, ...]
    recurs_with: str | None = None
    fix_stream: str | None = None  # the stream its fix is told in, when not its own (a channel's next day file)


def streams_of(incidents: Sequence[Incident]) -> list[str]:
    """Every stream the incidents are told in: their own and where a fix is told elsewhere."""
    return sorted({i.stream for i in incidents} | {i.fix_stream for i in incidents if i.fix_stream})


def load(folder: Path = SUITE) -> tuple[str, list[Incident]]:
    """The suite's standing query and its incidents, as ``suite.yaml`` labels them."""
    data = yaml.safe_load((folder / "suite.yaml").read_text())
    incidents = []
    for raw in data["incidents"]:
        raw = dict(raw)
        for key in ("symptom", "cause", "fix", "probes"):
            raw[key] = tuple(raw[key])
        incidents.append(Incident(**raw))
    return data["question"], incidents


def stream_lines(path: Path) -> list[str]:
    """The readable lines of a stream for the baselines: chat messages as ``name: text``, CSV cells, other lines."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        chat = isinstance(data, list) and all(isinstance(m, dict) and "body" not in m for m in data)
        if not chat:  # an export of issues (a list with bodies and comments, or several lists): every string value
            return [line for v in _strings(data) for line in v.splitlines() if line.strip()]
        out = []
        for m in data:
            name = (m.get("user_profile") or {}).get("real_name") or m.get("username") or m.get("user", "")
            out += [f"{name}: {line}" if i == 0 else line for i, line in enumerate(m.get("text", "").splitlines())]
        return [x for x in out if x.strip()]
    if path.suffix in (".jsonl", ".ndjson"):  # JSON Lines records: their string values
        out = []
        for raw in text.splitlines():
            try:
                out += [line for v in _strings(json.loads(raw)) for line in v.splitlines() if line.strip()]
            except ValueError:
                out += [raw] if raw.strip() else []
        return out
    if path.suffix == ".csv":
        return [line for row in csv.reader(io.StringIO(text)) for cell in row for line in cell.splitlines() if line.strip()]
    return [line for line in text.splitlines() if line.strip()]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def holds(output: str, needles: Sequence[str]) -> bool:
    """Whether ``output`` holds one of ``needles`` as a reader sees it: whitespace collapsed, and inline code marks
    left out of both (a wiki page's "<code>fsid=7</code>" is shown as "`fsid=7`"; bench/incidents41)."""
    flat = _unmarked(squash(output))
    return any(_unmarked(squash(n)) in flat for n in needles)


_CODE_MARK = re.compile(r"</?(?:code|tt|kbd)>|`")


def _unmarked(text: str) -> str:
    return _CODE_MARK.sub("", text)


def score(output: str, incident: Incident, others: Sequence[Incident]) -> tuple[bool, bool]:
    """(holds this incident's fix, holds another incident's fix)."""
    # a recurrence and the incident it recurs with, either way round: lookup shows both, each with its own fix
    alien = [o.fix for o in others if o.id not in (incident.id, incident.recurs_with) and o.recurs_with != incident.id]
    return holds(output, incident.fix), any(holds(output, f) for f in alien)


class PoimenRun:
    """The suite's streams through ``mem run`` into one log, then the read path ``mem ask`` / ``mem lookup`` use."""

    def __init__(self, folder: Path, incidents: Sequence[Incident], question: str, work: Path, embedder):
        from poimen.write.core import RunRequest, run_loops
        from poimen.index import build_projections, default_db
        from poimen.serve.service import ReadService

        sources = work / "sources"
        paths = []
        for stream in streams_of(incidents):
            (sources / stream).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / stream, sources / stream)
            paths.append(sources / stream)
        self.root = work / "log"
        start = time.perf_counter()
        result = run_loops(RunRequest(root=self.root, sources=paths, query=question, sources_root=sources, concurrency=2))
        self.refused = [line.replace(f"{sources}/", "") for line in result.source_errors]
        self.outcomes = result.outcomes
        self.loop_s = time.perf_counter() - start
        start = time.perf_counter()
        self.db = default_db(self.root)
        build_projections(self.root, self.db, embedder)
        self.service = ReadService(self.root, self.db, embedder)
        self.index_s = time.perf_counter() - start

    def ask(self, question: str) -> str:
        return self.service.ask(question=question)["text"]

    def lookup(self, text: str) -> str:
        """The top hit's lines as ``mem lookup -k 1`` prints them (its header and evidence lines left out): an
        incident's card (and the card of each other incident of the same failure, which `-k 1` shows with it),
        else the hit's best lines, else its text."""
        from poimen.read.incidents import render_incident
        from poimen.read.shapes import hit_from

        shapes = self.service.lookup(text, k=1)
        if not shapes:
            return ""
        if shapes[0].get("incident"):
            return "\n\n".join("\n".join(render_incident(s["incident"])) for s in shapes if s.get("incident"))
        hit, shown = hit_from(shapes[0])
        if shown is not None and shown.lines:
            return "\n".join(line.render() for line in shown.lines)
        return hit.text if len(hit.text) <= SHOWN_CHARS else hit.text[:SHOWN_CHARS] + "…"

    def engines(self):
        """The context engine ``mem ask`` fills, and the same engine over the raw units alone."""
        from bench.locomo_poimen import raw_units_engine

        full = self.service.engine()
        return full, raw_units_engine(full)

    def first(self, question: str) -> list[str]:
        """The card's lines ``mem context`` puts before the ranking for ``question`` (none when no card matches)."""
        from poimen.read.incidents import card_first

        service = self.service
        return [text for text, _ in card_first(service.db_path, question, service.index(), service.engine(),
                                               service.cards())]


def engine_fill(engine, question: str, budget: int, first: Sequence[str] = ()) -> str:
    """``first`` (a card's lines), then the engine's ranking, de-duplicated and filled by the line text alone (as
    ``bench.locomo_poimen`` does), to ``budget`` tokens."""
    lines, used, seen = [], 0, set()
    for text in first:
        cost = count_tokens(text) + 1
        if used + cost > budget:
            break
        lines.append(text)
        seen.add(text)
        used += cost
    for i, _ in engine.ranked(question):
        cost = count_tokens(engine.texts[i]) + 1
        if engine.keys[i] in seen or engine.texts[i] in seen or used + cost > budget:
            continue
        seen.add(engine.keys[i])
        lines.append(engine.texts[i])
        used += cost
        if budget - used < 8:
            break
    return "\n".join(lines)


def _items(incidents: Sequence[Incident]) -> list[tuple[str, Incident, str]]:
    """Every scored item: (kind, incident, text), kind "ask" (its question) or "probe" (a raw error)."""
    return [("ask", inc, inc.ask) for inc in incidents] + [("probe", inc, p) for inc in incidents for p in inc.probes]


def _baselines(folder: Path, incidents: Sequence[Incident], embedder) -> dict[str, tuple[Callable, list[str]]]:
    """Per baseline a ``ranked(query, alpha, w)`` function and the lines its ranks point into."""
    lines, tags = [], []
    for stream in streams_of(incidents):
        got = stream_lines(folder / stream)
        lines += got
        tags += [stream] * len(got)
    line_corpus = hybrid.HybridCorpus(lines, tags, embedder)
    starts = [i for i in range(len(lines)) if all(tags[j] == tags[i] for j in range(i, min(i + WINDOW, len(lines))))]
    windows = [list(range(i, min(i + WINDOW, len(lines)))) for i in starts]
    window_corpus = hybrid.HybridCorpus(["\n".join(lines[j] for j in w) for w in windows], [tags[w[0]] for w in windows],
                                        embedder)
    queries = [q for _, _, q in _items(incidents)]
    line_corpus.warm(queries)
    window_corpus.warm(queries)
    return {"hybrid-lines": (lambda q, a, w, b: hybrid.fill_text(line_corpus.ranked(q, a, w), lines, b), lines),
            "hybrid-windows": (lambda q, a, w, b: hybrid.fill_text(window_corpus.ranked(q, a, w), lines, b,
                                                                   lambda u: windows[u]), lines)}


METHODS = ("poimen", "context+memory", "context-no-memory", "hybrid-lines", "hybrid-windows")


def tally(rows: list[dict], method: str) -> dict:
    asks = [r for r in rows if r["kind"] == "ask"]
    probes = [r for r in rows if r["kind"] == "probe"]
    return {"ask": sum(r[method][0] for r in asks), "asks": len(asks),
            "lookup": sum(r[method][0] for r in probes), "probes": len(probes),
            "confusions": sum(r[method][1] for r in rows), "items": len(rows),
            "tokens": sum(r["tokens"] for r in rows) / max(1, len(rows))}


def run(folder: Path = SUITE, embedder=None, progress: Callable[[str], None] = print, work: Path | None = None,
        weights: dict | None = None) -> dict:
    """poimen's ask and lookup on every incident, the baselines at the same tokens; per item and per format. The
    baselines' weights are chosen on this suite's dev incidents, or are ``weights`` (chosen on another suite's)."""
    if embedder is None:
        from poimen.embedding.embedders import default_embedder

        embedder = default_embedder()
    question, incidents = load(folder)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="poimen-incidents-") as tmp:
        poimen = PoimenRun(folder, incidents, question, Path(work or tmp), embedder)
        progress(f"  incidents: {len(poimen.outcomes)} runs in {poimen.loop_s:.1f}s, index {poimen.index_s:.1f}s, "
                 f"{len(poimen.refused)} stream(s) refused")
        full, bare = poimen.engines()
        rows, errors = [], []
        for kind, inc, text in _items(incidents):
            try:
                out = poimen.ask(text) if kind == "ask" else poimen.lookup(text)
            except PoimenError as exc:  # an answer poimen could not give scores nothing, and the report says why
                out = ""
                errors.append(f"{inc.id} {kind}: {exc}")
            tokens = count_tokens(out)
            rows.append({"kind": kind, "id": inc.id, "format": inc.format, "split": inc.split, "query": text,
                         "tokens": tokens, "poimen": score(out, inc, incidents), "output": out,
                         "context+memory": score(engine_fill(full, text, tokens, poimen.first(text)), inc, incidents),
                         "context-no-memory": score(engine_fill(bare, text, tokens), inc, incidents)})
        poimen_s = time.perf_counter() - started
    chosen = {}
    by_id = {i.id: i for i in incidents}
    dev = [r for r in rows if r["split"] == "dev"]
    if weights is None and not dev:
        raise PoimenError(f"{folder}: no incident of split 'dev' to choose the baselines' weights on; pass weights")
    for name, (fill, _) in _baselines(folder, incidents, embedder).items():
        if weights is not None:
            alpha, w = weights[name]["alpha"], weights[name]["w"]
            chosen[name] = dict(weights[name])
        else:
            def objective(alpha: float, w: float, dev=dev, fill=fill) -> float:
                return sum(score(fill(r["query"], alpha, w, r["tokens"]), by_id[r["id"]], incidents)[0] for r in dev)

            alpha, w, dev_score = hybrid.pick_weights(objective)
            chosen[name] = {"alpha": alpha, "w": w, "dev_holds": dev_score, "dev_items": len(dev),
                            "chosen_on": f"{folder.name} split dev"}
        for r in rows:
            r[name] = score(fill(r["query"], alpha, w, r["tokens"]), by_id[r["id"]], incidents)
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["format"]].append(r)
        groups[f"split:{r['split']}"].append(r)
        groups["all"].append(r)
    return {"incidents": len(incidents), "formats": sorted({i.format for i in incidents}), "question": question,
            "refused": poimen.refused, "errors": errors, "runs": len(poimen.outcomes), "loop_s": poimen.loop_s, "index_s": poimen.index_s,
            "poimen_s": poimen_s, "seconds": time.perf_counter() - started, "weights": chosen,
            "tally": {g: {m: tally(rs, m) for m in METHODS} for g, rs in groups.items()},
            "items": [{k: v for k, v in r.items() if k != "output"} | {"output": r["output"][:2000]} for r in rows]}


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.incident_suite``: the suites and their report (``bench.incident_report``)."""
    from bench.incident_report import main as report_main

    report_main(argv)


if __name__ == "__main__":
    main()
