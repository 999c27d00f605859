"""Shard bodies declare the resources they take (``assets.shards.shard_body``); the steps require exactly those."""

from __future__ import annotations

import inspect

import pytest

from assets.chunks import chunk_shard
from assets.memories import l1_shard
from assets.shards import ShardBody, shard_body, shard_op

BODIES = {"chunks": chunk_shard, "l1_memories": l1_shard}


@pytest.mark.parametrize("stage", sorted(BODIES))
def test_a_shard_step_requires_the_resources_its_body_declares(stage):
    body = BODIES[stage]
    assert isinstance(body, ShardBody)
    params = list(inspect.signature(body.run).parameters)
    assert params[:3] == ["context", "shard", "shards"]
    assert tuple(params[3:]) == body.resources, "the declaration and the body's keyword parameters disagree"
    assert shard_op(stage, 1, 4, body).required_resource_keys == set(body.resources)


def test_a_shard_body_without_the_event_log_is_refused():
    with pytest.raises(ValueError, match="event_log"):
        shard_body("corpus")
