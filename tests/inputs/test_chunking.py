"""The chunker: bounded, sentence-aware, exact token counts, every supported format."""

import json

import pytest

from poimen.inputs.chunking import iter_chunks
from poimen.errors import SourceError
from poimen.text.tokens import count_tokens


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_counts_are_exact_and_bounded(tmp_path):
    paras = [f"Paragraph {i} ends with punctuation. Then another sentence, number {i * 13}!" for i in range(300)]
    paras += ["- a list item\n- another item", "```\ncode block\n```", "Trailing words no period"]
    p = write(tmp_path, "doc.md", "\n\n".join(paras))
    chunks = list(iter_chunks(p, max_tokens=120))
    assert len(chunks) > 10
    for c in chunks:
        assert c.tokens == count_tokens(c.text) <= 120
    assert [c.position for c in chunks] == list(range(len(chunks)))
    # nothing lost, nothing reordered
    assert "\n\n".join(c.text for c in chunks) == "\n\n".join(paras)


def test_oversized_paragraph_splits_at_sentences(tmp_path):
    sentences = [f"Sentence number {i} talks about the ingress limit." for i in range(60)]
    p = write(tmp_path, "one.txt", " ".join(sentences))
    chunks = list(iter_chunks(p, max_tokens=50))
    assert all(c.tokens <= 50 for c in chunks)
    for c in chunks:  # every chunk starts and ends on a sentence boundary
        assert c.text.startswith("Sentence number") and c.text.endswith(".")


def test_log_lines_are_units(tmp_path):
    lines = [f"2026-11-12T09:14:{i % 60:02d}Z INFO request id={i} ok" for i in range(200)]
    p = write(tmp_path, "app.log", "\n".join(lines) + "\n")
    chunks = list(iter_chunks(p, max_tokens=100))
    assert sum(len(c.text.split("\n")) for c in chunks) == 200
    assert all(c.tokens <= 100 for c in chunks)


def test_jsonl_text_field_speaker_and_whole_line(tmp_path):
    rows = [json.dumps({"ts": "2026-11-12T09:14:03Z", "user": "priya", "text": "uploads fail with 413"}),
            json.dumps({"other": 1}), "not json at all"]
    p = write(tmp_path, "chan.jsonl", "\n".join(rows) + "\n")
    (chunk,) = iter_chunks(p)
    assert chunk.text.split("\n") == ["[2026-11-12T09:14:03Z] priya: uploads fail with 413", '{"other": 1}', "not json at all"]


def test_same_input_same_chunks(tmp_path):
    p = write(tmp_path, "a.md", "alpha beta. " * 500)
    assert [c.sha for c in iter_chunks(p, 64)] == [c.sha for c in iter_chunks(p, 64)]


@pytest.mark.parametrize("name, data, message", [
    ("bin.log", b"abc\x00def", "binary file"),
    ("bad.txt", b"caf\xe9 au lait", "invalid UTF-8 at byte 3"),
    ("empty.md", b"", "empty file"),
    ("blank.md", b"\n\n   \n", "no text"),
    ("image.png", b"\x89PNG", "unsupported type .png"),
])
def test_bad_sources_get_one_line_naming_the_file(tmp_path, name, data, message):
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(SourceError) as exc:
        list(iter_chunks(p))
    assert message in str(exc.value) and str(p) in str(exc.value) and "\n" not in str(exc.value)


def test_missing_file(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        list(iter_chunks(tmp_path / "nope.md"))
