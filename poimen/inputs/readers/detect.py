"""Which format a file is, by its content first and its suffix second.

The head of the file (``HEAD`` bytes) is read: JSON whose records look like chat messages is ``chat``, other JSON
``json``; most lines JSON objects is ``jsonl`` (``chat`` for Mattermost's bulk export, ``log`` for a .log of
structured log events); a ticket CSV header is ``csv``; a page that opens with ``<!DOCTYPE html>`` or ``<html>`` is
``html``; one that opens with ``<feed>`` or ``<rss>`` (after an XML declaration) is a ``feed``; two "h2. …" headings or more make a ``.txt`` ``wiki`` markup; prompt lines make ``shell`` (an asciinema recording too; a ``script`` typescript's
terminal bytes dropped);
most lines log lines make ``log``. Content only overrides a suffix when the evidence is strong (a ``.txt`` that
is a log, a ``.log`` that is a shell session, a ``.json`` that is a list of issues); otherwise the suffix
decides, and a file with neither is an ``UnknownFormat`` naming the formats poimen reads.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from poimen.inputs.readers.formats import FORMATS, SUFFIXES, UnknownFormat, known_formats
from poimen.inputs.readers.jsonlog import is_log_event
from poimen.inputs.readers.jsonpos import depth_ok
from poimen.inputs.readers.chat import is_mattermost, is_slack
from poimen.inputs.readers.bundle import is_bundle
from poimen.inputs.readers.cast import is_cast
from poimen.inputs.readers.feed import is_feed
from poimen.inputs.readers.mattermost import is_bulk_head
from poimen.text.line_levels import line_levels
from poimen.text.log_lines import is_log_line, level_of, source_prefix
from poimen.text.terminal import shown
from poimen.inputs.readers.shell import is_prompt, is_timed_history
from poimen.inputs.readers.tickets import is_ticket_header
from poimen.inputs.readers.mail import is_mail
from poimen.inputs.readers.mediawiki import is_mediawiki
from poimen.inputs.readers.wiki import is_wiki

HEAD = 1 << 16
LOG_SHARE = 0.8  # of a head's non-blank lines, for a .txt to read as a log
PROMPT_SHARE = 0.1  # of a head's non-blank lines, prompts, for a session (commands print many lines each)
OPENING = 40  # the non-blank lines a file opens with: a log with a comment thread after it is a log by these
# What stands over a log pasted into a file: `tail`'s "==> catalina.out <==", a rule-framed title ("=== wf-bill-02:
# /opt/wildfly/standalone/log/console.log -- 2025-03-03 ===") or a "#" line ("### pattern: %d [%t] %-5level …")
# (bench/incidents20); up to ``BANNERS`` of them
_BANNER = re.compile(r"^==> .+ <==$|^\s*[-=#*~]{2,}\s+\S.*?\s+[-=#*~]{2,}\s*$|^#{1,6}\s+\S")  # "== cart-api … =="
BANNERS = 3
NOTE = 5  # the lines of a note over a saved log's first banner
# ... a box of rules around a few lines ("=====" / " server.log  claims-app-02 …" / " JAVA_OPTS: …" / "====="), or a
# title that names the log file and what was done to it ("catalina.2025-04-14.log / … - tw-web-05" over "grep -v
# DEBUG | trimmed for the ticket") (bench/incidents22)
BOX = 16  # the lines a box of rules over a log may hold: a server's start-up header
_HTML = re.compile(r"\s*(?:<!--.*?-->\s*)*(?:<!doctype\s+html\b|<html\b|<\?xml[^>]*>\s*<(?:!doctype\s+)?html\b)",
                   re.I | re.S)
_RULE_ONLY = re.compile(r"^\s*[-=#*~_]{3,}\s*$")
_JVM_SAYS = re.compile(r"^(?:NOTE: )?Picked up (?:JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS):|^OpenJDK 64-Bit Server VM warning:")
_LOG_FILE_TITLE = re.compile(r"^\S*\.(?:log|out)(?:\.\d+)?\b")
_TRACE = re.compile(r"^\s+(?:at |\.\.\. \d+ (?:more|common))|^(?:Caused by|Suppressed): |^\s+\S|^! \S"
                    r"|^[\w$.]+(?:Exception|Error|Throwable)\b")  # the exception a trace opens with (Dropwizard's "! …")


def _head(path: Path) -> str:
    with path.open("rb") as fh:
        return fh.read(HEAD).decode("utf-8-sig", errors="ignore")


def _first_json_value(head: str):
    """The first record of a JSON array (or the object) at the head, None if it does not parse there."""
    body = head.lstrip()
    dec = json.JSONDecoder()
    try:
        if body.startswith("["):
            value, end = dec.raw_decode(body, len(body) - len(body[1:].lstrip()))
            after = body[end:].lstrip()[:1]
            return value if after in (",", "]") or (not after and end == len(body)) else None
        value, _ = dec.raw_decode(body)
        return value
    except ValueError:
        return None


def _structured_log(head: str) -> bool:
    """Most of the head's lines are JSON log events (pino, bunyan, zap): a .log the log reader reads."""
    lines = _lines(head)
    events = 0
    for x in lines:
        try:
            events += is_log_event(json.loads(x)) if depth_ok(x) else 0
        except ValueError:
            pass
    return events * 2 > len(lines)


