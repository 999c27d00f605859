"""The part each line of an incident plays: symptom, cause, action (the fix), verification, or none.

The offline engine scores every line for each role from cues (generic on-call English, never one stream's
wording), then picks a role. The cue lists, each matched as a whole word or phrase, case-insensitive:

- **symptom**: a failure level (WARN 1, ERROR 1.5, FATAL 2, as ``poimen.text.line_levels`` reads it) and a failure
  signature (+1); words, +0.6 each up to 1.8: error(s), fail/failed/failing/failure, exception, timeout /
  timed out, refused, unreachable, unavailable, is down / went down, outage, alert, firing / fired, paged,
  degraded, latency, spike(s/d), elevated, 5xx / 4xx / 502s / "returned|returning|throwing|seeing|getting 502",
  OOM, crash(ed/ing/es), hang(s/ing), stuck, slow, broken, not working, can't / cannot / unable to,
  complain(ts/ing), users/customers (are) report(ed/ing), dropped / dropping, backlog, lag, evicted, panic,
  saturated. The first word found counts 1.0 and each other +0.4, up to 1.8.
- **cause** (+1.5): because, due to, caused by, root cause, turned out / turns out, the culprit, the cause
  (was|is), the problem/issue (was|is), the underlying problem/issue/cause, the reason (was|is), happens when,
  triggered by, traced (it|this) (back) to, found (it|the issue|the problem|the cause|the bug), found that,
  that's / which is / this is why, hence, regression, introduced (in|by); (+0.8): a mechanism stated:
  exhausted / exhaustion, leak(s/ed/ing), misconfigured /
  misconfiguration, ran/run out of, filled up, (disk|volume|partition) full, too low/small/high/many/few/short,
  expired, not set, race condition, deadlock, changed the default, led to, resulted in, ", so ".
- **action** (+1.5): a command that changes state (``kubectl patch|scale|set|apply|edit|delete|drain|cordon|
  rollout undo|rollout restart``, ``helm upgrade|rollback|install``, ``terraform apply``, ``ALTER …``,
  ``UPDATE … SET``, ``SET GLOBAL``, ``systemctl restart|reload|stop|start``, ``git revert``, ``sysctl -w``,
  ``docker restart``, ``redis-cli config set``); a done verb: bumped, raised, increased, decreased, lowered,
  reduced, pinned, disabled, enabled, turned off/on, reverted, rolled back, restarted, redeployed, deployed,
  patched, scaled, upgraded, downgraded, applied, merged, shipped, hotfixed, flushed, purged, drained,
  cordoned, rotated, renewed, replaced, removed, added, changed, updated, switched, migrated, failed over,
  killed, resized, tuned, backported, rebuilt, reindexed, freed, cleaned up (and their -ing forms after by,
  after or with); workaround, fix:, the fix (was|is), fixed (by|with|in), resolved (by|with), mitigated
  (by|with), hotfix. (+1.0): an imperative opening a line (Raise, Bump, Restart, Set, …). (+0.8): a config
  key given a value (``key=value``, ``key: 5``, "key to 5"); (+0.4): a version; (+0.3): a ticket or PR id.
- **verification** (+1.5): confirmed, resolved, recovered / recovering, back to normal, back up, back online,
  error rate (back|down) to, no more, no new/further errors/alerts, stable / stabilised, healthy, green,
  all good, looks good, working again, works again, (is|are) fixed, succeeded / succeeding, passing, closing.

What makes a line weaker or takes a role away:

- **ruled out** (cause and action become 0, and the line is no symptom either): not the cause / culprit /
  issue / problem, not related, unrelated, ruled out, red herring, wasn't it / was not it, nothing to do with,
  a coincidence, false alarm / positive, is fine, looks fine, not it. The same line also demotes the earlier
  lines of its incident that it names (two content words or one specific entity in common) to none.
- **ineffective** (action and verification become 0; the nearest action line among the ``LOOKBACK`` before it
  becomes none): didn't / did not / doesn't help, didn't / did not fix / work, no change, no effect, changed
  nothing, made no difference, no improvement, no luck, unchanged, still failing / erroring / broken / down /
  happening / the same / seeing, same errors / error / problem / issue, persist(s/ed/ing), not fixed.
- **hedged** (cause and action ×0.4): maybe, might, could be, possibly, perhaps, not sure, I think, suspect(ed),
  suspicion, wondering, guess, theory, a question mark; past belief (×0.3): we/I thought, initially, at first,
  assumed. Probably, looks like and seems are ×0.7. A hedge followed by but / actually / turned out / in fact /
  instead does not count.
- **planned** (action and symptom ×0.4): should, will, going to, plan(ning) to, need(s) to, todo, next step, follow-up,
  let's, we could, consider, propose; a negation just before the action verb (didn't, did not, never, no,
  without, not) ×0.3.
- **where the line stands**: a "Root cause" section adds 1.0 to cause; a "Resolution", "Remediation",
  "Mitigation", "Fix" or "Workaround" section adds 1.0 to action unless the line verifies (its own cue says
  more than its section); an "Action items", "Follow-up", "Next steps" or "Lessons" section halves action and
  symptom (what is yet to do neither fixed it nor was seen). A log line or command output can only be a
  symptom; a command can only be an action.

Where the cues came from: the lists above were written from generic on-call English first, then checked on
the tuning streams of ``tests/incidents/incident_fixtures.py`` (which added "found that", "that's why", plural
status codes such as "413s", and the section and planned-work rules to symptoms). The streams of
``tests/incidents/incident_heldout.py`` were written before any cue and never tuned on. The weights (1.5, 0.8,
1.0, 0.4, the threshold and the tie) are round numbers, not fitted.

A role needs a score of ``THRESHOLD``; when the best two are within ``TIE`` the priority is action, cause,
verification, symptom (the line that states the fix matters more than its mention of the error).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from poimen import signatures
from poimen.incidents.entities import entities
from poimen.incidents.lines import Line
from poimen.text.line_levels import line_levels

ROLES = ("symptom", "cause", "action", "verification", "none")
THRESHOLD = 1.0
TIE = 0.3
LOOKBACK = 4
_PRIORITY = ("action", "cause", "verification", "symptom")


def _words(*phrases: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])(?:" + "|".join(phrases) + r")(?![\w-])", re.I)


_SYMPTOM = _words(
    r"errors?", r"fail(?:s|ed|ing|ure|ures)?", r"exceptions?", r"time[ds]?[ -]?outs?", r"timed out", r"refused",
    r"unreachable", r"unavailable", r"(?:is|was|are|were|went) down", r"outage", r"alerts?", r"alerting",
    r"firing", r"fired", r"paged", r"degraded", r"latency", r"spik(?:e|es|ed|ing)", r"elevated", r"[45]xx",
    r"(?:returned|returning|returns|throwing|seeing|getting|got) (?:an? )?(?:http )?[45]\d\ds?", r"[45]\d\ds",
    r"oom\w*",
    r"crash(?:ed|ing|es|loop\w*)?", r"hang(?:s|ing)?", r"stuck", r"slow(?:ness)?", r"broken", r"not working",
    r"can't", r"cannot", r"unable to", r"complain(?:ts?|ing|ed)?",
    r"(?:users?|customers?|merchants?) (?:are |were )?report(?:ed|ing|s)?",
    r"dropp(?:ed|ing)", r"backlog", r"lag(?:ging)?", r"evicted", r"panic", r"saturated",
    r"prematurely closed", r"(?:connection )?reset", r"rejected", r"denied", r"not allowed", r"exceeded",
    r"overflow", r"unauthori[sz]ed", r"forbidden", r"no space", r"killed", r"oomkilled", r"crashloopbackoff",
    r"\w*backoff", r"not ready", r"unhealthy", r"throttl(?:ed|ing)", r"stalled", r"deadlock(?:ed)?", r"corrupt(?:ed)?",
    r"invalid", r"expired", r"missing", r"not found", r"red", r"flak(?:y|ing)")
_CAUSE = _words(
    r"because", r"due to", r"caused by", r"root[ -]cause[sd]?", r"turn(?:ed|s) out", r"(?:the )?culprit",
    r"the cause (?:was|is)", r"the (?:problem|issue|bug) (?:was|is)", r"the underlying (?:problem|issue|cause)",
    r"underlying (?:problem|issue|cause)", r"the reason (?:was|is)", r"happens when", r"triggered by",
    r"traced (?:it |this )?(?:back )?to", r"found (?:it|the (?:issue|problem|cause|bug))", r"regression",
    r"introduced (?:in|by)", r"found that", r"(?:that's|that is|which is|this is) why", r"hence")
_MECHANISM = _words(
    r"exhaust(?:ed|ion)", r"leak(?:s|ed|ing)?", r"misconfigur(?:ed|ation)", r"r[au]n out of", r"filled up",
    r"(?:disk|volume|partition) (?:is |was )?full", r"too (?:low|small|high|many|few|short|aggressive)",
    r"expired", r"not set", r"race condition", r"deadlock", r"changed the default", r"led to", r"resulted in")
_SO = re.compile(r", so ", re.I)
_COMMAND = re.compile(
    r"\bkubectl\b.*?\b(?:patch|scale|set|apply|edit|delete|drain|cordon|uncordon|replace|annotate|label|"
    r"rollout\s+(?:undo|restart))\b|\bhelm\b(?:\s+-{1,2}[\w-]+(?:[= ](?!-)\S+)?)*\s+(?:upgrade|rollback|install|uninstall)\b|\bterraform\s+apply\b"
    r"|\bALTER\s+(?:TABLE|SYSTEM|DATABASE|USER|ROLE|INDEX)\b|\bUPDATE\s+\w+\s+SET\b|\bSET\s+GLOBAL\b"
    r"|\bsystemctl\s+(?:restart|reload|stop|start|enable|disable)\b|\bservice\s+\S+\s+restart\b"
    r"|\bgit\s+revert\b|\bsysctl\s+-w\b|\bdocker\s+(?:restart|rm|run)\b|\bredis-cli\b.*\bconfig\s+set\b"
    r"|\baws\s+\S+\s+(?:update|modify|put|create|delete)-|\bansible-playbook\b", re.I)
_STEMS = (r"bump", r"rais", r"increas", r"decreas", r"lower", r"reduc", r"pinn?", r"disabl", r"enabl",
          r"revert", r"restart", r"redeploy", r"deploy", r"patch", r"scal", r"upgrad", r"downgrad", r"appl(?:i|y)",
          r"merg", r"ship", r"hotfix", r"flush", r"purg", r"drain", r"cordon", r"rotat", r"renew", r"replac",
          r"remov", r"add", r"chang", r"updat", r"switch", r"migrat", r"kill", r"resiz", r"tun", r"backport",
          r"rebuil", r"reindex", r"fre")
_DONE = _words(*(s + r"(?:ed|d|t)" for s in _STEMS), r"rolled back", r"turned (?:off|on)", r"failed over",
               r"cleaned up", r"set (?:the )?[\w.-]+ to", r"shipped", r"pinned", r"applied", r"set")
_BY_DOING = re.compile(r"\b(?:by|after|with|via)\s+(?:" + "|".join(_STEMS) + r")\w*ing\b|\b(?:by|after) "
                       r"(?:rolling back|turning (?:off|on)|failing over|setting)\b", re.I)
_FIX_WORDS = _words(r"workaround", r"fix:", r"the fix (?:was|is)", r"fixed (?:by|with|in|via)",
                    r"resolved (?:by|with|via)", r"mitigated (?:by|with|via)", r"hot-?fix(?:ed)?", r"rollback")
_IMPERATIVE = re.compile(r"^\W*(?:raise|bump|increase|decrease|lower|reduce|pin|disable|enable|revert|roll back|"
                         r"restart|redeploy|deploy|patch|scale|set|upgrade|downgrade|apply|flush|purge|drain|"
                         r"rotate|replace|remove|add|change|update|switch|kill|resize|tune)\b", re.I)
_VALUE = re.compile(r"[=:]\s*[\"']?[\w.-]+|\bto\s+[\d\"']", re.I)
_VERIFY = _words(
    r"confirmed", r"resolved", r"recover(?:ed|ing|y)", r"back to normal", r"back up", r"back online",
    r"error rate (?:is )?(?:back|down) to", r"no more", r"no (?:new|further) (?:errors?|alerts?|occurrences?)",
    r"stable", r"stabili[sz]ed", r"healthy", r"green", r"all good", r"looks good", r"working again",
    r"works again", r"(?:is|are) fixed", r"succe(?:eded|eding|ssful)", r"passing", r"closing",
    r"(?:succeed|work|load|respond|connect|serv)\w* again", r"normal again",
    r"(?:rates?|latency|traffic|graphs?|metrics?|dashboards?) (?:is |are |was |were |back )?(?:normal|nominal|flat)")
_RULED_OUT = _words(
    r"not (?:the )?(?:cause|culprit|issue|problem)", r"not related", r"unrelated", r"ruled (?:it |this )?out",
    r"rule (?:it |this )?out", r"red[ -]herring", r"(?:wasn't|was not|isn't|is not) it", r"nothing to do with",
    r"(?:a )?coincidence", r"coincidental", r"false (?:alarm|positive)", r"(?:is|was|looks|looked) fine",
    r"not it", r"(?:so|then|it's|its|it is|that's|thats) not the \w+", r"not the (?:deploy|release|rollout|chart|"
    r"change|network|database|db|cdn|dns|load balancer|lb|broker|disk)\b", r"ignore it", r"is (?:a |just )?noise",
    r"are (?:normal|expected)", r"is (?:normal|expected)", r"(?:normal|expected) for this")
_INEFFECTIVE = _words(
    r"(?:didn't|did not|doesn't|does not) (?:help|fix|work|change)", r"no change", r"no effect",
    r"changed nothing", r"made no difference", r"no difference", r"no improvement", r"no luck", r"unchanged",
    r"still (?:failing|erroring|broken|down|happening|the same|seeing|getting|\d+)",
    r"same (?:errors?|problem|issue|rate)", r"persist(?:s|ed|ing)?", r"not fixed", r"still there",
    r"still (?:at|the same|there|happen\w*|occurr\w*|present|seeing|hitting|red)", r"did nothing", r"does nothing",
    r"changed nothing", r"nothing changed", r"no better", r"didn't work", r"did not work", r"dead end",
    r"(?:didn't|did not|doesn't|does not) (?:make|change) (?:a|any) difference", r"to no avail", r"in vain",
    r"(?:did not|didn't) (?:go away|stop|recover)", r"reverted? (?:it )?(?:back )?(?:again)?,? (?:but|no)")
_HEDGE = _words(r"maybe", r"might", r"could (?:it )?be", r"possibly", r"perhaps", r"not sure", r"i think",
                r"(?:i |we )?(?:don't|do not) think", r"doubt", r"unlikely",
                r"suspect(?:ed|s)?", r"suspicion", r"wondering", r"guess", r"theory")
_BELIEF = _words(r"(?:we|i) thought", r"initially", r"at first", r"assumed")
_SOFT = _words(r"probably", r"looks like", r"seems?")
_BUT = _words(r"but", r"actually", r"turned out", r"turns out", r"in fact", r"instead")
_PLANNED = _words(r"should", r"will", r"going to", r"plan(?:ning)? to", r"needs? to", r"todo", r"next steps?",
                  r"follow-?ups?", r"let's", r"we could", r"consider", r"propose")
_NEGATED = re.compile(r"(?:\b(?:didn't|did not|never|no|without|not|don't)\s+(?:\w+\s+)?)$", re.I)
_CAUSE_SECTION = re.compile(r"root cause|cause|diagnosis|analysis|contributing", re.I)
_FIX_SECTION = re.compile(r"resolution|remediation|mitigation|\bfix\b|workaround|recovery", re.I)
_TODO_SECTION = re.compile(r"action items?|follow[- ]?ups?|next steps|lessons", re.I)
_FRAME = re.compile(r"^(?:at [\w$.<>/@-]+\(|\.\.\. \d+ (?:more|common)|File \"|Caused by:\s*$)")
_STOP = frozenset("""the a an and or of to in on at for with from by is was were are be been it this that these
    those we i our they he she you after before when then than into onto out over still just also which what who
    there here its it's has have had not no but so as all any some same more most very""".split())


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
    but = _BUT.search(text)
    factor = 1.0
    for pattern, weight in ((_BELIEF, 0.3), (_HEDGE, 0.4), (_SOFT, 0.7)):
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
    words = _count(_SYMPTOM, text)
    return score + (min(1.8, 1.0 + 0.4 * (words - 1)) if words else 0.0)


