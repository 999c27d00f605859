"""RULER-HQA / MemAgent-style long-context QA built from the HotpotQA sample in /work/shared/bench/hotpot.

Why this shape: the gated loop must find two to five supporting sentences in a
long stream of look-alike Wikipedia paragraphs, so each item is the question's
gold paragraphs hidden among distractors, rendered as RULER's
``Document i:\\n<title>\\n<text>`` blocks and filled to a target length in
cl100k tokens. The supporting sentences travel with the item so a caller can
label chunks after chunking and score what the final memory kept.

Choices, written down:

- Items are the first ``n_items`` questions of the file, in file order; the
  seed only changes which distractors are drawn and where the gold lands.
- Distractors come from the 994-paragraph corpus minus the question's gold
  titles. The corpus holds about 131K tokens, so a 448K document cannot be
  built from distinct paragraphs: the non-gold corpus is reshuffled and drawn
  again pass after pass (each distractor appears ~3.4 times at 448K, under a
  new document number each time). Gold paragraphs are never repeated, so the
  answer is still stated once. ``Item.distractor_passes`` records the passes.
- The document is exactly at or under ``target_tokens`` (measured with
  ``count_tokens`` on the final text): distractors are added while the running
  count fits, then the final text is measured and trimmed if needed.
- Retention: a supporting sentence counts as retained when at least 80% of its
  distinct content tokens (normalised as in the official ``normalize_answer``,
  stopwords removed) occur in the memory. Word-level, not substring, because a
  memory paraphrases and reorders; 80% because a memory that drops a date or a
  name has lost the fact, while one that drops an adjective has not.
- Answer in memory: the normalised answer (``normalize_answer``) occurs in the
  normalised memory as whole words ("yes" is not found inside "eyes"). It asks
  whether the memory holds what ψ needs, whatever ψ then makes of it.
"""

from __future__ import annotations

import collections
import json
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path

from bench.text import squash
from poimen.text.tokens import count_tokens

DATA_DIR = Path("/work/shared/bench/hotpot")
QUESTIONS = DATA_DIR / "hipporag_hotpotqa_train.json"
CORPUS = DATA_DIR / "hipporag_hotpotqa_train_corpus.json"
TARGETS = (7_000, 28_000, 112_000, 448_000)  # the RULER-HQA / MemAgent ladder, in tokens
BLOCK_SEP = "\n\n"
RETAINED_SHARE = 0.8
_PARTIAL_CHARS = 40  # a sentence cut by a chunk boundary counts where >= this many of its chars fall

