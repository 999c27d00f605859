"""Roles across an incident: each line's own role (``roles.pick``), then what the lines around it change.

A ruled-out suspect and a failed attempt demote the line they name, a verification before anything was done is
none, a change logged before the failure began triggered it, an action that introduces a block gives the block its
role, and a note typed between an editor and the command that puts the edit to work says what was edited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from poimen.incidents.cues import (CONFIG_LINE, COMMAND, FENCE, INEFFECTIVE, INTRODUCES, LIST_ITEM, OPTIONS_LABEL,
                                   OFF_TOPIC, RULED_OUT, STOP, SYMPTOM, suspects)
from poimen.incidents.entities import entities
from poimen.incidents.kinds import attempts
from poimen.incidents.lines import Line
from poimen.incidents.roles import (AS_WRITTEN, INTRODUCED, LOOKBACK, READS, THRESHOLD, Role, Scores, body,
                                    line_scores, pick)
from poimen.incidents.times import clock_of, line_clocks, record_seconds, time_kind
from poimen.inputs.readers.shell import PROMPT
from poimen.text.line_levels import first_failure_level
from poimen.text.log_lines import is_log_line


def _content(text: str) -> frozenset[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]{2,}", text)}
    words |= attempts(text)
    return frozenset(w for w in words if w not in STOP and not SYMPTOM.fullmatch(w)
                     and not RULED_OUT.fullmatch(w) and not INEFFECTIVE.fullmatch(w))


def _overlap(line: Line, earlier: Line) -> int:
    """How strongly a ruling-out ``line`` names what ``earlier`` says: content words in common, a specific entity in
    common counting two; below 2, it does not name it."""
    said, told = body(line.text), body(earlier.text)  # (no shell prompt: every command of a session has its words)
    words = len(_content(said) & _content(told))
    mine = {(e.kind, e.value) for e in entities(said) if e.weight >= 0.6}
    shared = mine & {(e.kind, e.value) for e in entities(told)}
    return words + 2 * len(shared)


EDITOR = re.compile(r"^\W*(?:sudo\s+(?:-\S+\s+)*)?(?:vi|vim|nvim|nano|emacs|sudoedit|visudo|crontab\s+-e)\s+\S")


def _notes_on_edits(lines: Sequence[Line], roles: list[str], scored: list[Scores]) -> None:
    """A note typed after a file was opened in an editor and before the change was put to work (a reload, a restart,
    an apply: a command with the action role) says what the edit was: "# keepalive 64 back in app_pool, plus
    HTTP/1.1 …" between ``vim upstreams.conf`` and ``systemctl reload nginx`` (bench/incidents8). It is an action
    when it names something set (a key, or a number) and claims nothing else."""
    for i, line in enumerate(lines):
        if line.record.kind != "command" or not EDITOR.match(body(line.text)):
            continue
        after = next((k for k in range(i + 1, min(len(lines), i + 1 + EDIT_WINDOW))
                      if roles[k] == "action" and lines[k].record.kind == "command"), None)
        for j in range(i + 1, after or i):
            said = body(lines[j].text)
            if lines[j].record.kind == "note" and roles[j] == "none" and re.search(r"\d|[\w.-]+[=:]\S", said):
                roles[j] = "action"
                scored[j] = replace(scored[j], action=max(scored[j].action, THRESHOLD))


EDIT_WINDOW = 20  # lines from an editor command to the command that puts the edit to work
_SETTING_LINE = re.compile(r"^\s*-?\s*[\w.\-\"']+\s*(?::\s|=)\s*\S")  # "dnsConfig: {options: …}", "max_conns = 64"


def _settings_under_comments(lines: Sequence[Line], roles: list[str], scored: list[Scores]) -> None:
    """A comment in a printed file that tells a change ("# carrier hostnames have 2-3 dots; with ndots 2 they
    resolve as absolute names first (PLAT-1744)" in ``cat values-prod.yaml`` after ``vi``; bench/incidents13) is
    its author's note on the setting right under it: that setting is the change as written."""
    for i, line in enumerate(lines[:-1]):
        below = lines[i + 1]
        printed = line.record.kind == "output" or (line.record.kind == "note" and not PROMPT.match(line.text))
        if roles[i] == "action" and printed and line.text.lstrip().startswith("#") \
                and below.record.kind == "output" and _SETTING_LINE.match(below.text) and roles[i + 1] == "none":
            roles[i + 1] = "action"
            scored[i + 1] = replace(scored[i + 1], action=max(scored[i + 1].action, scored[i].action + AS_WRITTEN))


MACHINE_KINDS = frozenset({"log", "output", "command", "code"})  # what a program printed or a person ran
_FILE_LINES = re.compile(r"^\s*(?:#|;|//|\[[\w .-]+\]\s*$)")  # a file's comment or section header ("[Service]")
PUT_TO_WORK = 3  # lines from a setting a comment writes out to the command that puts it to work


def _settings_put_to_work(lines: Sequence[Line], roles: list[str], scored: list[Scores]) -> None:
    """A setting a person writes out in a comment ("TasksMax=infinity" in a drop-in's lines) and, a few lines on,
    the command that puts it to work (``systemctl daemon-reload && systemctl restart wildfly``, an action): the
    setting is the change as written (bench/incidents20). Only a file's own lines (its comments, its section
    headers) between them."""
    for i, line in enumerate(lines):
        if roles[i] != "none" or line.record.kind in MACHINE_KINDS or not _SETTING_LINE.match(line.text) \
                or len(line.text.split()) > 3 or line.is_frame:  # (not a comment's "Title: mitigation")
            continue
        for k in range(i + 1, min(len(lines), i + 1 + PUT_TO_WORK)):
            if roles[k] == "action" and COMMAND.search(lines[k].text) and lines[k].record.author == line.record.author:
                roles[i] = "action"
                scored[i] = replace(scored[i], action=max(scored[i].action, scored[k].action))
                break
            if not (_SETTING_LINE.match(lines[k].text) or _FILE_LINES.match(lines[k].text)):
                break


_ALSO = re.compile(r"^\s*(?:and|also|plus)\b", re.I)  # "and in the BillingDS definition (standalone.xml):"


def _block_below(lines: Sequence[Line], i: int) -> int:
    """Where the block of code or configuration right under line ``i`` ends (``i + 1`` when there is none)."""
    k = i + 1
    while k < len(lines) and lines[k].record.author == lines[i].record.author and (
            lines[k].record.kind == "code" or lines[k].indent >= 2 or CONFIG_LINE.match(lines[k].text)):
        k += 1
    return k


def _introductions(lines: Sequence[Line], i: int, until: int | None = None, free=lambda end: True):
    """Line ``i`` and each "and …:" line after the block it introduces that introduces a block of its own ("and in
    application.yml:"), before ``until`` and where ``free`` allows: the lines that introduce one change's blocks. A
    line yielded is handled before the next is looked at."""
    until = len(lines) if until is None else until
    while (end := _block_below(lines, i)) > i + 1:
        yield i
        if end >= until or not (_ALSO.match(lines[end].text) and lines[end].text.rstrip().endswith(":") and free(end)):
            return
        i = end


def _release_contents(lines: Sequence[Line], roles: list[str], scored: list[Scores]) -> None:
    """What a release holds, written out before it ships: "Two changes for 2025.3.3. persistence.xml …:" over the
    setting, and later "2025.3.3 deployed on 14/03. Since then … no ORA-01000" (an action naming that version;
    bench/incidents20). The line that names the version and introduces a block of code or configuration is the
    change, as is one that goes on with "and …:" over a block of its own; the blocks follow (``INTRODUCES``)."""
    def versions(line: Line) -> set[str]:
        return {e.value for e in entities(line.text) if e.kind == "version"}

    # the lines that could introduce a release's block: a person's, ending in ":", with the versions each names
    intros = {i: versions(line) for i, line in enumerate(lines)
              if line.record.kind not in MACHINE_KINDS and line.text.rstrip().endswith(":")}
    for j, line in enumerate(lines):
        if roles[j] != "action" or line.record.kind in MACHINE_KINDS or not (shipped := versions(line)):
            continue
        for i in range(j):
            if roles[i] != "none" or not shipped & intros.get(i, set()):
                continue
            for k in _introductions(lines, i, until=j, free=lambda end: roles[end] == "none"):
                roles[k] = "action"
                scored[k] = replace(scored[k], action=max(scored[k].action, scored[j].action))


# The clause that says a change follows: "Change for all four nodes, server.xml, http-nio-8080 Connector:"
# ... or names the merge request that holds it: "MR !2218, build.gradle.kts of booking-gateway:"
_CHANGE_FOLLOWS = re.compile(r"^(?:(?:the|our|one|two|three|a) )?(?:changes?|fix(?:es)?|patch(?:es)?|"
                             r"(?:MR|PR|merge request|pull request) *[!#]?\d+)\b[^:]*:\s*$"
                             # Trac's commit: "In [9012]:"
                             r"|^In (?:\[\d{1,9}\]|r\d{1,9}|changeset:?\s*\w{4,40}):\s*$",
                             re.I)


# ... or a line a fix label opens, which goes on into the block under it ("What works: an override file …,")
_FIX_OPENS = re.compile(r"^(?:the |our )?(?:(?:proper |real |actual )?fix(?:es)?|solution|workaround|what (?:works|worked|"
                        r"fixed it))\b(?:[^:.]|\.(?=\d)){0,40}:\s+\S.*[:,]\s*$", re.I)


def _written_out(lines: Sequence[Line], roles: list[str], scored: list[Scores], i: int, score: float) -> None:
    """The code block right under line ``i`` (its first ``INTRODUCED`` lines), as the change written out: each line
    of configuration, each command, each line of code that quotes no log level is an action scored ``score``. A
    block that opens with a command that only looks (``roles.READS``) is what was seen, not the change."""
    first = next((line.text for line in lines[i + 1:i + 1 + INTRODUCED] if not FENCE.match(line.text)), "")
    if READS.search(first) and not COMMAND.search(first):
        return
    for j in range(i + 1, min(len(lines), i + 1 + INTRODUCED)):
        text = lines[j].text
        if FENCE.match(text):
            continue
        if not (lines[j].record.kind == "code" or CONFIG_LINE.match(text) or COMMAND.search(text)
                or text.lstrip().startswith(("```", "$ ")) or lines[j].indent >= 4
                or (lines[j].indent >= 2 and lines[j].record is not lines[i].record)):  # a block a comment indents
            break  # the prose after the block
        if roles[j] in ("none", "action") or (roles[j] == "symptom" and not first_failure_level(text)):
            roles[j] = "action"  # a code line that quotes no log level is what was run or written
            scored[j] = replace(scored[j], action=max(scored[j].action, score))


def _changes_written_out(lines: Sequence[Line], roles: list[str], scored: list[Scores]) -> None:
    """A person's line whose last clause says a change follows, over a code block ("We decided not to make it a
    requirement today: … . Change for all four nodes, server.xml, http-nio-8080 Connector:", "MR !2218,
    build.gradle.kts of booking-gateway:"; bench/incidents20): the block is the change as written, whatever the
    sentences before say."""
    for i, line in enumerate(lines):
        clause = re.split(r"(?<=[.!?])\s+", line.text.strip())[-1]
        if line.record.kind not in MACHINE_KINDS and _FIX_OPENS.match(clause):
            # "What works: an override file shipped with the app," / "Fix going into 1.48.3: the controller streams
            # the part …," over the block, then "and in application.yml:" over its own (bench/incidents23)
            for k in _introductions(lines, i):
                _written_out(lines, roles, scored, k, THRESHOLD + AS_WRITTEN)
        if line.record.kind not in MACHINE_KINDS and _CHANGE_FOLLOWS.match(clause):
            _written_out(lines, roles, scored, i, THRESHOLD + AS_WRITTEN)
            # ... or a list of them ("Two changes, both live since yesterday afternoon:" over "1. routeplan-rollover
            # now drops the old index with UNLINK …", "2. … on route-redis (values.yaml):" over its setting;
            # bench/incidents23): each item is a change, with the block under it
            j = i + 1
            while j < len(lines) and LIST_ITEM.match(lines[j].text) and lines[j].record.author == line.record.author:
                if roles[j] in ("none", "action"):
                    roles[j] = "action"
                    scored[j] = replace(scored[j], action=max(scored[j].action, THRESHOLD))
                    _written_out(lines, roles, scored, j, THRESHOLD + AS_WRITTEN)
                j = _block_below(lines, j)


def _options_laid_out(lines: Sequence[Line], roles: list[str]) -> None:
    """The list under a label alone on its line that says options follow ("Options:" over "1. switch PgBouncer to
    `pool_mode = session`", "2. …", "3. …"; bench/incidents16) is choices, none done: its items claim nothing. The
    one taken is told later ("Went with option 3")."""
    for i, line in enumerate(lines):
        if OPTIONS_LABEL.match(line.text):
            for j in range(i + 1, len(lines)):
                if not LIST_ITEM.match(lines[j].text) or lines[j].record is not line.record:
                    break
                if roles[j] == "action":
                    roles[j] = "none"


PROPOSED = THRESHOLD / 2  # a line that names a change (a flag, a key and value, a version) but says nothing was done


def _proposes(line: Line) -> bool:
    """Whether a person wrote ``line`` (a change can be proposed in it): not what a program printed, nor a log
    line quoted in a write-up ("> Nov  5 11:52:09 mx-out-1 postfix/cleanup[30388]: …")."""
    return line.record.kind not in ("log", "output") and not is_log_line(line.text.lstrip("> \t"))


_POSTED = frozenset({"message", "reply"})  # a chat's posts, each stamped when it was posted


def _confirmed(lines: Sequence[Line], roles: list[str], scored: list[Scores], after) -> None:
    """A change proposed, then confirmed to work, was made: "Use `--on-conflict=skip` to get the old behaviour back"
    and, later, "Restore with skip went through"; "adding `--progress=none` to the cron line skips that code path"
    and "2.4.1 from PyPI fixes the cron job" (bench/incidents19). A verification makes the nearest line before it
    that names a change (``PROPOSED``) and shares a word or a named thing with it an action (never one a rule above
    demoted: a change logged before the failure, a suspect ruled out)."""
    for i, role in enumerate(roles):
        if role != "verification" or scored[i].action >= THRESHOLD:
            continue  # (one that tells what was done itself, "Instead Piet rewrote the record …", needs no proposal)
        named = [j for j in range(i - 1, -1, -1) if roles[j] == pick(scored[j]) == "none" and scored[j].action >= PROPOSED
                 and not after(j, i) and _proposes(lines[j]) and _overlap(lines[i], lines[j]) >= 1]
        for j in named[:1]:
            roles[j] = "action"


def assign(lines: Sequence[Line]) -> tuple[Role, ...]:
    """A role for every line of an incident, in order, with ruled-out suspects and failed attempts demoted.

    - A line that rules a suspect out demotes the one earlier line it names best (the most content words and
      specific entities in common: two words or one entity, or one word in the ``LOOKBACK`` lines before it),
      whatever role that line had but a printed error (symptom ≥ 2): the suspect, not what was seen.
    - A line that says an attempt did not help demotes the nearest earlier action it names (as a ruling-out line
      names one; "rollback" names ``rollout undo``; earlier by time where both have one: a journal listed newest
      first puts the fix above "That only delayed it"), with the command that printed it when that action is output
      ("deployment.apps/x rolled back"), else the nearest action among the ``LOOKBACK`` lines before it.
    - A command whose own output opens with an error ("Error: UPGRADE FAILED") changed nothing: it is no action.
    - Nothing is verified before something was done: a verification before the incident's first action is read
      again without that role (a symptom if it reports one, else none).
    - A change a timeline logs before the first symptom it logs triggered the failure; it fixed nothing. So did a
      chat post of a change before the first post of the failure (by the posts' own times).
    - A change proposed and then confirmed to work was made (``_confirmed``).
    - An action that introduces a code block ("Added a drop-in limits.conf:", "build it yourself with", "we ran")
      gives the block's first ``INTRODUCED`` lines its role and its score plus ``AS_WRITTEN`` (a fenced or indented block, configuration, a command; not a
      line that quotes a log level): the block is the fix as written.
    """
    scored = [line_scores(line) for line in lines]
    roles = [pick(s) for s in scored]
    when = [record_seconds(line.record.time, line.record.text, line.record.kind) for line in lines]

    def after(j: int, i: int) -> bool:
        """Whether line ``j``, above line ``i``, was written after it (a journal listed newest first)."""
        return when[j] is not None and when[i] is not None and time_kind(when[j]) == time_kind(when[i]) \
            and when[j] > when[i]

    for i, (line, s) in enumerate(zip(lines, scored)):
        if s.ruled_out and not OFF_TOPIC.search(line.text):
            named = [(_overlap(line, lines[j]), j) for j in range(i) if roles[j] != "verification"
                     and not (roles[j] == "symptom" and (scored[j].symptom >= 2 * THRESHOLD or lines[j].record.kind
                                                         in MACHINE_KINDS))]  # an error printed stands
            # two words or an entity in common anywhere before, or one word in the lines just before it
            named = [(n, j) for n, j in named if n >= 2 or (n == 1 and j >= i - LOOKBACK)]
            # "... it was fine, and it was not the problem": no name, so the suspect just voiced before it
            named = named or [(0, j) for j in range(max(0, i - LOOKBACK), i) if suspects(lines[j].text)][-1:]
            if named:
                roles[max(named)[1]] = "none"
        if s.ineffective:
            # "rollback changed nothing": the action it names, however much output came between; else the nearest
            # (in the same part of a write-up: the timeline's "15:30 rolled forward again, no effect" and the lessons'
            # "we spent 14 minutes rolling back, and it did not help" are about their own attempts, not the fix the
            # Resolution tells; bench/incidents24)
            part = line.record.headings
            named = [j for j in range(i - 1, -1, -1) if roles[j] == "action" and _overlap(line, lines[j]) >= 1
                     and not after(j, i) and (not part or lines[j].record.headings in ((), part))]
            near = [j for j in range(i - 1, max(-1, i - 1 - LOOKBACK), -1)
                    if roles[j] == "action" and not after(j, i) and (not part or lines[j].record.headings in ((), part))]
            for j in (named or near)[:1]:
                roles[j] = "none"
                # what a command printed that it changed ("deployment.apps/x rolled back"): the command too
                cmd = next((k for k in range(j - 1, max(-1, j - LOOKBACK), -1) if lines[k].record.kind == "command"),
                           None) if lines[j].record.kind == "output" else None
                if cmd is not None and roles[cmd] == "action":
                    roles[cmd] = "none"
    # A command that printed an error changed nothing ("helm upgrade …" over "Error: UPGRADE FAILED: …").
    for i, line in enumerate(lines):
        if roles[i] == "action" and line.record.kind == "command":
            printed = lines[i + 1:i + 3]  # the first lines it printed
            if any(p.record.kind == "output" and scored[j].symptom >= 2 * THRESHOLD and first_failure_level(p.text)
                   for j, p in enumerate(printed, i + 1)):
                roles[i] = "none"
    # A change logged before the failure began is what triggered it, not what fixed it ("09:50 8.14.0 deployed"
    # above "10:14 every gateway panics"): by the times the lines give where they give one.
    clocks = line_clocks(lines)
    began = min((t for t, r in zip(clocks, roles) if r == "symptom" and t is not None), default=None)
    if began is not None:
        for i, (line, r) in enumerate(zip(lines, roles)):
            t = clock_of(line.text)
            if r == "action" and t is not None and t < began:
                roles[i] = "none"
    # ... and a message posted before the first failure anyone posted ("Kestrel CI: Deployed warden 3.2.0" at 08:41,
    # the login alert at 09:06; bench/incidents21), by the records' own times
    posted = [(when[i], i) for i, r in enumerate(roles) if r == "symptom" and when[i] is not None]
    if posted:
        first = min(posted)[0]
        for i, r in enumerate(roles):
            if r == "action" and lines[i].record.kind in _POSTED and when[i] is not None \
                    and time_kind(when[i]) == time_kind(first) and when[i] < first:
                roles[i] = "none"
    _release_contents(lines, roles, scored)
    for i, (line, r) in enumerate(zip(lines, roles)):
        # "EXPLAIN (ANALYZE) of the lane query on prod:" over an indented block: what it printed, shown as evidence;
        # no line of it is a change, unless it is a command ("Rows Removed by Filter: 40918337"; bench/incidents20)
        if r != "action" and line.text.rstrip().endswith(":") and line.indent < 4:
            for j in range(i + 1, len(lines)):
                if lines[j].indent < 4:
                    break
                if roles[j] == "action" and not COMMAND.search(lines[j].text):
                    roles[j] = "none"
        # "Added a drop-in limits.conf:" / "build it yourself with" over a code block: the block is the fix itself
        if r == "action" and INTRODUCES.search(line.text):
            _written_out(lines, roles, scored, i, scored[i].action + AS_WRITTEN)
    _changes_written_out(lines, roles, scored)  # (after the blocks shown under a line that is no action)
    _notes_on_edits(lines, roles, scored)
    _settings_under_comments(lines, roles, scored)
    _settings_put_to_work(lines, roles, scored)
    _options_laid_out(lines, roles)
    for i, line in enumerate(lines):  # "Stopped it: kubectl -n tools delete cronjob order-replay. Group is stable
        # since 11:19" (bench/incidents22): the change, confirmed in the same breath, is the fix
        if roles[i] == "verification" and line.record.kind not in MACHINE_KINDS and COMMAND.search(line.text) \
                and scored[i].action >= THRESHOLD:
            roles[i] = "action"
    _confirmed(lines, roles, scored, after)
    first_action = next((i for i, r in enumerate(roles) if r == "action"), None)
    if first_action is not None:
        for i in range(first_action):
            if roles[i] == "verification":
                roles[i] = "symptom" if scored[i].symptom >= THRESHOLD else "none"
    return tuple(Role(line, role, s) for line, role, s in zip(lines, roles, scored))