def _lines(head: str) -> list[str]:
    return [x for x in head.splitlines() if x.strip()][:50]


def _json_kind(head: str) -> str | None:
    body = head.lstrip()
    if not body.startswith(("[", "{")):
        return None
    lines = _lines(head)
    objects = 0
    for x in lines[:-1] if len(head) >= HEAD else lines:  # the last line of a cut head may be cut itself
        if not depth_ok(x):
            return "jsonl" if body.startswith("{") else "json"  # its reader names the line
        try:
            objects += isinstance(json.loads(x), dict)
        except ValueError:
            pass
    if len(lines) > 1 and objects * 2 > len(lines):
        return "chat" if is_bulk_head(lines) else "jsonl"
    if not depth_ok(head):
        return "json"
    first = _first_json_value(head)
    if isinstance(first, dict):
        inner = [v for v in first.values() if isinstance(v, (list, dict))]
        probe = [first] + [x for v in inner for x in (v if isinstance(v, list) else list(v.values()))[:1]]
        if any(is_slack(p) or is_mattermost(p) for p in probe):
            return "chat"
    return "json" if first is not None else None


def _note_over_banner(head: str) -> int:
    """The lines of a short note over what ``tail`` printed ("roomhold -- prod log excerpts, saved by Tomás" /
    "log: kubectl logs …, times UTC", a blank line, then a banner: "==> pod (4.12.0) <==", "--- parcel-eta-6b9f7c5d8-
    4tqzn, 2025-09-22 ---", "#### portal-1  /opt/…/application.log", a rule, or the command that printed it, "$
    kubectl logs …"): a saved log's own words about it, no title of a report (bench/incidents29, 40); 0 for none.
    (The log still has to follow.)"""
    raw = [shown(x) for x in head.splitlines()[:NOTE + 2]]
    blank = next((n for n, x in enumerate(raw) if not x.strip()), None)
    if not blank or blank > NOTE:
        return 0
    after = next((x for x in raw[blank:] if x.strip()), "")
    if _BANNER.match(after):
        return blank
    said = not any(is_log_line(x) or _BANNER.match(x) for x in raw[:blank])  # (words, not a log of its own)
    # ... or a note that says it is over logs ("pod logs for conversation #77120 grabbed by Tomasz with: kubectl
    # logs …", "docker compose logs -f indexer"; bench/incidents44) over a line the log printed with its level
    told = any(_SAYS_LOGS.search(x) for x in raw[:blank]) and is_log_line(after) and bool(level_of(after))
    return blank if said and (_RULE_ONLY.match(after) or is_prompt(after) or told or (
        source_prefix(after) and is_log_line(after))) else 0


_SAYS_LOGS = re.compile(r"\blogs?\b", re.I)


