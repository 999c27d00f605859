"""The deterministic write router: which kind of knowledge an item is, by documented rules.

Each store has a family of cues; an item scores one point per cue family it
shows, and the highest score wins. Ties go in the order working, episodic,
procedural, semantic (the most specific reading first: a present-focus or a
timed event is rarely a durable fact, and a general rule outranks a plain
statement). An item with no cue at all is semantic: a statement of what is
true is the default kind of knowledge.

- working     the current focus: ``now``, ``currently``, ``at the moment``,
              ``in the middle of``, ``next step``, ``current task``, ``focus``,
              an ``-ing`` verb opening the item ("Quoting the refund…").
- episodic    something that happened: time markers (``yesterday``,
              ``earlier today``, ``this morning``, ``ago``, ``last week``,
              weekdays, dates, clock times, ``overnight``, ``just``) and
              past-tense verbs; a time marker with a past-tense verb scores twice.
- procedural  how to do a task: imperatives opening a clause ("Always…",
              "Escalate…", "To reset…, send…"), conditionals (``if``,
              ``when``, ``whenever`` … then), obligation (``must``, ``need``,
              ``should``, ``cannot``), arithmetic on totals (``multiply``,
              ``add``, ``%``), ``step``, ``rule``, ``policy``, general
              subjects such as "Returns after…" / "Orders over…".
- semantic    what is true: self-introductions and preferences (``I'm Dana``,
              ``my name is``, ``I prefer``, ``call me``), facts about a person or
              a thing (``lives in``, ``works as``, ``speaks``, ``is billed in``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ORDER = ("working", "episodic", "procedural", "semantic")

_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_TIME_MARKER = re.compile(
    rf"\b(yesterday|earlier today|earlier|today|this (morning|afternoon|evening|week)|tonight|overnight|last "
    rf"(night|week|month|year|{_WEEKDAYS})|\d+ (minutes?|hours?|days?|weeks?|months?) ago|ago|just now|just|"
    rf"on ({_WEEKDAYS})|({_MONTHS}) \d{{1,2}}|\d{{4}}-\d{{2}}-\d{{2}}|at \d{{1,2}}[:.]\d{{2}}|the other day|"
    rf"during the call|recently)\b",
    re.I,
)
_IRREGULAR_PAST = {
    "was", "were", "went", "sent", "got", "had", "did", "said", "told", "paid", "made", "broke", "gave", "left",
    "took", "came", "saw", "ran", "wrote", "bought", "lost", "forgot", "found", "began", "fell", "rang", "spoke",
    "shipped", "arrived", "happened", "rolled", "showed",
}
_NOT_PAST = {"need", "needed", "based", "billed", "speed", "feed", "red", "bed", "shed", "used", "allowed",
             "required", "combined", "backordered", "reported", "limited", "advanced", "detailed", "red"}
_PAST_ED = re.compile(r"\b[a-z]{3,}ed\b")
_WORKING = re.compile(
    r"\b(right now|now|currently|at the moment|in the middle of|in progress|working on|next step|current task|"
    r"current focus|focus for|this turn|this session|for now|about to|busy|waiting (on|for)|still [a-z]+ing)\b",
    re.I,
)
_GERUND_OPEN = re.compile(r"^(?:I'?m\s+|We'?re\s+|I am\s+|We are\s+)?(?!During\b|Morning\b|Evening\b|Nothing\b|Something\b|Everything\b)[A-Z][a-z]+ing\b")
_IMPERATIVES = (
    "always", "never", "use", "run", "check", "verify", "confirm", "send", "escalate", "apply", "add", "multiply",
    "divide", "subtract", "round", "restart", "retry", "wait", "ask", "offer", "call", "email", "file", "refund",
    "charge", "make", "ensure", "avoid", "do", "don't", "set", "open", "close", "include", "quote", "reply",
    "roll", "rollback", "deduct", "tell", "record", "log", "route", "forward", "notify", "contact", "keep",
    "waive", "convert", "give", "issue", "request", "cancel", "create", "collect", "attach", "mark", "tag",
    "update", "remove", "skip",
)
_IMPERATIVE = re.compile(r"(?:^|[.;:]\s+|,\s+|\bthen\s+)(" + "|".join(_IMPERATIVES) + r")\b", re.I)
_PURPOSE = re.compile(r"^to [a-z]+\b.*,", re.I)
_CONDITIONAL = re.compile(r"^(if|when|whenever|unless|for any|for [a-z]+ items|before|after)\b|"
                          r"\b(whenever|otherwise|only if|only when|when the|if the|if a|if an)\b", re.I)
_OBLIGATION = re.compile(r"\b(must|need to|needs?|should|cannot|can't|may not|is required|are required|requires?|"
                         r"incurs?|costs?|carry|carries|not be combined)\b", re.I)
_RULE_WORDS = re.compile(r"\b(step \d|steps|rule|policy|procedure|how to|multiply|by \d+(\.\d+)?|rate of|\d+%|"
                         r"within \d+ (hours|days)|business days)\b", re.I)
_GENERAL_SUBJECT = re.compile(r"^(returns|orders|refunds|shipments|customers|items|tickets|requests|discount codes|"
                              r"any|every|all|each)\b", re.I)
_SELF = re.compile(r"\b(i'?m [A-Z][a-z]+|i am [A-Z][a-z]+|my name is|call me|this is [A-Z][a-z]+|i prefer|i'd rather|"
                   r"i would rather|i like|my favou?rite|i am allergic|i'm allergic|i live|i work|my [a-z]+ "
                   r"(is|are)|please (email|text|call) me)\b")
_FACT = re.compile(r"\b(lives in|works (as|at|for)|speaks|prefers?|is (a|an|the)|are (a|an|the)|is billed|runs|"
                   r"is open|has|belongs to|is located|is based)\b", re.I)


@dataclass(frozen=True)
class RuleRoute:
    store: str
    scores: dict[str, int]
    reason: str


def _past_tense(text: str) -> bool:
    tokens = re.findall(r"[a-z']+", text.lower())
    if any(t in _IRREGULAR_PAST for t in tokens):
        return True
    return any(m.group(0) not in _NOT_PAST for m in _PAST_ED.finditer(text.lower()))


def scores(text: str) -> dict[str, tuple[int, list[str]]]:
    """Per store: (score, the cue families that fired). Pure; shown by ``route`` as its reason."""
    t = text.strip()
    cues: dict[str, list[str]] = {s: [] for s in ORDER}
    if _WORKING.search(t):
        cues["working"].append("present-focus marker")
    if _GERUND_OPEN.match(t) and not _SELF.search(t.split(",")[0] if "," in t else t):
        cues["working"].append("opens with an -ing verb")
    timed, past = bool(_TIME_MARKER.search(t)), _past_tense(t)
    if timed:
        cues["episodic"].append("time marker")
    if past:
        cues["episodic"].append("past tense")
    if _IMPERATIVE.search(t) or _PURPOSE.match(t):
        cues["procedural"].append("imperative")
    if _CONDITIONAL.search(t):
        cues["procedural"].append("conditional")
    if _OBLIGATION.search(t):
        cues["procedural"].append("obligation")
    if _RULE_WORDS.search(t):
        cues["procedural"].append("rule or arithmetic")
    if _GENERAL_SUBJECT.match(t):
        cues["procedural"].append("general subject")
    if _SELF.search(t) or _SELF.search(t.lower().replace("i'm ", "i'm ")):
        cues["semantic"].append("self-introduction or preference")
        cues["semantic"].append("about the user")
    elif _FACT.search(t):
        cues["semantic"].append("durable fact")
    return {s: (len(c), c) for s, c in cues.items()}


def route(text: str) -> RuleRoute:
    """The store for one item, by the rules above; ties go in ``ORDER``; no cue at all means semantic."""
    table = scores(text)
    best = max(ORDER, key=lambda s: (table[s][0], -ORDER.index(s)))
    if table[best][0] == 0:
        return RuleRoute("semantic", {s: 0 for s in ORDER}, "no cue: a plain statement of what is true")
    return RuleRoute(best, {s: v[0] for s, v in table.items()}, ", ".join(table[best][1]))