def _action(text: str) -> float:
    score = 0.0
    if _COMMAND.search(text):
        score += 1.5
    done = [m for m in _DONE.finditer(text) if not _NEGATED.search(text[:m.start()])]
    negated = len(list(_DONE.finditer(text))) - len(done)
    if done or _BY_DOING.search(text) or _FIX_WORDS.search(text):
        score += 1.5
    elif negated:
        score += 1.5 * 0.3
    elif _IMPERATIVE.match(text):
        score += 1.0
    kinds = {e.kind for e in entities(text)}
    bonus = 0.0
    if "config" in kinds and _VALUE.search(text):
        bonus += 0.8
    if "version" in kinds:
        bonus += 0.4
    if "ticket" in kinds:
        bonus += 0.3
    # What is set, pinned or referenced makes a change a fix; alone (an alert naming its ticket, a line quoting a
    # setting) it is no action.
    score += bonus if score else min(bonus, 0.8)
    if _PLANNED.search(text):
        score *= 0.4
    return score


# A chat line as the readers render it: "[2024-05-14T13:32:00Z] maria.k: …", "2024-06-03 08:31 rafael.m: …" (a stamp,
# then a speaker; "Root cause: …" has no stamp and keeps its words). The stamp and the speaker are not what the line says: they are left out before
# scoring (a speaker named "maria.k" is no config key, a stamp "13:32:00Z" no value set).
_SPEAKER = re.compile(r"^\s*(?:\[[^\]]{4,40}\]\s*|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\s+)[A-Za-z][\w .@-]{0,40}?:\s+(?=\S)")
_QUOTED = re.compile(r"`([^`]{8,})`|\"([^\"]{12,})\"")


