"""The cue lists the roles are scored by (``poimen.incidents.roles``): phrases of generic on-call English, each
matched as a whole word or phrase, case-insensitive. The module docstring of ``roles`` lists them in words and says
which data they were checked on."""

from __future__ import annotations

import re

from poimen.text.headings import HEADING_NOISE, names_problem  # noqa: F401  (names_problem: cues in one place)


def words(*phrases: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])(?:" + "|".join(phrases) + r")(?![\w-])", re.I)


SYMPTOM = words(
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
    r"invalid", r"expired", r"missing", r"not found", r"red", r"flak(?:y|ing)",
    r"[a-z]+_(?:err|error|fail|failed|crit|critical)")  # a status word: HEALTH_ERR, STATUS_FAILED
CAUSE = words(
    r"because", r"due to", r"caused by", r"root[ -]cause[sd]?", r"turn(?:ed|s) out", r"(?:the )?culprit",
    r"the cause (?:was|is)", r"the (?:problem|issue|bug) (?:was|is)", r"the underlying (?:problem|issue|cause)",
    r"underlying (?:problem|issue|cause)", r"the reason (?:was|is)", r"happens when", r"triggered by",
    r"traced (?:it |this )?(?:back )?to", r"found (?:it|the (?:issue|problem|cause|bug))", r"regression",
    r"introduced (?:in|by)", r"found that", r"(?:that's|that is|which is|this is) why", r"hence", r"cause:")
MECHANISM = words(
    r"exhaust(?:ed|ion)", r"leak(?:s|ed|ing)?", r"misconfigur(?:ed|ation)", r"r[au]n out of", r"filled up",
    r"(?:disk|volume|partition) (?:is |was )?full", r"too (?:low|small|high|many|few|short|aggressive)",
    r"expired", r"not set", r"race condition", r"deadlock", r"changed the default", r"led to", r"resulted in",
    r"stopped \w+ing", r"no longer")
SO = re.compile(r", so ", re.I)
COMMAND = re.compile(
    r"\bkubectl\b.*?\b(?:patch|scale|set|apply|edit|delete|drain|cordon|uncordon|replace|annotate|label|"
    r"rollout\s+(?:undo|restart))\b|\bhelm\b(?:\s+-{1,2}[\w-]+(?:[= ](?!-)\S+)?)*\s+(?:upgrade|rollback|install|uninstall)\b|\bterraform\s+apply\b"
    r"|\bALTER\s+(?:TABLE|SYSTEM|DATABASE|USER|ROLE|INDEX)\b|\bUPDATE\s+\w+\s+SET\b|\bSET\s+GLOBAL\b"
    r"|\bsystemctl\s+(?:restart|reload|stop|start|enable|disable)\b|\bservice\s+\S+\s+restart\b"
    r"|\b(?:apt-get|apt|yum|dnf|apk|zypper|brew)\s+(?:-\S+\s+)*(?:install|upgrade|remove|add|del)\b|\bpip3?\s+install\b"
    r"|\bsystemctl\s+(?:edit|daemon-reload|mask|unmask)\b"
    r"|\bgit\s+revert\b|\bsysctl\s+(?:-[wp]|--system)\b|(?:>>?|\btee\s+(?:-a\s+)?)\s*/etc/|\bsed\s+-i\b"
    r"|\brm\s+(?:-\S+\s+)*/etc/|\bch(?:mod|own|grp)\s|\bsystemctl\s+(?:revert|kill)\b|\bjournalctl\s+--vacuum-"
    r"|\b(?:semanage|restorecon|setsebool|lvextend|resize2fs|xfs_growfs|update-ca-certificates)\b|\bmount\s+-o\s+remount"
    r"|\bcertbot\s+(?:renew|certonly)\b|\bkeytool\s+-import|\brndc\s+(?:reload|sign|loadkeys|flush)\b"
    r"|\bceph\b.*\s(?:set|unset|reweight|on|enable)\b|\biptables\s+-[AIDR]\b|\bdocker\s+(?:restart|rm|run)\b|\bredis-cli\b.*\bconfig\s+set\b"
    r"|\baws\s+\S+\s+(?:update|modify|put|create|delete|attach|detach|associate|disassociate|set|enable|disable|"
    r"add|remove|register|deregister|start|stop|reboot|terminate|restore|promote|failover)-|\bansible-playbook\b"
    r"|\bpg_(?:drop|terminate|cancel|reload|create|promote)_\w+\s*\(|\bDROP\s+(?:TABLE|INDEX|DATABASE|ROLE|USER|SCHEMA|"
    r"SUBSCRIPTION|PUBLICATION)\b|\b(?-i:VACUUM|REINDEX)\b|\bCREATE\s+(?:UNIQUE\s+)?INDEX\b|\b(?:GRANT|REVOKE)\s+\w+"
    r"|\bSTOP\s+(?:SLAVE|REPLICA)\b|\bSTART\s+(?:SLAVE|REPLICA)\b|\bSET\s+(?:PERSIST|SESSION)\b"
    r"|\bgcloud\s+.*\b(?:update|set|create|delete|resize)\b|\baz\s+.*\b(?:update|set|create|delete|restart)\b"
    r"|^\W*[a-z][\w-]*(?:\s+-{1,2}[\w-]+(?:[= ]\S+)?)*\s+config\s+set\b", re.I)
