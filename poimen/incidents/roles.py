"""The part each line of an incident plays: symptom, cause, action (the fix), verification, or none.

The offline engine scores every line for each role from cues (generic on-call English, never one stream's
wording), then picks a role. The cue lists, their weights and which data each was checked on are in the module
docstring of ``poimen.incidents.cues``.

A role needs ``THRESHOLD``; when the best two are within ``TIE`` the priority is action, cause, verification, symptom.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from poimen import signatures
from poimen.incidents.entities import SPEAKER, entities
from poimen.incidents.cues import (ASIDE, BELIEF, BUT, BY_DOING, CAUSE, CAUSE_SECTION, CHANGED_OBJECT, COMMAND, DONE,
                                   EDITED, FENCE, FIX_SECTION, FIX_WORDS, FRAME, HEDGE, IMPERATIVE, INCIDENT_ADMIN,
                                   IN_RELEASE, MECHANISM, NEGATED, NOW_DOES, NOW_IS, PLANNED, PR_DOES, OTHER_PROBLEM,
                                   RECEDING, RULED_OUT, SETTING, SO, SOFT, SYMPTOM, TODO_SECTION, VALUE, VERIFY,
                                   ineffective, is_label, is_part_line, names_part, says_more)
from poimen.incidents.commands import told_command
from poimen.incidents.knobs import changed_setting
from poimen.incidents.lines import Line
from poimen.incidents.news import says_nothing
from poimen.incidents.toollines import BUILD_STEP, FIELD_CHANGE, FIELD_ROW, about_post
from poimen.inputs.readers.shell import PROMPT
from poimen.text.log_lines import is_log_line, level_of
from poimen.text.line_levels import first_failure_level, line_levels

ROLES = ("symptom", "cause", "action", "verification", "none")
THRESHOLD = 1.0
TIE = 0.3
LOOKBACK = 4
INTRODUCED = 4  # the code lines an action line ending in ":" introduces (its block's first lines)
AS_WRITTEN = 1.0  # the block is the fix as written: it ranks over the prose that tells of it
_PRIORITY = ("action", "cause", "verification", "symptom")


@dataclass(frozen=True)
class Scores:
    """A line's score for each role, and whether it rules a suspect out."""

    symptom: float = 0.0
    cause: float = 0.0
    action: float = 0.0
    verification: float = 0.0
    ruled_out: bool = False
    ineffective: bool = False

    def of(self, role: str) -> float:
        return getattr(self, role) if role != "none" else 0.0


@dataclass(frozen=True)
class Role:
    """A line of an incident with the role it was given and the scores that gave it."""

    line: Line
    role: str
    scores: Scores


def _count(pattern: re.Pattern, text: str) -> int:
    return len({m.group(0).lower() for m in pattern.finditer(text)})


def hedge_factor(text: str) -> float:
    """How much a hedge weakens a claim: 1 for none, lower for a guess or a belief since dropped."""
    but = BUT.search(text)
    factor = 1.0
    for pattern, weight in ((BELIEF, 0.3), (HEDGE, 0.4), (SOFT, 0.7)):
        m = pattern.search(text)
        if m and not (but and but.start() > m.start()):
            factor = min(factor, weight)
    if text.rstrip().endswith("?") or "? " in text:
        factor = min(factor, 0.4)
    return factor


def _symptom(text: str, level: str) -> float:
    grades = [lv.grade for lv in line_levels(text)]
    if level:
        grades += [lv.grade for lv in line_levels(level.upper())]
    score = max(grades, default=0.0)
    if signatures.extract_signatures(text):
        score += 1.0
    words = _count(SYMPTOM, SETTING.sub(" ", text))
    # a program that logs a line at INFO or DEBUG says it is no failure: its words ("consumer lag group=… total=…")
    # weigh half (bench/incidents12)
    quiet = QUIET_LEVEL if (level or level_of(text)).upper() in _QUIET_LEVELS else 1.0
    return score + (quiet * min(1.8, 1.0 + 0.4 * (words - 1)) if words else 0.0)


_QUIET_LEVELS = frozenset({"INFO", "DEBUG", "TRACE", "I", "D"})
QUIET_LEVEL = 0.5


