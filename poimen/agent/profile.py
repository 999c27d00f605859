"""Normalised facts about the user: what the semantic store keeps in the ``user_profile`` core block.

A self-introduction is not stored as the raw sentence. "Hi, I'm Dana and I
prefer email contact." becomes ``name: Dana; prefers email``: short
``key: value`` or ``prefers X`` facts joined by ``; ``, so that a later edit
(``memory_replace(old='prefers email', new='prefers phone')``) can target one
clean phrase. Only these patterns are normalised; any other semantic item is
kept verbatim in the semantic fact collection.
"""

from __future__ import annotations

import re

SEP = "; "
_NAME = re.compile(
    r"\b(?i:i'?m|i am|my name is|call me|this is|name'?s)\s+([A-Z][a-zA-Z'-]+(?:\s+[A-Z][a-zA-Z'-]+)?)"
    r"|^(?i:hi|hello|hey)(?i: there)?,?\s+([A-Z][a-zA-Z'-]+) (?i:here)\b",
)
_CHANNELS = r"email|e-mail|phone|phone calls?|calls?|text messages?|texts?|sms|slack|whatsapp|chat|post|mail"
_PREFER = re.compile(
    rf"\b(?:i (?:prefer|like|want)(?: to be (?:contacted|reached) (?:by|via|over))?|i'?d rather be (?:reached|contacted) "
    rf"(?:by|via)|please (?:use|contact me by|reach me by)|(?:reach|contact) me (?:by|via))\s+({_CHANNELS})\b",
    re.I,
)
_PLEASE_VERB = re.compile(r"\bplease (email|e-mail|text|call|phone) me\b", re.I)
_CANONICAL = {"e-mail": "email", "phone call": "phone", "phone calls": "phone", "call": "phone", "calls": "phone",
              "text message": "text", "text messages": "text", "texts": "text", "sms": "text", "mail": "post"}
_NOT_NAMES = {"in", "the", "a", "an", "not", "so", "just", "here", "back", "on", "at", "from", "afraid", "sorry"}


def _channel(word: str) -> str:
    w = word.lower()
    return _CANONICAL.get(w, w)


def profile_facts(text: str) -> list[str]:
    """The normalised user facts an item states, in a fixed order (name first); [] when it states none."""
    facts: list[str] = []
    m = _NAME.search(text)
    if m:
        name = (m.group(1) or m.group(2) or "").strip()
        first = name.split()[0] if name else ""
        if first and first.lower() not in _NOT_NAMES and first[0].isupper() and not first.lower().endswith("ing"):
            facts.append(f"name: {name}")
    for m in _PREFER.finditer(text):
        facts.append(f"prefers {_channel(m.group(1))}")
    for m in _PLEASE_VERB.finditer(text):
        facts.append(f"prefers {_channel(m.group(1))}")
    return list(dict.fromkeys(facts))


def split_profile(block: str) -> list[str]:
    return [f for f in block.split(SEP) if f.strip()] if block else []


def merge_profile(block: str, facts: list[str]) -> str:
    """The profile with ``facts`` merged: a ``key:`` fact replaces the same key, a preference replaces the
    previous preference (one contact preference at a time), anything else already present is kept once."""
    current = split_profile(block)
    for fact in facts:
        if ":" in fact:
            key = fact.split(":", 1)[0] + ":"
            current = [f for f in current if not f.startswith(key)]
        elif fact.startswith("prefers "):
            current = [f for f in current if not f.startswith("prefers ")]
        if fact not in current:
            current.append(fact)
    names = [f for f in current if f.startswith("name:")]
    return SEP.join(names + [f for f in current if not f.startswith("name:")])