# what a state-changing command printed about the object it changed: kubectl's "networkpolicy.networking.k8s.io/
# allow-x created" (its "unchanged" siblings changed nothing), names what the fix was where the command line only
# names a file
CHANGED_OBJECT = re.compile(r"^[a-z][\w.-]*/[\w.-]+\s+(?:created|configured|patched|deleted|scaled|restarted|"
                            r"rolled back|cordoned|drained|uncordoned|annotated|labeled|serverside-applied)\s*$")
STEMS = (r"bump", r"rais", r"increas", r"decreas", r"lower", r"reduc", r"pinn?", r"disabl", r"enabl",
          r"revert", r"restart", r"redeploy", r"deploy", r"patch", r"scal", r"upgrad", r"downgrad", r"appl(?:i|y)",
          r"merg", r"ship", r"hotfix", r"flush", r"purg", r"drain", r"cordon", r"rotat", r"renew", r"replac",
          r"remov", r"add", r"chang", r"updat", r"switch", r"migrat", r"kill", r"resiz", r"tun", r"backport",
          r"rebuil", r"reindex", r"fre", r"push", r"releas", r"mark", r"import", r"install", r"grant")
DONE = words(*(s + r"(?:ed|d|t)" for s in STEMS), r"rolled back",
             r"turned (?:(?:it|them|this|that|the [\w.-]+) )?(?:off|on)", r"failed over",
               r"cleaned up", r"set (?:the )?[\w.-]+ to", r"shipped", r"pinned", r"applied", r"set", r"built",
               r"r[au]n(?= `)")
BY_DOING = re.compile(r"\b(?:by|after|with|via)\s+(?:" + "|".join(STEMS) + r")\w*ing\b|\b(?:by|after) "
                       r"(?:rolling back|turning (?:off|on)|failing over|setting)\b", re.I)
FIX_WORDS = words(r"workaround", r"fix:", r"the fix (?:was|is)", r"fixed (?:by|with|in|via)", r"what fixed it",
                  r"(?:hot)?fix (?:is |was )?(?:out|live|in|deployed|shipped|merged|released|rolled out)",
                  r"(?:proper|real|permanent|app|code|config) fix", r"released \S+ with", r"mitigation:",
                    r"resolved (?:by|with|via)", r"mitigated (?:by|with|via)", r"hot-?fix(?:ed)?", r"rollback",
                  r"v?\d+(?:\.\d+)+\S* (?:is|was) (?:out|live|released|deployed|rolled out)")
