"""The context builder: units ranked by the fused scorer, memory lines as a prior, provenance on every line.

The property the issue asks for: poimen's context never covers less of a
question's evidence than poimen's own scorer run as a plain retriever over the
raw units, filled to the same budget. The fixture is the multi-incident channel
(tests/fixtures/incidents), read by the offline engine for one standing failure
query; the questions ask how each incident was fixed and what caused it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from poimen.errors import PoimenError
from poimen.inputs.chunking import iter_chunks
from poimen.read import context as context_module
from poimen.read.context import ContextEngine, memory_prior
from poimen.read.context_lines import Context, ContextLine, Origin, kept_by_notes
from poimen.write.core import RunRequest, run_loops
from poimen.embedding.embedders import HashEmbedder
from poimen.index import build_projections
from poimen.llm.client import ScriptedClient
from poimen.llm import offline
from poimen.relevance import Scorer, dedup_key, split_units
from poimen.text.tokens import count_tokens

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "incidents"
CHANNEL = FIXTURES / "channel.jsonl"
INCIDENTS = yaml.safe_load((FIXTURES / "raw_errors.yaml").read_text(encoding="utf-8"))["incidents"]
QUERY = "Which failures happened, what caused them, and how were they fixed?"
QUESTIONS = [(f"how was {i['name']} fixed?", i["fix"]) for i in INCIDENTS] + \
            [(f"what caused {i['name']}?", i["cause"]) for i in INCIDENTS]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    embedder = HashEmbedder()
    offline.configure(embedder)
    try:
        root = tmp_path_factory.mktemp("context") / "log"
        client = ScriptedClient([offline.respond], repeat_last=True, model_id="scripted/offline")
        result = run_loops(RunRequest(root=root, sources=[CHANNEL], query=QUERY, chunk_tokens=800), client=client)
        assert result.ok
        build_projections(root, root / "index.duckdb", embedder)
        yield ContextEngine.open(root / "index.duckdb", embedder)
    finally:
        offline.configure()


def raw_units() -> list[str]:
    return [u.text for c in iter_chunks(CHANNEL, 800) for u in split_units(c.text)]


def fill(units: list[str], budget: int) -> str:
    out, used = [], 0
    for text in units:
        cost = count_tokens(text) + 1
        if used + cost <= budget:
            out.append(text)
            used += cost
    return "\n".join(out)


def _rank(ranked_texts: list[str], evidence: str) -> int:
    """1-based rank of the evidence among distinct units (near-duplicates count once), len+1 when absent."""
    seen: list[str] = []
    for text in ranked_texts:
        key = dedup_key(text)
        if key not in seen:
            seen.append(key)
        if flat(evidence) in flat(text):
            return len(seen)
    return len(seen) + 1


def test_context_ranks_the_scorers_top_evidence_in_its_own_top(engine):
    """Same scorer, same units: evidence the plain retriever puts in its top 5, the context puts in its top 5
    (the memories are a prior that may lift a line, not a ranking that replaces the scorer's)."""
    units = raw_units()
    scorer = Scorer(engine.scorer.embedder)
    worse, tested = [], 0
    for question, evidence in QUESTIONS:
        plain = _rank([units[i] for i, _ in scorer.rank(question, units, neighbours=True)], evidence)
        ours = _rank([engine.texts[i] for i, _ in engine.ranked(question)], evidence)
        tested += plain <= 5
        if plain <= 5 < ours:
            worse.append((question, plain, ours))
    assert tested >= 3, "the fixture must give the plain scorer some evidence to find"
    assert not worse, f"evidence ranked lower than by the plain scorer (question, plain rank, context rank): {worse}"


@pytest.mark.parametrize("budget", [500, 2000])  # the bench budgets; at 250 the headers can cost a long line
def test_context_covers_what_the_scorer_over_raw_units_covers(engine, budget):
    units = raw_units()
    scorer = Scorer(engine.scorer.embedder)
    worse = []
    for question, evidence in QUESTIONS:
        ranked = [units[i] for i, _ in scorer.rank(question, units, neighbours=True)]
        plain = flat(evidence) in flat(fill(ranked, budget))
        ctx = engine.context(question, budget)
        assert ctx.tokens <= budget and count_tokens(ctx.render()) <= budget
        if plain and flat(evidence) not in flat(ctx.render()):
            worse.append(question)
    assert not worse, f"the context lost evidence the plain scorer found at {budget} tokens: {worse}"


def test_every_line_carries_its_provenance_and_no_line_twice(engine):
    ctx = engine.context(QUESTIONS[0][0], 600)
    assert ctx.lines
    keys = [flat(line.text).lower() for line in ctx.lines]
    assert len(keys) == len(set(keys))
    for line in ctx.lines:
        o = line.origins[0]
        assert o.source == CHANNEL.name and len(o.sha) == 64 and o.position >= 0
        assert line.render().endswith("]") and o.sha[:8] in line.render()
    rendered = ctx.render().splitlines()
    assert rendered[0] == f"[{CHANNEL.name} #{ctx.lines[0].position}]"  # a header per chunk, then "line| text"
    assert all(r.startswith("[") or r.split("|")[0].rstrip("*").isdigit() for r in rendered)
    kept = [line for line in ctx.lines if line.memories()]
    notes = {r[len("[* kept by "):-1].split(" memory ")[0]: r[:-1].split(" memory ")[1].split()
             for r in rendered if r.startswith("[* kept by ")}
    assert kept and all(m.sha[:8] in notes[f"{m.store}/{m.level}"] for line in kept for m in line.memories()[:1])
    assert len(notes) == len({f"{m.store}/{m.level}" for line in kept for m in line.memories()[:1]})  # one note each


def test_memory_lines_are_a_prior_not_a_replacement(engine):
    """A memory line is ranked together with the unit it copies; units no memory kept still reach the context."""
    ctx = engine.context("lunch? burrito place?", 200)
    assert any(o.kind == "evidence" for line in ctx.lines for o in line.origins), "raw units must stay reachable"
    kinds = {o.kind for i in range(len(engine)) for o in engine.origins[i]}
    assert {"memory", "evidence"} <= kinds
    shared = [i for i in range(len(engine)) if {o.kind for o in engine.origins[i]} == {"memory", "evidence"}]
    assert shared, "a memory line and the L0 unit it copies are one candidate"


def test_the_memory_prior_is_nothing_up_to_its_floor_then_grows_to_its_weight():
    closeness = np.array([0.0, 0.2, 0.6, 1.0], dtype=np.float32)
    assert memory_prior(closeness, weight=0.5, floor=0.2).tolist() == pytest.approx([0.0, 0.0, 0.25, 0.5])
    assert not memory_prior(closeness, weight=0.0, floor=0.2).any()
    assert memory_prior(closeness, weight=0.1, floor=0.0).tolist() == pytest.approx([0.0, 0.02, 0.06, 0.1])


def test_the_prior_lifts_only_lines_a_memory_kept_and_bad_weights_are_refused(engine):
    question = QUESTIONS[0][0]
    kept = np.array([any(o.kind == "memory" for o in os_) for os_ in engine.origins])
    try:
        engine.set_memory_prior(0.0, 0.0)
        plain = engine.scores(question)
        engine.set_memory_prior(1.0, 0.0)
        lifted = engine.scores(question)
        assert (lifted[kept] > plain[kept]).any() and (lifted >= plain).all()
        assert np.array_equal(lifted[~kept], plain[~kept])
        engine.set_memory_prior(1.0, 0.999)  # no standing query is that close to the question
        assert np.array_equal(engine.scores(question), plain)
        with pytest.raises(PoimenError, match="memory prior"):
            engine.set_memory_prior(0.1, 1.0)
    finally:
        engine.set_memory_prior(context_module.MEMORY_PRIOR, context_module.MEMORY_CLOSENESS)


def test_without_memory_the_same_builder_ranks_the_raw_units_alone(engine):
    from bench.locomo_poimen import raw_units_engine

    bare = raw_units_engine(engine)
    assert not any(o.kind == "memory" for os_ in bare.origins for o in os_) and not bare.queries
    question = QUESTIONS[0][0]
    assert "[* kept by" not in bare.context(question, 600).render()
    engine.set_memory_prior(0.0, 0.0)
    try:  # with the prior off, the memory changes nothing in the ranking of the units both hold
        ours = {engine.texts[i]: s for i, s in engine.ranked(question)}
        assert all(ours[t] == pytest.approx(s) for t, s in ((bare.texts[i], s) for i, s in bare.ranked(question)))
    finally:
        engine.set_memory_prior(context_module.MEMORY_PRIOR, context_module.MEMORY_CLOSENESS)


def test_the_closing_note_names_each_memory_once_per_store_and_level():
    def kept(sha: str, level: str = "L1") -> Origin:
        return Origin("memory", level, sha * 64, "channel.jsonl", 0, 1, "episodic", "q")

    assert kept_by_notes([kept("a"), kept("b"), kept("a"), kept("c", "L2")]) == [
        "[* kept by episodic/L1 memory aaaaaaaa bbbbbbbb]", "[* kept by episodic/L2 memory cccccccc]"]
    assert kept_by_notes([]) == []


def test_a_context_pays_for_each_header_and_each_memorys_name_once():
    chunk = Origin("evidence", "L0", "e" * 64, "a.log", 3, 1)
    memory = Origin("memory", "L1", "m" * 64, "a.log", 3, 2, "episodic", "q")
    ctx = Context("q", 100)
    lines = [ContextLine("one", 1.0, (chunk,)), ContextLine("two", 0.9, (memory, replace(chunk, line=2))),
             ContextLine("three", 0.8, (replace(memory, line=3), replace(chunk, line=3)))]
    costs = []
    for line in lines:
        costs.append(ctx.cost(line))
        ctx.add(line, costs[-1])
    assert costs[0] == count_tokens("[a.log #3]") + 1 + count_tokens("1| one") + 1
    assert costs[1] == count_tokens("2*| two") + 1 + count_tokens("[* kept by episodic/L1 memory mmmmmmmm]") + 1
    assert costs[2] == count_tokens("3*| three") + 1  # its header and its memory are printed already
    assert ctx.tokens == sum(costs) and count_tokens(ctx.render()) <= ctx.tokens
