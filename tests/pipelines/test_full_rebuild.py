"""The nightly `rebuild` job: everything re-materialized from the raw sources in a scratch folder and compared.

An unchanged tree passes with every loop replayed against its recorded replies and no model call (the model
resource raises, and so does litellm); a one-character change in the chunker's sentence rule fails it, naming the
first chunk whose sha differs. The live assets keep their metadata: the result is the `rebuild_audit` asset's own.
"""

import re

import dagster as dg
import pyarrow.parquet as pq
import pytest

import poimen.inputs.chunking
import poimen.write.loop
from pipeline_helpers import make_resources, materialization
from pipelines.definitions import make_definitions
from poimen.inputs.chunking import iter_chunks
from poimen.llm.client import LiteLLMClient, ScriptedClient
from poimen.log.store import EventLog
from resources import ScriptedLLMResource

pytestmark = pytest.mark.usefixtures("dagster_home")

# One paragraph longer than the 400-token chunk bound, so the chunker must split it at sentences — many ending in "?".
LONG = " ".join(f"Why did upload batch {i} fail with a 413 error? Because the ingress proxy buffered the whole "
                f"request body before forwarding it." for i in range(40))


class ModelCalled(AssertionError):
    pass


def no_model(*_args, **_kwargs):
    raise ModelCalled("the rebuild called a model")


def test_rebuild_replays_without_a_model_then_names_the_first_chunk_a_changed_sentence_rule_moves(
        tmp_path, corpus, monkeypatch):
    for extra in ("adr-007-queue-choice.md", "incident-channel.jsonl"):
        (corpus.sources_dir / extra).unlink()
    (corpus.sources_dir / "upload-faq.md").write_text(f"# Upload FAQ\n\n{LONG}\n", encoding="utf-8")
    resources = make_resources(tmp_path, corpus)
    build = make_definitions(resources).resolve_job_def("full_build").execute_in_process(
        instance=dg.DagsterInstance.ephemeral())
    assert build.success
    index_metadata = materialization(build, "memory_index")

    raising = dict(resources, llm=ScriptedLLMResource.of(ScriptedClient([ModelCalled("model called")])))
    monkeypatch.setattr(LiteLLMClient, "complete", no_model)
    instance = dg.DagsterInstance.ephemeral()
    rebuild = make_definitions(raising).resolve_job_def("rebuild")
    passed = rebuild.execute_in_process(instance=instance)
    assert passed.success
    audit = materialization(passed, "rebuild_audit")
    log = EventLog(tmp_path / "log")
    starts = {r: e for r in log.sealed_run_ids() if (e := log.run_events(r)[0]).kind == "run_start"
              and e.level in ("L1", "L2")}
    loops = [r for r, e in starts.items() if e.attributes.get("kind") != "incident"]
    cards = [r for r, e in starts.items() if e.attributes.get("kind") == "incident"]
    assert audit["runs_rederived_loop"].value == len(loops) == 2 * 2 + 2  # 2 sources × 2 queries, and 2 L2 runs
    assert cards and audit["runs_rederived_incident"].value == len(cards)  # each incident carded from its reply
    assert audit["replies_replayed"].value > 0 and audit["chunks_compared"].value > 0
    assert "full rebuild matches" in audit["report"].value
    # the live assets' metadata is untouched: the job materialized only its own asset
    assert {e.asset_key.path[-1] for e in passed.get_asset_materialization_events()} == {"rebuild_audit"}
    assert materialization(build, "memory_index") == index_metadata

    # drift in the loop itself (it now counts one token more) is named at the first event it changes
    with monkeypatch.context() as patch:
        patch.setattr(poimen.write.loop, "count_tokens", lambda text, _count=poimen.write.loop.count_tokens: _count(text) + 1)
        drifted = make_definitions(raising).resolve_job_def("rebuild").execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not drifted.success
    (failure,) = [e for e in drifted.all_events if e.event_type_value == "STEP_FAILURE"]
    first_open = next(e for r in loops for e in log.run_events(r) if e.kind == "gate" and e.update)
    assert f"event {first_open.run_id[:16]} seq {first_open.seq} (gate, turn {first_open.turn}): attrs differ" \
        in failure.step_failure_data.error.message

    rule = poimen.inputs.chunking._SENTENCE_END.pattern
    changed = rule.replace("[.!?]", "[.!]")  # one character: a question mark no longer ends a sentence
    assert len(rule) - len(changed) == 1
    stored = pq.read_table(tmp_path / "log" / "chunks" / "upload-faq.md.parquet", columns=["sha"]).column("sha").to_pylist()
    monkeypatch.setattr(poimen.inputs.chunking, "_SENTENCE_END", re.compile(changed))
    fresh = [c.sha for c in iter_chunks(corpus.sources_dir / "upload-faq.md", corpus.chunk_tokens, corpus.sources_dir)]
    position = next(i for i, (a, b) in enumerate(zip(stored + [""], fresh + [""])) if a != b)
    failed = make_definitions(raising).resolve_job_def("rebuild").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not failed.success
    (failure,) = [e for e in failed.all_events if e.event_type_value == "STEP_FAILURE"]
    message = failure.step_failure_data.error.message
    assert f"chunk upload-faq.md#{position}: stored sha {stored[position][:16]}" in message
    assert f"re-chunked sha {fresh[position][:16]}" in message