# Running the incident, not fixing the system: "Incident upgraded to P1", "severity raised to SEV-2", "escalated"
INCIDENT_ADMIN = re.compile(r"\b(?:incident|severity|sev|priority)\b[^.;]{0,20}?\b(?:upgraded|downgraded|raised|escalated|"
                            r"lowered|changed|bumped)\b|\b(?:upgraded|downgraded|raised|escalated|lowered|bumped)\b[^.;]{0,15}?"
                            r"\bto (?:P|SEV-?|sev-?)[0-5]\b", re.I)
# What a thing does since the fix: "purge-orphans now deletes in chunks", "the controller now sets X" (+1.0)
NOW_DOES = re.compile(r"\bnow (?:also |only |always |correctly )?(?:uses|sets|sorts|deletes|retries|reads|loads|ships|"
                      r"defaults|raises|caps|limits|batches|checks|skips|handles|validates|falls back|pins|points|"
                      r"routes|waits|writes|has|keeps|closes|releases|reuses|refreshes|renews|rotates|trusts|sends|drops)\b", re.I)
# A tracker's own line about a post, not what the post says: "Jana Novák added a comment - 02/Apr/24 2:14 PM"
TRACKER_META = re.compile(r"\b(?:added|left|posted) a comment\b|\bchanged the (?:status|assignee|priority)\b"
                          r"|\badded (?:the )?labels?\b|\bcommented\b(?= on\b| -|$)", re.I)
# The parts of an incident's write-up (the sections of the Google SRE and PagerDuty postmortem templates): a line
# that only names one ("5. RESOLUTION") is a heading, and a section under one is part of the write-up above it.
PART_HEADINGS = (
    "summary", "overview", "executive summary", "description", "background", "impact", "customer impact",
    "user impact", "timeline", "detection", "investigation", "diagnosis", "analysis", "root cause",
    "root causes", "cause", "causes", "contributing factors", "trigger", "what happened", "symptoms",
    "resolution", "remediation", "mitigation", "fix", "the fix", "recovery", "workaround", "action items",
    "follow-up", "follow-ups", "follow up", "next steps", "lessons learned", "what went well",
    "what went wrong", "where we got lucky", "status", "notes", "references", "supporting information",
    "details", "discussion", "outcome", "why it happened", "how we fixed it", "what we changed",
    "mitigation steps", "corrective actions", "preventive actions", "preventative actions", "lessons",
    "key events", "incident timeline", "contributing factor", "remediations", "learnings", "what we learned",
    "why", "what we did", "what was done", "what we saw", "what caused it", "how it was fixed", "the cause",
)
# The parts that say why or what fixed it, which only an incident's own section has (a report's "Summary" or
# "Timeline" may stand above several incidents).
WRITE_UP_PARTS = (
    "root cause", "root causes", "cause", "causes", "contributing factors", "trigger", "why it happened",
    "resolution", "remediation", "mitigation", "fix", "the fix", "workaround", "how we fixed it", "what we changed",
    "mitigation steps", "corrective actions", "remediations", "contributing factor", "why", "what we did",
    "what was done", "what caused it", "how it was fixed", "the cause",
)


def is_part_line(text: str) -> bool:
    """Whether a line of text is only a part's name ("5. RESOLUTION", "Root cause:"): a heading, no claim."""
    return HEADING_NOISE.sub("", text.lower()).strip() in PART_HEADINGS


_RULE_LINE = re.compile(r"^[\s\-=_*~#+.]{3,}$")


def is_label(text: str, headings) -> bool:
    """Whether a line is a rule, or the label its record stands under ("For the stampede:" over the steps it heads):
    it claims nothing. (A heading that tells the incident, "Incident 1: Search results empty", may be its symptom.)"""
    if _RULE_LINE.match(text):  # a heading's underline, a rule: "-----------"
        return True
    text = text.strip()
    return bool(headings) and text.endswith(":") and text.rstrip(":").strip() in headings[1:]


def names_part(heading: str, parts: tuple[str, ...] = PART_HEADINGS) -> bool:
    """Whether ``heading`` ("## 4. Root cause", "RESOLUTION:", "Root cause: the pool") names one of ``parts``."""
    name = HEADING_NOISE.sub("", heading.lower()).strip()
    return any(name == part or name.startswith(part + " ") or name.startswith(part + ":") for part in parts)