_CLAUSE = re.compile(r"[.;:!?,(]\s|\band\b|\bthen\b")
_PERSONS = frozenset("we i they he she someone somebody you on-call oncall team".split())
_PASSIVE = frozenset("is was were are been be being got gets get has have had".split())
_DETERMINERS = frozenset("the a an this that these those our their its new old".split())
# After a done verb, what says nobody is named as its doer: a headline's passive ("Hotfix 5.2.2 deployed.", "Feature
# flag X set in the flag service", "Follow-up merged (PR #671)"): the line's end, a stop, or a place; also after the
# rollout that shipped it ("Helm change merged and rolled out at 09:17: `…max-poll-records: 40`", bench/incidents18).
# ... or the time it was done: "catalog-indexer 3.7.4 (deployed 10:55): …" (bench/incidents20)
_HEADLINE_PASSIVE = re.compile(r"\s*(?:(?:and|&)\s+(?:rolled|pushed|went|is|was)\s+(?:out|live)\b\s*)?"
                               r"(?:$|[.;:,(\u2014-]|(?:in|on|to|into|across|at|for|via|from)\b"
                               r"|\d{1,2}:\d{2}\b|\d{4}-\d{2}-\d{2}\b)", re.I)


def _agentive(text: str, verb_at: int) -> bool:
    """Whether a change a line reports was made by someone ("we raised", "short term I set", "Lin set", "bumped X",
    "the flag was turned off"), not by a thing the failure came from ("the new template set X on every ingress",
    "PR #1834 raised X", "renovate bumped eslint to 9.0.0"): the latter is a cause, a change that broke something.
    By the word before the verb in its clause: none, a person, a name, or a passive's auxiliary."""
    # the clause's words before the verb, without a list number or a timeline's clock ("1. 10:49 - Reverted …")
    verb = DONE.match(text, verb_at)
    if text[:verb_at].rstrip().endswith("(") and verb and _HEADLINE_PASSIVE.match(text, verb.end()):
        return True  # a headline in parentheses: "gp3-wffc (changed in the chart, PR #77)"
    words = [w for w in _CLAUSE.split(text[:verb_at])[-1].split() if any(c.isalpha() for c in w)]
    if not words:
        return True
    if verb and _HEADLINE_PASSIVE.match(text, verb.end()) and len(words) <= 5 \
            and not any(w.lower() in _PASSIVE for w in words):
        return True  # "Hotfix 5.2.2 deployed.", not "the store only has the old intermediate pinned."
    last = words[-1].strip(",;:")
    if last.lower() in _PERSONS or last.lower() in _PASSIVE:
        return True
    named = last[:1].isupper() and last[1:].islower() and last.isalpha()
    return named and (len(words) == 1 or words[-2].lower() not in _DETERMINERS)


def _caused_by_change(text: str) -> bool:
    """A change made by a thing, not by someone ("PR #1834 raised the batch size", "the template set X"): a
    mechanism the failure came from."""
    done = [m for m in DONE.finditer(text) if not NEGATED.search(text[:m.start()])]
    return bool(done) and not any(_agentive(text, m.start()) for m in done)


_SENTENCE = re.compile(r"(?<=[.;!?])\s+")
_FULL_STOP = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")  # between sentences, not clauses: "… discussed; rejected because …"


def _by_doing(text: str) -> bool:
    """Whether a line tells a change by what was done ("fixed by raising X", "after rolling back"); "after
    upgrading" in a line that reports a failure and no recovery is what set it off ("Uploads fail with … after
    upgrading to 0.19.0", an issue's title; bench/incidents11)."""
    return any(not (m.group(0).lower().startswith("after") and SYMPTOM.search(text) and not VERIFY.search(text))
               for m in BY_DOING.finditer(text))


