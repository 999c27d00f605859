"""Static hash shards of the sources: the unit of work Dagster's executors spread over processes or pods.

A source belongs to shard ``sha256(source id) mod n``: known up front, stable across runs and machines, and in
need of no registration (a new source simply lands in its shard). Each shard of ``chunks`` and ``l1_memories`` is
a step of its own inside one run, so the multiprocess executor (or ``dagster-k8s``, ``dagster-celery``) runs the
shards at once; ``l1_memories`` waits for every shard of ``chunks`` and ``l2_memories`` for every shard of
``l1_memories``. Why steps and not Dagster partitions: docs/scale.md.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from poimen.inputs.chunking import source_id
from resources import CorpusResource

DEFAULT_SHARDS = 1  # one machine, in-process: one step with every loop concurrent inside it is the fastest


def shard_of(sid: str, shards: int) -> int:
    return int(hashlib.sha256(sid.encode("utf-8")).hexdigest()[:8], 16) % shards


def shard_sources(corpus: CorpusResource, shard: int, shards: int) -> list[Path]:
    """The current source files of one shard."""
    return [p for p in corpus.source_files() if shard_of(source_id(p, corpus.sources_dir), shards) == shard]


@dataclass(frozen=True)
class ShardBody:
    """A shard step's work, ``run(context, shard, shards, **resources)``, and the resource keys it takes."""

    run: Callable[..., dict]
    resources: tuple[str, ...]


def shard_body(*resources: str) -> Callable[[Callable[..., dict]], ShardBody]:
    """Declare a function the body of a sharded stage's steps, taking ``resources`` (by key, as keyword arguments).

    Every shard step holds the log's writer turn, shared (shards append runs side by side), so each takes
    ``event_log``."""
    if "event_log" not in resources:
        raise ValueError(f"shard_body{resources}: a shard step holds the log's writer turn, so it takes event_log")
    return lambda run: ShardBody(run, tuple(resources))


def fan_out(stage: str, shards: int, body: ShardBody, collect: dg.OpDefinition, start=None):
    """Compose ``shards`` steps of ``body`` (named ``<stage>_shard_<i>``) into ``collect``; ``start`` gates them all."""
    ops = [shard_op(stage, i, shards, body) for i in range(shards)]
    return collect([op(start) if start is not None else op() for op in ops])


def shard_op(stage: str, shard: int, shards: int, body: ShardBody) -> dg.OpDefinition:
    @dg.op(name=f"{stage}_shard_{shard:02d}", ins={"start": dg.In(dg.Nothing)}, required_resource_keys=set(body.resources),
           tags={"poimen/shard": f"{shard:02d}/{shards}"},
           description=f"Shard {shard} of {shards} of `{stage}`: the sources whose id hashes to it.")
    def step(context: dg.OpExecutionContext) -> dict:
        kwargs = {name: getattr(context.resources, name) for name in body.resources}
        with kwargs["event_log"].writer_turn(context.op.name, shared=True):  # shards append runs side by side
            return body.run(context, shard, shards, **kwargs)

    return step
