"""LoCoMo (snap-research, CC BY-NC 4.0) as turns, .jsonl sources and scored QA items.

Why: LoCoMo's ten long two-person conversations are the memory benchmark a
user recognises. poimen reads them as ``.jsonl`` sources (one record per turn,
which the chunker renders as ``[date] speaker: text``), and the baselines and
the lookup are scored on whether their context holds the evidence turns.

Choices, written down:

- Categories follow the official task_eval code: 1 multi-hop, 2 temporal,
  3 open-domain, 4 single-hop; 5 (adversarial, mostly without an answer) is
  left out, as is usual.
- A turn that shared an image keeps its BLIP caption as ``[shares <caption>]``
  after the text (``Turn.content``): the caption is part of what was said, and
  some questions ask about the pictures. ``Turn.text`` stays the raw text.
- Evidence ids are cleaned: a few entries hold several ids in one string
  ("D8:6; D9:17"), or odd spellings ("D:11:26", "D30:05"); they are split and
  normalised. Ids that name no turn of the conversation ("D10:19" in conv-42,
  "D4:36" in conv-47, a bare "D") are dropped and counted in ``stats``. An item
  left with no evidence is skipped and counted (4 upstream, all category 3).
"""

from __future__ import annotations

import collections
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

LOCOMO = Path("/work/shared/bench/locomo/locomo10.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
_SESSION = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    """One utterance, with the date of the session it belongs to."""

    sample_id: str
    dia_id: str
    speaker: str
    text: str
    date: str
    session: int
    caption: str | None = None

    @property
    def content(self) -> str:
        """The text plus, for a shared image, its caption."""
        return f"{self.text} [shares {self.caption}]" if self.caption else self.text

    def render(self, dated: bool = True) -> str:
        """The same ``[date] speaker: text`` line the chunker makes from the .jsonl record."""
        return f"[{self.date}] {self.speaker}: {self.content}" if dated else f"{self.speaker}: {self.content}"


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class QAItem:
    """A question about one conversation, with the dia_ids of the turns that answer it."""

    sample_id: str
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int
    evidence_texts: tuple[str, ...] = ()  # raw text of each evidence turn, in the order of ``evidence``

    @property
    def category_name(self) -> str:
        return CATEGORIES[self.category]


@dataclass
class LoCoMo:
    conversations: list[Conversation]
    qa: list[QAItem]
    stats: dict = field(default_factory=dict)

    def conversation(self, sample_id: str) -> Conversation:
        return next(c for c in self.conversations if c.sample_id == sample_id)


def _turns(sample_id: str, raw: dict) -> list[Turn]:
    sessions = sorted((int(m.group(1)), key) for key in raw if (m := _SESSION.match(key)))
    out = []
    for number, key in sessions:
        date = raw.get(f"{key}_date_time", "")
        for t in raw[key]:
            out.append(
                Turn(
                    sample_id=sample_id,
                    dia_id=t["dia_id"],
                    speaker=t["speaker"],
                    text=t["text"],
                    date=date,
                    session=number,
                    caption=t.get("blip_caption") or None,
                )
            )
    return out


def clean_evidence(raw: list[str]) -> list[str]:
    """Split multi-id strings and normalise spellings: "D:11:26" -> "D11:26", "D30:05" -> "D30:5"."""
    out = []
    for entry in raw:
        for piece in re.split(r"[;,\s]+", entry.strip()):
            m = _DIA_ID.fullmatch(piece)
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else piece)
    return [p for p in out if p]


def load(path: Path = LOCOMO) -> LoCoMo:
    """Conversations (all turns) and the scored QA items (categories 1-4 with evidence)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations, qa = [], []
    stats = {
        "raw_categories": collections.Counter(),
        "adversarial_skipped": 0,
        "empty_evidence_skipped": collections.Counter(),
        "unknown_evidence_ids": [],
    }
    for conv in data:
        sid = conv["sample_id"]
        raw = conv["conversation"]
        turns = _turns(sid, raw)
        conversations.append(Conversation(sid, (raw["speaker_a"], raw["speaker_b"]), tuple(turns)))
        known = {t.dia_id: t.text for t in turns}
        for q in conv["qa"]:
            category = int(q["category"])
            stats["raw_categories"][category] += 1
            if category == ADVERSARIAL:
                stats["adversarial_skipped"] += 1
                continue
            evidence = []
            for dia_id in clean_evidence(q.get("evidence") or []):
                if dia_id not in known:
                    stats["unknown_evidence_ids"].append((sid, dia_id))
                elif dia_id not in evidence:
                    evidence.append(dia_id)
            if not evidence:
                stats["empty_evidence_skipped"][category] += 1
                continue
            texts = tuple(known[d] for d in evidence)
            qa.append(QAItem(sid, q["question"], str(q.get("answer", "")), tuple(evidence), category, texts))
    stats["turns"] = sum(len(c.turns) for c in conversations)
    stats["scored"] = collections.Counter(item.category for item in qa)
    return LoCoMo(conversations, qa, stats)


def write_jsonl(conversation: Conversation, out_dir: Path) -> Path:
    """One ``{"ts", "speaker", "text", "dia_id"}`` record per turn, in order, as ``<sample_id>.jsonl``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{conversation.sample_id}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for t in conversation.turns:
            record = {"ts": t.date, "speaker": t.speaker, "text": t.content, "dia_id": t.dia_id}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def write_sources(data: LoCoMo, out_dir: Path) -> list[Path]:
    """Every conversation as a .jsonl source under ``out_dir``."""
    return [write_jsonl(c, out_dir) for c in data.conversations]