# A command that only looks ("[standalone@app-03 /] /subsystem=datasources:read-children-names(…)", "kubectl get
# pods", "SELECT …", "cat /etc/…"; bench/incidents22): no change, and a block it opens is what was seen, not the fix
READS = re.compile(r":read-[\w-]+\(|\bkubectl\b(?:\s+-{1,2}[\w-]+(?:[= ](?!-)\S+)?)*\s+(?:get|describe|logs|top)\b"
                   r"|^(?:\S*[$#>]\s+)?(?:(?-i:SELECT|SHOW|EXPLAIN|DESCRIBE)\s|(?:cat|less|tail|head|ls)\s+(?:-\w+\s+)*[~/.]"
                   r"|grep\s+-)", re.I)


NOT_DONE = 0.8


def _action(text: str) -> float:
    text = INCIDENT_ADMIN.sub(" ", text)  # "Incident upgraded to P1" runs the incident; it changes nothing
    if READS.search(text) and not COMMAND.search(text):
        return 0.0
    score, not_done = 0.0, False
    if COMMAND.search(text) and not told_command(text, _agentive):
        score += 1.5
    done = [m for m in DONE.finditer(text) if not NEGATED.search(text[:m.start()])]
    negated = len(list(DONE.finditer(text))) - len(done)
    if done and not (_by_doing(text) or FIX_WORDS.search(text) or COMMAND.search(text) or NOW_DOES.search(text)) \
            and not any(_agentive(text, m.start()) for m in done):
        return 0.0  # a thing changed something: what broke, not what fixed it (``_caused_by_change``)
    if done or _by_doing(text) or FIX_WORDS.search(text) or changed_setting(text):  # or "-Xmx2g -> -Xmx4g"
        score += 1.5
    elif negated and not score:
        not_done = True
        score += 1.5 * 0.3
    elif any(IMPERATIVE.match(sentence) for sentence in _SENTENCE.split(text)) or NOW_DOES.search(text) \
            or PR_DOES.match(text) or IN_RELEASE.match(text):  # an instruction, in any sentence: "… so it fails
        # forever. Use the Sentinel scheme: `result_backend: sentinel://…`" (a maintainer's answer on an issue,
        # bench/incidents8); what a release does ("In 2.5.1 X decodes with …")
        score += 1.0
    kinds = {e.kind for e in entities(text)}
    bonus = 0.0
    if "config" in kinds and VALUE.search(text):
        bonus += 0.8
    if "version" in kinds:
        bonus += 0.4
    if "ticket" in kinds:
        bonus += 0.3
    # What is set, pinned or referenced makes a change a fix; alone (an alert naming its ticket, a line quoting a
    # setting) it is no action.
    score += bonus if score else min(bonus, 0.8)
    if not_done:
        # a change said not to be made ("the RulesDS datasource cannot be added: …"; bench/incidents22) is at most a
        # mention of what it names, never a change
        score = min(score, NOT_DONE)
    if PLANNED.search(text) and not NOW_DOES.search(text) and not IN_RELEASE.match(text) and not any(
            not PLANNED.search(sentence) for sentence in _SENTENCE.split(text) if DONE.search(sentence)):
        score *= 0.4  # what a thing now does is done ("Follow-up in !1402: the step now uses --timeout 8m"), and
        # so is what someone did in a line that also says what will happen ("I re-ran it; pull and it will start")
    return score


# A chat line as the readers render it: "[2024-05-14T13:32:00Z] maria.k: …", "2024-06-03 08:31 rafael.m: …" (a stamp,
# then a speaker; "Root cause: …" has no stamp and keeps its words). The stamp and the speaker are not what the line says: they are left out before
# scoring (a speaker named "maria.k" is no config key, a stamp "13:32:00Z" no value set).
_QUOTED = re.compile(r"`([^`]*)`|\"([^\"]*)\"")  # code spans and quotes, paired left to right
QUOTED = 1.5  # an error quoted as printed outranks prose that names a failure (chosen on the dev suites 1-3)


_CELL = re.compile(r"(?:^|;\s)[A-Z][\w ()/.-]{0,30}:\s")  # a table row as the readers render it: "Time (CET): 13:41; What…"


def said_in_row(text: str) -> str:
    """What a table row says: its longest cell ("Time (CET): 13:41; What happened: All refund-worker pods …" says
    the last part; a PagerDuty log entry's "Created at (UTC): …; Type: annotate_log_entry; …; Summary: Note added: …"
    its summary); the text itself when it is no row of three cells or more."""
    cells = _CELL.split(text)
    return _NOTE_ADDED.sub("", max(cells, key=len)) if len(cells) > 2 else text


