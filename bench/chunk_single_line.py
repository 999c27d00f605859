"""Chunking a single line (issue 25, item 8): 1 MB and 4 MB of text without newlines, words and no whitespace.

The acceptance asks the 4 MB file to take at most 6x the time of the 1 MB one. Before the word packer counted
each word once it took about 150 s a megabyte (the growing candidate was re-counted at every word).

Run ``python -m bench.chunk_single_line``.
"""

from __future__ import annotations

import json
import random
import string
import tempfile
import time
from pathlib import Path

from poimen.inputs.chunking import iter_chunks

MAX_RATIO = 6.0


def _text(rnd: random.Random, size: int, spaced: bool) -> str:
    if not spaced:
        return "".join(rnd.choices(string.ascii_letters, k=size))
    words, n = [], 0
    while n < size:
        w = "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(2, 9)))
        words.append(w)
        n += len(w) + 1
    return " ".join(words)


def run() -> dict:
    rnd = random.Random(1)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for shape, spaced in (("words", True), ("no_whitespace", False)):
            seconds = {}
            for mb in (1, 4):
                path = Path(tmp) / f"{shape}-{mb}.txt"
                path.write_text(_text(rnd, mb << 20, spaced))
                start = time.perf_counter()
                sum(1 for _ in iter_chunks(path))
                seconds[mb] = time.perf_counter() - start
            out[shape] = {"seconds_1mb": round(seconds[1], 2), "seconds_4mb": round(seconds[4], 2),
                          "ratio": round(seconds[4] / seconds[1], 2), "ok": seconds[4] / seconds[1] <= MAX_RATIO}
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