IMPERATIVE = re.compile(r"^\W*(?:raise|bump|increase|decrease|lower|reduce|pin|disable|enable|revert|roll back|"
                         r"restart|redeploy|deploy|patch|scale|set|upgrade|downgrade|apply|flush|purge|drain|"
                         r"rotate|replace|remove|add|change|update|switch|kill|resize|tune)\b", re.I)
VALUE = re.compile(r"(?<!\d)[=:]\s*[\"']?[\w.-]+|\bto\s+[\d\"']", re.I)  # not a clock's "11:21"
VERIFY = words(
    r"confirmed", r"resolved", r"recover(?:ed|ing|y)", r"back to normal", r"back up", r"back online",
    r"error rate (?:is )?(?:back|down) to", r"no more", r"no (?:new|further) (?:errors?|alerts?|occurrences?)",
    r"stable", r"stabili[sz]ed", r"healthy", r"green", r"all good", r"looks good", r"working again",
    r"works again", r"(?:is|are) fixed", r"succe(?:eded|eding|ssful)", r"passing", r"closing",
    r"(?:succeed|work|load|respond|connect|serv)\w* again", r"normal again",
    r"(?:rates?|latency|traffic|graphs?|metrics?|dashboards?) (?:is |are |was |were |back )?(?:normal|nominal|flat)")
# Under a Resolution part, what a thing does or is since: "the sanitiser now strips data: URIs", "records are now
# written to the dlq" (the part says it is the fix, so any verb will do)
NOW_IS = re.compile(r"\b(?:is|are) now (?:\w+ly )?\w+(?:ed|en)\b|\bnow (?:also |only |always )?[a-z]{3,}(?<![iu])s\b")
RULED_OUT = words(
    r"not (?:the )?(?:cause|culprit|issue|problem)", r"not related", r"unrelated", r"ruled (?:it |this )?out",
    r"rule (?:it |this )?out", r"red[ -]herring", r"(?:wasn't|was not|isn't|is not) it", r"nothing to do with",
    r"(?:a )?coincidence", r"coincidental", r"false (?:alarm|positive)", r"(?:is|was|looks|looked) fine",
    r"not it", r"(?:so|then|it's|its|it is|that's|thats) not the \w+", r"not the (?:deploy|release|rollout|chart|"
    r"change|network|database|db|cdn|dns|load balancer|lb|broker|disk)\b", r"ignore it", r"is (?:a |just )?noise",
    r"are (?:normal|expected)", r"is (?:normal|expected)", r"(?:normal|expected) for this")
INEFFECTIVE = words(
    r"(?:didn't|did not|doesn't|does not) (?:help|fix|work|change)", r"no change", r"no effect",
    r"changed nothing", r"made no difference", r"no difference", r"no improvement", r"no luck", r"unchanged",
    r"still (?:failing|erroring|broken|down|happening|the same|seeing|getting|\d+)",
    r"same (?:[\w-]+ )?(?:errors?|problem|issue|rate|failures?)", r"persist(?:s|ed|ing)?", r"not fixed", r"still there",
    r"still (?:at|the same|there|happen\w*|occurr\w*|present|seeing|hitting|red)", r"did nothing", r"does nothing",
    r"changed nothing", r"nothing changed", r"no better", r"didn't work", r"did not work", r"dead end",
    r"(?:didn't|did not|doesn't|does not) (?:make|change) (?:a|any) difference", r"to no avail", r"in vain",
    r"(?:did not|didn't) (?:go away|stop|recover)", r"(?:fail(?:s|ed)?|breaks|broke|crash(?:es|ed)) (?:again )?(?:in )?the same way", r"(?:errors?|failures?|crash(?:es|ing)?|timeouts?|problems?) "
    r"(?:continued|kept (?:coming|happening))", r"reverted? (?:it )?(?:back )?(?:again)?,? (?:but|no)")
