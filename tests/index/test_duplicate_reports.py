"""A report as the query: its title is a field of its own, and a document-sized query is compared as a document.

"Seen this before?" over a bug tracker pastes a whole new report into lookup.
Its body is often a build transcript or a config dump that other reports share,
so two mechanisms keep that body from deciding (``bench/hadoop_dups.py``
measures them on real Apache Hadoop duplicates):

- a titled text (title, blank line, body) gets a 'headline' vector, and a
  titled query is also scored by its title alone;
- the keyword list of a multi-line query is the tf-idf cosine, not BM25, so
  the incidental terms of a long query stop adding up.

The corpus goes through the log the real way (gated loop with a scripted gate,
``build_projections`` with the hash embedder), as in the specificity tests.
"""

from __future__ import annotations

import pytest

from poimen.index import MemoryIndex
from poimen.index.keyword import BM25
from poimen.relevance.question import lexical_scorer
from poimen.relevance import HEADLINE_CHARS, headline
from poimen.testing.gate import scripted_gate
from index_helpers import index_of_sources

# A build transcript several reports paste; each noise report names its own module, goal and time.
TRANSCRIPT = """[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
[INFO] Total time:  {t} s
[INFO] Finished at: 2020-06-{d}T01:56:28Z
[ERROR] Failed to execute goal {goal} on project {module}: see the log above
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging."""

NOISE = [("checkstyle warnings in hadoop-common", "checkstyle:check", "hadoop-common"),
         ("shaded client jar misses a class", "shade:shade", "hadoop-client-api"),
         ("enforcer rejects a banned dependency", "enforcer:enforce", "hadoop-aws"),
         ("protoc version mismatch on arm", "protoc:compile", "hadoop-yarn-api"),
         ("findbugs excludes ignored", "findbugs:check", "hadoop-hdfs-client"),
         ("surefire fork crashes on jdk8", "surefire:test", "hadoop-mapreduce-client-core")]
TARGET = ("Javadoc fails on JDK 11 in hadoop-hdfs\n\n"
          "Running mvn javadoc:javadoc with Java 11 stops with many javadoc errors in hadoop-hdfs.")
QUERY = ("[JDK 11] hadoop-hdfs javadoc fails\n\n"
         "[ERROR] /build/hadoop-hdfs/src/main/java/org/apache/hadoop/hdfs/DFSClient.java:72: error: bad use of '>'\n"
         + TRANSCRIPT.format(t="17.9", d="20", goal="javadoc:javadoc", module="hadoop-hdfs"))

gate = scripted_gate(lambda p: None if p.memory.strip() else p.chunk)  # each report's text is its memory


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> MemoryIndex:
    sources = {f"noise-{i}.txt": f"{title}\n\n" + TRANSCRIPT.format(t=f"{i + 3}.2", d=f"{i + 10}", goal=goal, module=module)
               for i, (title, goal, module) in enumerate(NOISE)} | {"target.txt": TARGET}
    return index_of_sources(tmp_path_factory.mktemp("duplicates"), sources, gate, "Which earlier report is this?", 2000)


def source(index: MemoryIndex, i: int) -> str:
    return index.meta[i]["source"] or index.meta[i]["run_id"]


def is_target(index: MemoryIndex, i: int) -> bool:
    return index.meta[i]["text"].strip() == TARGET


def test_the_title_finds_the_report_the_pasted_transcript_hides(index):
    lists = index.ranked_lists(QUERY, 50)
    # The whole query's vector is the transcript's: a noise report comes first by it.
    assert not is_target(index, lists["text"][0][0])
    # Its title alone, against each report's text and title, puts the earlier javadoc report first.
    assert is_target(index, lists["headline"][0][0])
    hit = index.search(QUERY, k=3, explain=True)[0]
    assert hit.text.strip() == TARGET and hit.tier.startswith("headline")
    assert "headline vectors rank 1/" in hit.why
    # A multi-line query's keyword list is the tf-idf cosine (scores in (0, 1]), not BM25's.
    assert "keyword rank 1/" in hit.why and "(cosine " in hit.why
    assert all(0 < s <= 1 + 1e-6 for _, s, _ in lists["keyword"]) and lists["keyword"] != index.search_bm25(QUERY, 50)