_NOTE_ADDED = re.compile(r"^(?:Note|Comment) added(?: by [^:]{1,40})?:\s*")  # the tool's words over what was noted


def body(text: str) -> str:
    """A line without the chat rendering's stamp and speaker, and without a shell prompt and the ``#`` of a note
    typed at one ("root@edge-lb-01:~# # lower the level only for that location"); the line itself when it has none."""
    m = SPEAKER.match(text)
    text = text[m.end():] if m and not COMMAND.match(text) else text
    p = PROMPT.match(text)
    return re.sub(r"^#+\s*", "", p.group("cmd")) if p else text


def _quoted_error(text: str) -> float:
    """A quoted error in a person's line ("logs are full of `upstream prematurely closed connection …`"): what it
    shows, scored ``QUOTED`` (+0.5 with a signature): the error as printed is what the next lookup pastes."""
    best = 0.0
    for m in _QUOTED.finditer(text):
        quoted = m.group(1) if m.group(1) is not None else m.group(2)
        if len(quoted) >= (8 if m.group(1) is not None else 12) and (
                _count(SYMPTOM, quoted) or signatures.extract_signatures(quoted) or first_failure_level(quoted)):
            best = max(best, QUOTED + 0.5 * bool(signatures.extract_signatures(quoted)))
    return best


def _section(headings: Sequence[str]) -> str:
    """The heading that says what part of a write-up a line is in: the innermost that names a part (a cause, a
    fix, things to do), so "REMEDIATION / For the crash" is a fix section; "" when none does."""
    for heading in reversed(headings):  # a part's name ("Recovery"), not words of a title ("… during recovery")
        if names_part(heading) and (CAUSE_SECTION.search(heading) or FIX_SECTION.search(heading)
                                      or TODO_SECTION.search(heading)):
            return heading
    return ""


# A part that lays out changes turned down: "Decided against", "Alternatives considered", "Rejected options", "What we
# did not do" (bench/incidents33: "Lowering `min.insync.replicas` to 1" was an action under "Decided against")
_DECLINED_PART = re.compile(r"\b(?:decided against|rejected|alternatives?|not (?:done|taken|pursued|chosen)|"
                            r"(?:did not|didn't|chose not to) do|options? considered)\b", re.I)


def _set_aside(headings: Sequence[str]) -> bool:
    """Whether a line stands in a part of a write-up that names what was ruled out or did not help ("Things we ruled
    out", "What did not help"; from bench/incidents10) or what was decided against: its innermost heading, a short one
    under the document's."""
    part = headings[-1] if len(headings) > 1 else ""
    return len(part.split()) <= 8 and bool(RULED_OUT.search(part) or ineffective(part) or _DECLINED_PART.search(part))


# What a command prints when it was typed wrong ("Error: unknown flag: --resue-values", "kubectl: command not found",
# "Usage: helm upgrade …"; bench/incidents38's sessions retry their typos)
USAGE_ERROR = re.compile(r"\bunknown (?:shorthand )?(?:flag|option|command)\b|\bunrecognized (?:option|arguments?)\b|"
                         r"\binvalid option\b|\bcommand not found\b|\bno such option\b|^usage:|\bdid you mean\b", re.I)
_STAMPED = re.compile(r"^\[[^\]]{4,40}\]\s+")
# The state a status page's update opens with (Statuspage and the pages after it: Investigating, Identified,
# Monitoring, Resolved; bench/incidents37): "Identified" tells the cause, "Monitoring" a fix made, now watched
_STATUS = re.compile(r"^\W*(investigating|identified|monitoring|update|resolved)\W*\s+[-\u2013\u2014:]\s", re.I)
_LEAD_LABEL = re.compile(r"^\W*([A-Za-z][\w ]{0,30}?)\s*:\s")  # "Found the cause: …", "Root cause: …"
_CAUSE_LABEL = re.compile(r"\b(?:cause|diagnosis|analysis)\b|^why\b", re.I)
_FIX_LABEL = re.compile(r"\b(?:fix(?:ed)?|resolution|remediation|mitigation|workaround)\s*:", re.I)