HEDGE = words(r"maybe", r"might", r"could (?:it )?be", r"possibly", r"perhaps", r"not sure", r"i think",
                r"(?:i |we )?(?:don't|do not) think", r"doubt", r"unlikely",
                r"suspect(?:ed|s)?", r"suspicion", r"wondering", r"guess", r"theory")
BELIEF = words(r"(?:we|i) thought", r"initially", r"at first", r"assumed")
SOFT = words(r"probably", r"looks like", r"seems?")
BUT = words(r"but", r"actually", r"turned out", r"turns out", r"in fact", r"instead")
PLANNED = words(r"should", r"will", r"going to", r"plan(?:ning)? to", r"needs? to", r"todo", r"next steps?",
                  r"follow-?ups?", r"let's", r"we could", r"consider", r"propose")
NEGATED = re.compile(r"(?:\b(?:didn't|did not|never|no|without|not|don't)\s+(?:\w+\s+)?)$", re.I)
CAUSE_SECTION = re.compile(r"root cause|cause|diagnosis|analysis|contributing|^why\b", re.I)
FIX_SECTION = re.compile(r"resolution|remediation|mitigation|\bfix\b|workaround|recovery|what we (?:did|changed)|"
                         r"what was done|how (?:it was|we) fixed", re.I)
# A write-up that says it tells of more than one problem ("two unrelated faults", "both problems").
SEVERAL = re.compile(r"\b(?:two|three|four|both|several|multiple)\b(?:\s+[\w-]+){0,2}?\s+(?:problems|faults|issues|"
                     r"incidents|failures|outages)\b", re.I)
TODO_SECTION = re.compile(r"action items?|follow[- ]?ups?|next steps|lessons", re.I)
FRAME = re.compile(r"^(?:at [\w$.<>/@-]+\(|\.\.\. \d+ (?:more|common)|File \"|Caused by:\s*$)")
STOP = frozenset("""the a an and or of to in on at for with from by is was were are be been it this that these
    those we i our they he she you after before when then than into onto out over still just also which what who
    there here its it's has have had not no but so as all any some same more most very""".split())

# A setting printed as key=value ("#failure=3", "timeout=2s" in a probe's description): its key names a knob, not a
# failure that happened.
SETTING = re.compile(r"[#\w.-]+=\S*")
# An aside in parentheses: "(sphinx 7 is fine with it)" says something beside the line's own claim.
ASIDE = re.compile(r"\([^()]*\)")


# An action line that introduces what follows: "…limits.conf:", "build it yourself with", "on both resolvers we ran"
INTRODUCES = re.compile(r"(?::|\bwith|\b(?:ran|run|executed|issued|typed|applied|used)|<<-?\s*['\"]?\w+['\"]?)\s*$",
                        re.I)
FENCE = re.compile(r"^\s*(?:```|~~~)\S*\s*$")
# A line of configuration: "LimitNOFILE=65536", "max_connections: 200", an INI section "[Service]"
CONFIG_LINE = re.compile(r"^\s*(?:[\w.\-/\[\]\"']+\s*(?:=|:\s)\s*\S+|\[[\w .:-]+\])\s*$")


def suspects(text: str) -> bool:
    """Whether a line voices a suspicion or a belief since dropped ("first suspected the new analyzer")."""
    return bool(HEDGE.search(text) or BELIEF.search(text))


_WORDS = re.compile(r"[A-Za-z0-9][\w'.-]*")


def says_more(pattern: re.Pattern, text: str) -> bool:
    """Whether ``text`` says more than its cues and small words: "Found it." announces a cause without giving one."""
    return any(w.lower() not in STOP for w in _WORDS.findall(pattern.sub(" ", text)))


_CONDITION = re.compile(r"\b(?:if|unless|in case|should)\b[^.;]{0,20}$", re.I)


def ineffective(text: str) -> bool:
    """Whether a line says an attempt did not help ("no change", "still failing"); not a condition on the future
    ("please reopen if it persists")."""
    return any(not _CONDITION.search(text[:m.start()]) for m in INEFFECTIVE.finditer(text))