def test_a_query_without_a_title_has_no_headline_list(index):
    lists = index.ranked_lists("javadoc fails on JDK 11", 50)
    assert "headline" not in lists and lists["vector"]
    assert all(detail[0] in ("text", "symptom") for _, _, detail in lists["vector"])
    hit = index.search("javadoc fails on JDK 11", k=1, explain=True)[0]
    assert hit.text.strip() == TARGET and "(bm25 " in hit.why and "headline" not in hit.why
    assert lists["keyword"] == index.search_bm25("javadoc fails on JDK 11", 50)


def test_only_titled_reports_have_a_headline_vector(index):
    titled = {i for i in range(len(index)) if headline(index.meta[i]["text"])}
    assert set(index.headline_docs) == titled and len(titled) == len(NOISE) + 1


@pytest.mark.parametrize(("text", "title"), [
    ("Upgrade jackson-databind to 2.9.10.3\n\nNew RCE found in jackson-databind.", "Upgrade jackson-databind to 2.9.10.3"),
    ("Upgrade guava\r\n\r\nUpdate guava to 32.0.1 or higher.", "Upgrade guava"),
    ("# Runbook: ingress limits\n\nIf uploads fail with 413, check the annotation.", "Runbook: ingress limits"),
    ("Subject: disk full on db-3\n\nThe volume filled at 02:00.", "disk full on db-3"),
    ("one line, no body", None),
    ("Summary only\n\n", None),
    ("2024-01-01 ERROR disk full\n2024-01-01 WARN retrying\n\nlater lines", None),  # a log: no blank line after
    ("x" * (HEADLINE_CHARS + 1) + "\n\nbody", None),  # a paragraph, not a title
])
def test_headline_is_the_first_line_of_a_titled_text_only(text, title):
    assert headline(text) == title


# A small tracker for the lexical cosine: reports that share everyday words, and one long release-notes page.
COMMON = ("cluster upgrade namenode datanode balancer router checks logs config restart failed error week "
          "version client server").split()
DOCS = ["s3a SSLException with dotted bucket names",
        "Release notes\n\n" + " ".join(f"{w} fixes;" for w in COMMON),
        *(f"report {i}: " + " ".join(COMMON[(i * 5 + j) % len(COMMON)] for j in range(5)) for i in range(12))]


def test_the_lexical_cosine_compares_two_documents_symmetrically():
    keywords = BM25(DOCS)
    score = {(q, d): s for q in range(len(DOCS)) for d, s, _ in keywords.similar(DOCS[q], len(DOCS))}
    # A report against itself is 1 and first; a report compared with another scores what that one scores with it
    # (BM25 is not symmetric: it reads the query as a bag of distinct terms and only the doc's frequencies).
    for q in range(len(DOCS)):
        assert keywords.similar(DOCS[q], 1)[0][0] == q and score[q, q] == pytest.approx(1.0)
    assert all(score[d, q] == pytest.approx(s) and 0 < s <= 1 + 1e-6 for (q, d), s in score.items())
    ranked = keywords.similar("SSLException on dotted bucket names\n\nafter the " + " ".join(COMMON), 5)
    assert ranked[0][0] == 0 and "sslexception" in ranked[0][2]
    assert [s for _, s, _ in ranked] == sorted((s for _, s, _ in ranked), reverse=True)
    assert keywords.similar("no term of any doc", 3) == []


@pytest.mark.parametrize(("query", "scorer"), [
    ("OOMKilled exit code 137", "bm25"),
    ("  how was the 413 fixed?  \n\n", "bm25"),
    ("Title\n\nbody", "cosine"),
    ("java.lang.IllegalStateException: x\n\tat a.B.c(B.java:1)", "cosine"),
])
def test_lexical_scorer_follows_the_query_shape(query, scorer):
    assert lexical_scorer(query) == scorer