def _line_kind(head: str) -> str | None:
    lines = [x for x in map(shown, head.splitlines()[:400]) if x.strip()]
    if not lines:
        return None
    if sum(is_prompt(x) or is_timed_history(x) for x in lines) >= max(1, PROMPT_SHARE * len(lines)):
        return "shell"
    # A log from its first line on: a report whose title heads a pasted log (a ticket, an e-mail) stays prose, so
    # its title still stands over its body. What ``tail`` and ``head`` print over a file ("==> catalina.out <==")
    # is no title, and a trace's frames are the log's lines: a Java log whose comment thread follows it (from
    # bench/incidents9) is a log by its opening lines.
    lines = lines[_note_over_banner(head):]
    banners = next((n for n, x in enumerate(lines[:BANNERS + 1]) if not _BANNER.match(x)), 0)
    if _RULE_ONLY.match(lines[banners]) and len(lines) > banners + 1 and is_prompt(lines[banners + 1]):
        banners += 1  # a rule over the command that printed the log (bench/incidents40)
    if is_prompt(lines[banners]) and len(lines) > banners + 1:  # "$ kubectl -n booking logs … --prefix" over it,
        # and what the command says before the log ("[TAILING] Tailing last 60 lines …", "…/pm2.log last 60 lines:")
        banners += 1 + next((n for n, x in enumerate(lines[banners + 1:banners + 4]) if is_log_line(x)), 0)
    elif _RULE_ONLY.match(lines[banners]):  # (under a banner too: "==> …/messages.log <==" over Open Liberty's box of
        # "product = …", "java.version = …" between two rules of asterisks; bench/incidents25)
        banners = next((n + 1 for n, x in enumerate(lines[banners + 1:banners + BOX], banners + 1) if _RULE_ONLY.match(x)),
                       0)
    elif not banners and _LOG_FILE_TITLE.match(lines[0]):
        banners = next((n for n, x in enumerate(lines[:BANNERS]) if is_log_line(x)), 0)
    lines = lines[banners:]
    lines = lines[next((n for n, x in enumerate(lines[:3]) if not _JVM_SAYS.match(x)), 0):]  # (what the JVM says
    # before the program logs anything: "Picked up JAVA_TOOL_OPTIONS: -Xlog:gc…"; bench/incidents27)
    opening = lines[:OPENING]
    logged = [is_log_line(x) or bool(_TRACE.match(x) or source_prefix(x)) for x in opening]  # (a merged log's
    # trace lines under their source: "[pod/booking-api-7c9f6d8b5-t4mzx/api]       Storing keys in …")
    if len(lines) >= 3 and is_log_line(lines[0]) and (
            sum(is_log_line(x) for x in lines) >= LOG_SHARE * len(lines)
            or sum(logged) >= LOG_SHARE * len(opening)
            # (a short log over a long thread: its first lines are a program's, the first with its level; a
            # plain-text timeline's stamped lines have none)
            or (all(logged[:3]) and bool(level_of(lines[0]) or next(line_levels(lines[0]), None)))):
        return "log"
    return None


def detect(path: Path) -> str:
    head = _head(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):  # its lines may be any JSON, or none: the reader keeps a line that is no object
        return "chat" if is_bulk_head(_lines(head)) else "jsonl"
    if is_cast(head):  # an asciinema recording: its header, then one output event a line
        return "shell"
    kind = _json_kind(head)
    if kind:
        return "log" if kind == "jsonl" and suffix == ".log" and _structured_log(head) else kind
    if suffix == ".json":
        return "json"  # JSON whose first record is past the head, or broken: its reader names the line
    if suffix == ".csv" or (suffix not in SUFFIXES and _csv_header(head)):
        return "csv"
    if suffix == ".md":
        return "markdown"
    if _HTML.match(head):  # a page saved as .txt, or with no suffix, is a page by its opening tag
        return "html"
    if suffix not in SUFFIXES and is_mail(head):  # a message saved with no .eml
        return "mail"
    if is_bundle(head):  # API answers saved with `tail -n +1 *.json`
        return "bundle"
    if is_feed(head):  # a status page's history.atom saved as .xml
        return "feed"
    kind = _line_kind(head)
    if kind and (suffix != ".log" or kind == "shell"):
        return kind
    if not kind and suffix in ("", ".txt", ".text") and is_wiki(_lines(head)):  # a page or a description saved as text
        return "wiki"
    if not kind and suffix in ("", ".txt", ".text") and is_mediawiki(_lines(head)):  # a wiki page's source
        return "mediawiki"
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    raise UnknownFormat(f"{path}: unsupported type {suffix or '(none)'}; poimen reads {known_formats()} "
                        "(name one with --format)")


def _csv_header(head: str) -> bool:
    try:
        first = next(csv.reader(io.StringIO(head, newline="")), [])
    except csv.Error:  # not CSV (a stray carriage return, a NUL): the file is read as some other format
        return False
    return len(first) >= 2 and is_ticket_header(first)


__all__ = ["detect", "FORMATS"]