# A write-up's note on its clock: "All times in CEST (UTC+2); UTC given alongside because the broker logs are in UTC",
# "Times are UTC", "All timestamps Pacific" (bench/incidents33: its "because" made it the incident's cause)
TIMES_NOTE = re.compile(r"^\W*(?-i:(?!TIME))(?:all )?(?:times?|timestamps?)\b(?: (?:are|is|shown|given|listed|below))*"
                        r"(?: in)? (?:(?-i:[A-Z]{1,4}T|UTC|GMT)\b|utc|local time|pacific|eastern|central|mountain)", re.I)


def score(text: str, kind: str = "", level: str = "", headings: Sequence[str] = ()) -> Scores:
    """The role scores of one line of text, from the cues in the module docstring."""
    words = body(text)
    said = _STAMPED.sub("", words)  # (a chat line's words: "[02:19:12] System: Alert count increased to 4";
    # a record's with its time alone: "[2025-10-21T14:53:40.000Z] Status changed from Started to Mitigated")
    if FRAME.match(text) or FENCE.match(text) or EDITED.match(text) or is_part_line(text) or \
            is_label(text, headings) or \
            about_post(text) or about_post(said) or FIELD_CHANGE.match(text) or FIELD_CHANGE.match(said) \
            or FIELD_ROW.match(text) or TIMES_NOTE.match(text):
        return Scores()  # a frame, a fence, a heading, a label, a tool's line about its objects, a clock note: no claim
    # "reminder: retro for last week's outage is thursday", "decided not to raise X": no claim; of a line of several
    # sentences, what its other sentences say still stands ("Connection URL set back to ldaps://ad… at 09:51, logins
    # working. Decided NOT to ask for IP SANs on the DC certs"; bench/incidents42)
    text = " ".join(x for x in _FULL_STOP.split(words) if not says_nothing(x))
    if not text.strip():
        return Scores()
    symptom = max(_symptom(text, level), _quoted_error(text))
    if _set_aside(headings):
        return Scores(symptom=symptom)  # "Things we ruled out", "What did not help": no cause, no fix in that part
    # a log excerpt pasted in a fence, or quoted in a write-up's paragraph with its time and level (a consumer's
    # "WARN … You can address this … by reducing max.poll.records" advises, it is no fix; bench/incidents11)
    if kind == "output" and USAGE_ERROR.search(text):
        return Scores()  # the operator's typo, told by the command it was typed to: no failure of the system
    if kind in ("log", "output") or (kind == "code" and is_log_line(text)) or BUILD_STEP.match(text) or \
            (kind == "paragraph" and is_log_line(text) and level_of(text)):
        return Scores(symptom=symptom, action=1.0 if kind == "output" and CHANGED_OBJECT.match(text) else 0.0)
    action = _action(text)
    if kind == "ticket" and not (FIX_WORDS.search(text) or _by_doing(text)):
        action = 0.0  # an issue's opening post describes a setup and a failure; what fixed it comes after
    if kind == "command":
        return Scores(action=1.5 if COMMAND.search(text) else 0.0)
    if OTHER_PROBLEM.search(text) and not (PLANNED.search(text) or VERIFY.search(text)) and not (
            {"config", "version"} & {e.kind for e in entities(text)}):  # "Different problem: we added two colleagues
        # this morning and neither got the e-mail": a new failure told, no fix (bench/incidents25); not "Closing. … I'll
        # open a separate issue for the alert", nor "second problem …: rebuilt with numpy==1.26.4 pinned"
        return Scores(symptom=symptom)
    cause = 1.5 * min(2, _count(CAUSE, text) * says_more(CAUSE, text)) + \
        0.8 * min(2, _count(MECHANISM, text) + bool(SO.search(text)) + (_caused_by_change(text) or
                                                                        told_command(text, _agentive)))
    receding = RECEDING.search(text) is not None  # "memory alarm cleared": the failure going away
    verification = 1.5 * min(2, _count(VERIFY, text) + receding)
    symptom *= 0.4 if receding else 1.0
    section = _section(headings)
    if section and CAUSE_SECTION.search(section):  # what a cause part says was changed is what led to it
        cause, action = cause + 1.0, action if FIX_SECTION.search(section) else action * 0.5
    label = _LEAD_LABEL.match(text)
    if label and _CAUSE_LABEL.search(label.group(1)) and not FIX_SECTION.search(label.group(1)) \
            and not _FIX_LABEL.search(text, label.end()):  # ("Cause: the disk was full.  Fix: rotated the logs")
        # "Found the cause: the image ships its own truststore, built …", "Cause: Platform rebuilt the base image"
        # (bench/incidents22): a label that opens the line makes it a part of its own, as a heading does
        cause, action = cause + 1.0, action * 0.5
    if label and _FIX_LABEL.search(label.group(0)) and action > 0:
        # "Fixed: `checkout_bind: "0.0.0.0:8080"` set explicitly in group_vars (MR !640), all UP": the label heads the
        # change it names, whatever the line says of the outcome after it (bench/incidents45), as a fix part does
        action, verification = action + 1.0, verification * 0.5
    status = _STATUS.match(text)  # a status page's update: "**Identified** - The DNSSEC signatures … expired"
    if status and status.group(1).lower() == "identified":
        cause, action = cause + 1.0, action * 0.5
    elif status and status.group(1).lower() == "investigating":
        cause, action = cause * 0.5, action * 0.5  # what is being looked into: the failure, nothing found or done yet
    if (section and FIX_SECTION.search(section) or status and status.group(1).lower() == "monitoring") \
            and not verification:
        now = NOW_IS.search(text) is not None  # "records that fail with X are now written to the dlq": a change
        action, symptom = action + 1.0 + (now and not NOW_DOES.search(text)), symptom * (0.5 if now else 1.0)
    if section and TODO_SECTION.search(section):
        action, symptom = action * 0.5, symptom * 0.5
    if PLANNED.search(text):
        symptom *= 0.4  # "we should add an alert on X" reports nothing
    hedge = hedge_factor(text)
    cause, action = cause * hedge, action * hedge
    # "#499 bumps jinja2 (sphinx 7 is fine with it). docs green.": an aside clears a thing beside the line's own claim
    aside = not RULED_OUT.search(ASIDE.sub(" ", text)) and max(action, verification) >= THRESHOLD
    if RULED_OUT.search(text) and not aside:
        return Scores(ruled_out=True, ineffective=ineffective(text))  # "changed nothing. not the release."
    if ineffective(text):
        return Scores(symptom=symptom, cause=cause, ineffective=True)
    return Scores(symptom, cause, action, verification)