def body(text: str) -> str:
    """A line without the chat rendering's stamp and speaker (the line itself when it has none)."""
    m = _SPEAKER.match(text)
    return text[m.end():] if m and not _COMMAND.match(text) else text


def _quoted_error(text: str) -> float:
    """A quoted error in a person's line ("logs are full of `upstream prematurely closed connection …`"): what it
    shows, scored as the error line it quotes."""
    best = 0.0
    for m in _QUOTED.finditer(text):
        quoted = m.group(1) or m.group(2)
        if _count(_SYMPTOM, quoted) or signatures.extract_signatures(quoted) or line_levels(quoted):
            best = max(best, 1.0 + 0.5 * bool(signatures.extract_signatures(quoted)))
    return best


def score(text: str, kind: str = "", level: str = "", headings: Sequence[str] = ()) -> Scores:
    """The role scores of one line of text, from the cues in the module docstring."""
    if _FRAME.match(text):
        return Scores()
    text = body(text)
    symptom = max(_symptom(text, level), _quoted_error(text))
    if kind in ("log", "output"):
        return Scores(symptom=symptom)
    action = _action(text)
    if kind == "command":
        return Scores(action=1.5 if _COMMAND.search(text) else 0.0)
    cause = 1.5 * min(2, _count(_CAUSE, text)) + 0.8 * min(2, _count(_MECHANISM, text) + bool(_SO.search(text)))
    verification = 1.5 * min(2, _count(_VERIFY, text))
    section = headings[-1] if headings else ""
    if section and _CAUSE_SECTION.search(section):
        cause += 1.0
    if section and _FIX_SECTION.search(section) and not verification:
        action += 1.0  # a line's own cue says more than its section: "back to normal" under Resolution verifies
    if section and _TODO_SECTION.search(section):
        action, symptom = action * 0.5, symptom * 0.5
    if _PLANNED.search(text):
        symptom *= 0.4  # "we should add an alert on X" reports nothing
    hedge = hedge_factor(text)
    cause, action = cause * hedge, action * hedge
    if _RULED_OUT.search(text):
        return Scores(ruled_out=True)
    if _INEFFECTIVE.search(text):
        return Scores(symptom=symptom, cause=cause, ineffective=True)
    return Scores(symptom, cause, action, verification)


