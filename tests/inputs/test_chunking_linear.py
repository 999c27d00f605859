"""The chunker is linear on text without newlines (issue 25, item 8), and real logs read as logs (issue 27,
item 7): work is measured as the characters handed to the tokenizer, not as time, so the test cannot pass on
the version that counted a growing candidate at every word (about 2,000 characters counted per character read)."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

import poimen.inputs.chunking as chunking
from poimen.relevance import split_units

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "bench" / "failures" / "loghub"
MAX_COUNTED_PER_CHAR = 10  # each word with its space, each sentence, each piece, each unit: a few passes, not thousands


def counted(monkeypatch) -> list[int]:
    seen: list[int] = []
    real = chunking.count_tokens

    def counting(text: str) -> int:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(chunking, "count_tokens", counting)
    return seen


@pytest.mark.parametrize("shape", ["words", "no-whitespace", "long-words"])
def test_work_per_character_is_bounded_on_a_single_line(tmp_path, monkeypatch, shape):
    rnd = random.Random(7)
    size = 200_000
    if shape == "words":
        text = " ".join("".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(2, 9))) for _ in range(size // 6))
    elif shape == "no-whitespace":
        text = "".join(rnd.choices(string.ascii_letters + string.digits, k=size))
    else:
        text = " ".join("".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(3000, 9000))) for _ in range(size // 6000))
    p = tmp_path / "one-line.txt"
    p.write_text(text)
    seen = counted(monkeypatch)
    chunks = list(chunking.iter_chunks(p, max_tokens=1000))
    assert all(c.tokens <= 1000 for c in chunks)
    assert "".join("".join(c.text for c in chunks).split()) == "".join(text.split())  # nothing lost
    assert sum(seen) <= MAX_COUNTED_PER_CHAR * len(text), f"{sum(seen) / len(text):.0f} characters counted per character"


def test_word_packing_is_the_greedy_packing_of_the_old_chunker():
    """Counting each word once gives the pieces counting each candidate gave (single spaces are exact)."""
    rnd = random.Random(3)
    text = " ".join("".join(rnd.choices(string.ascii_lowercase + "0123456789-_", k=rnd.randint(1, 14))) for _ in range(3000))
    pieces = list(chunking._pieces(text, 200))
    greedy, current = [], ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if chunking.count_tokens(candidate) <= 200:
            current = candidate
        else:
            greedy.append(current)
            current = word
    greedy.append(current)
    assert pieces == greedy


@pytest.mark.parametrize("system", ["HPC", "Linux", "Thunderbird"])
def test_loghub_units_stay_lines(system):
    path = LOGHUB / system / f"{system}_2k.log"
    if not path.is_file():
        pytest.skip(f"loghub sample not found at {path} (the shared bench data sits beside the repo)")
    recs = list(chunking.records(path))
    assert len(recs) == 2000  # one record a line: no line of these logs is a continuation
    units = [u for c in chunking.iter_chunks(path) for u in split_units(c.text)]
    assert max(len(u.text) for u in units) <= 2000
    assert len(units) >= 2000