def is_planned(text: str) -> bool:
    """Whether a line speaks of what is yet to be done ("we should…", "next step:", "will…")."""
    return bool(PLANNED.search(text))


def pick(scores: Scores) -> str:
    """The role ``scores`` give: the best at or over ``THRESHOLD``, ties within ``TIE`` broken by priority."""
    best = max(scores.of(role) for role in _PRIORITY)
    if best < THRESHOLD:
        return "none"
    return next(role for role in _PRIORITY if scores.of(role) >= max(THRESHOLD, best - TIE))  # a role needs it


# One attempt, however it is written: "rollback to 4.11.2 changed nothing" names "kubectl rollout undo".
def line_scores(line: Line) -> Scores:
    """The scores of one incident line, with its record's kind, level and headings."""
    first = line.offset == 0
    if line.is_frame:
        return Scores()
    text = said_in_row(line.text) if line.record.kind == "table_row" else line.text
    scores = score(text, line.record.kind, line.record.level if first else "", line.record.headings)
    if line.record.kind == "table_row" and (field := _FORM_FIELD.match(text)) and \
            len(field.group("value").split()) <= FIELD_WORDS:  # "State: Closed - Permanent Fix Applied": a form's
        return Scores(symptom=scores.symptom)  # field tells what the record is filed as, no finding
    return scores


_FORM_FIELD = re.compile(r"^[A-Z][\w /()&-]{0,40}: (?P<value>[^;]*)$")  # a row of one key and its value
FIELD_WORDS = 6