_CLOCK_LED = re.compile(r"^\W*(?:\*\*)?(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\*\*)?\s")


def clock_of(text: str) -> int | None:
    """The time of day a timeline line opens with ("10:14  every gateway panics", "- **03:44** — …"), in seconds;
    None for any other line."""
    m = _CLOCK_LED.match(text)
    if not m or int(m.group(1)) > 23:
        return None
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)


def _clocks(lines: Sequence[Line]) -> list[int | None]:
    """Each line's time of day: its own, or that of the timeline entry above it in the same record (a wrapped
    entry's next line, the error it quotes)."""
    out: list[int | None] = []
    for i, line in enumerate(lines):
        own = clock_of(line.text)
        if own is None and i and lines[i - 1].record is line.record:
            own = out[-1]
        out.append(own)
    return out


def is_planned(text: str) -> bool:
    """Whether a line speaks of what is yet to be done ("we should…", "next step:", "will…")."""
    return bool(_PLANNED.search(text))


def pick(scores: Scores) -> str:
    """The role ``scores`` give: the best at or over ``THRESHOLD``, ties within ``TIE`` broken by priority."""
    best = max(scores.of(role) for role in _PRIORITY)
    if best < THRESHOLD:
        return "none"
    return next(role for role in _PRIORITY if scores.of(role) >= best - TIE)