# Function words carry no fact; dropping them keeps "retained" about names, numbers and nouns.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is was were are be been being
    it its this that these those he she they his her their him them who whom which what when where
    how not no than then so such also into over after before during about between has have had do
    does did i you we our your my me us there here can could would should will may might""".split()
)


@dataclass(frozen=True)
class Item:
    """One long-context question: the document to stream and the evidence needed to score it."""

    id: str
    question: str
    answer: str
    document: str
    supporting_sentences: tuple[str, ...]
    gold_titles: tuple[str, ...]
    tokens: int
    n_documents: int
    distractor_passes: int


def _load() -> tuple[list[dict], dict[str, list[str]]]:
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    return questions, corpus


def _block(number: int, title: str, sentences: list[str]) -> str:
    # HotpotQA sentences keep their leading space, so "".join is the original paragraph.
    return f"Document {number}:\n{title}\n{''.join(sentences).strip()}"


def _gold_titles(question: dict) -> list[str]:
    seen: list[str] = []
    for title, _ in question["supporting_facts"]:
        if title not in seen:
            seen.append(title)
    return seen


def _supporting_sentences(question: dict, corpus: dict[str, list[str]]) -> tuple[str, ...]:
    context = dict(question["context"])
    out = []
    for title, index in question["supporting_facts"]:
        sentences = context.get(title) or corpus[title]
        if 0 <= index < len(sentences) and sentences[index].strip():
            out.append(sentences[index].strip())
    return tuple(out)


def _assemble(question: dict, corpus: dict[str, list[str]], target_tokens: int, seed: int) -> Item:
    rng = random.Random(f"{seed}:{question['_id']}")
    gold = _gold_titles(question)
    context = dict(question["context"])
    paragraphs = [(t, context.get(t) or corpus[t]) for t in gold]
    # "Document 999:" is the widest header up to 999 blocks; a conservative per-block estimate.
    header = count_tokens("Document 9999:\n") + count_tokens(BLOCK_SEP)
    used = sum(count_tokens(f"{t}\n{''.join(s).strip()}") + header for t, s in paragraphs)
    pool = [t for t in corpus if t not in set(gold)]
    cost = {t: count_tokens(f"{t}\n{''.join(corpus[t]).strip()}") + header for t in pool}
    passes = 0
    while used < target_tokens:
        order = pool[:]
        rng.shuffle(order)
        added = False
        for title in order:
            if used + cost[title] > target_tokens:
                continue  # a shorter paragraph further on may still fit
            paragraphs.append((title, corpus[title]))
            used += cost[title]
            added = True
        if not added:
            break
        passes += 1
    gold_set = set(gold)
    while True:
        order = paragraphs[:]
        rng.shuffle(order)
        document = BLOCK_SEP.join(_block(i, t, s) for i, (t, s) in enumerate(order, start=1))
        tokens = count_tokens(document)
        if tokens <= target_tokens:
            break
        # The estimate was short: drop one distractor (never gold) and measure again.
        drop = next(i for i in range(len(paragraphs) - 1, -1, -1) if paragraphs[i][0] not in gold_set)
        paragraphs.pop(drop)
    return Item(
        id=question["_id"],
        question=question["question"],
        answer=question["answer"],
        document=document,
        supporting_sentences=_supporting_sentences(question, corpus),
        gold_titles=tuple(gold),
        tokens=tokens,
        n_documents=len(order),
        distractor_passes=passes,
    )


def build(n_items: int, target_tokens: int, seed: int = 0) -> list[Item]:
    """The first ``n_items`` questions, each as a document of at most ``target_tokens`` tokens."""
    questions, corpus = _load()
    if not 0 < n_items <= len(questions):
        raise ValueError(f"n_items={n_items}: the sample holds {len(questions)} questions")
    return [_assemble(q, corpus, target_tokens, seed) for q in questions[:n_items]]


def _holds(chunk: str, sentence: str) -> bool:
    """Whole sentence inside, or a piece of >= 40 chars at a boundary (the sentence was cut in two)."""
    if sentence in chunk:
        return True
    if len(sentence) <= _PARTIAL_CHARS:
        return False
    head = chunk.rfind(sentence[:_PARTIAL_CHARS])
    if head >= 0 and sentence.startswith(chunk[head:]):
        return True
    tail = chunk.find(sentence[-_PARTIAL_CHARS:])
    return tail >= 0 and sentence.endswith(chunk[: tail + _PARTIAL_CHARS])


def label_chunks(item: Item, chunk_texts: list[str]) -> list[bool]:
    """Per chunk: does it hold a supporting-fact sentence (whitespace-insensitive)?"""
    sentences = [squash(s) for s in item.supporting_sentences]
    return [any(_holds(squash(c), s) for s in sentences) for c in chunk_texts]


def content_tokens(text: str) -> set[str]:
    """Distinct normalised words of ``text`` that are not stopwords."""
    return {w for w in normalize_answer(text).split() if w not in STOPWORDS}


def _retained(sentence: str, memory: set[str], share: float) -> bool:
    wanted = content_tokens(sentence)
    return not wanted or len(wanted & memory) / len(wanted) >= share


def sentence_retained(sentence: str, memory_text: str, share: float = RETAINED_SHARE) -> bool:
    """At least ``share`` of the sentence's content tokens occur in the memory."""
    return _retained(sentence, content_tokens(memory_text), share)


def retention(item: Item, memory_text: str, share: float = RETAINED_SHARE) -> float:
    """Share of the item's supporting sentences retained by ``memory_text`` (see the module docstring)."""
    if not item.supporting_sentences:
        return 0.0
    memory = content_tokens(memory_text)
    kept = sum(_retained(s, memory, share) for s in item.supporting_sentences)
    return kept / len(item.supporting_sentences)


def answer_in_memory(answer: str, memory_text: str) -> bool:
    """The normalised answer string occurs in the normalised memory, on word boundaries."""
    wanted = normalize_answer(answer)
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(memory_text)} "


# --- the official HotpotQA answer metrics (hotpot_evaluate_v1.py) ---------------------------


def normalize_answer(s: str) -> str:
    """Lower case, drop punctuation and the articles a/an/the, collapse whitespace."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def exact_match(prediction: str, ground_truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token F1; a yes/no/noanswer on either side scores only an exact match, as in the official script."""
    pred, gold = normalize_answer(prediction), normalize_answer(ground_truth)
    special = ("yes", "no", "noanswer")
    if (pred in special or gold in special) and pred != gold:
        return 0.0
    pred_tokens, gold_tokens = pred.split(), gold.split()
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)