def _content(text: str) -> frozenset[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]{2,}", text)}
    return frozenset(w for w in words if w not in _STOP and not _SYMPTOM.fullmatch(w)
                     and not _RULED_OUT.fullmatch(w) and not _INEFFECTIVE.fullmatch(w))


def _overlap(line: Line, earlier: Line) -> int:
    """How strongly a ruling-out ``line`` names what ``earlier`` says: content words in common, a specific entity in
    common counting two; below 2, it does not name it."""
    words = len(_content(body(line.text)) & _content(body(earlier.text)))
    mine = {(e.kind, e.value) for e in entities(body(line.text)) if e.weight >= 0.6}
    shared = mine & {(e.kind, e.value) for e in entities(body(earlier.text))}
    return words + 2 * len(shared)


def line_scores(line: Line) -> Scores:
    """The scores of one incident line, with its record's kind, level and headings."""
    first = line.offset == 0
    return score(line.text, line.record.kind, line.record.level if first else "", line.record.headings)


def assign(lines: Sequence[Line]) -> tuple[Role, ...]:
    """A role for every line of an incident, in order, with ruled-out suspects and failed attempts demoted.

    - A line that rules a suspect out demotes the one earlier line it names best (the most content words and
      specific entities in common: two words or one entity, or one word in the ``LOOKBACK`` lines before it),
      whatever role that line had: the suspect.
    - A line that says an attempt did not help demotes the nearest action among the ``LOOKBACK`` lines before it.
    - Nothing is verified before something was done: a verification before the incident's first action is read
      again without that role (a symptom if it reports one, else none).
    - A change a timeline logs before the first symptom it logs triggered the failure; it fixed nothing.
    """
    scored = [line_scores(line) for line in lines]
    roles = [pick(s) for s in scored]
    for i, (line, s) in enumerate(zip(lines, scored)):
        if s.ruled_out:
            named = [(_overlap(line, lines[j]), j) for j in range(i) if roles[j] != "verification"]
            # two words or an entity in common anywhere before, or one word in the lines just before it
            named = [(n, j) for n, j in named if n >= 2 or (n == 1 and j >= i - LOOKBACK)]
            if named:
                roles[max(named)[1]] = "none"
        elif s.ineffective:
            for j in range(i - 1, max(-1, i - 1 - LOOKBACK), -1):
                if roles[j] == "action":
                    roles[j] = "none"
                    break
    # A change logged before the failure began is what triggered it, not what fixed it ("09:50 8.14.0 deployed"
    # above "10:14 every gateway panics"): by the times the lines give where they give one.
    clocks = _clocks(lines)
    began = min((t for t, r in zip(clocks, roles) if r == "symptom" and t is not None), default=None)
    if began is not None:
        for i, (line, r) in enumerate(zip(lines, roles)):
            t = clock_of(line.text)
            if r == "action" and t is not None and t < began:
                roles[i] = "none"
    first_action = next((i for i, r in enumerate(roles) if r == "action"), None)
    if first_action is not None:
        for i in range(first_action):
            if roles[i] == "verification":
                roles[i] = "symptom" if scored[i].symptom >= THRESHOLD else "none"
    return tuple(Role(line, role, s) for line, role, s in zip(lines, roles, scored))
