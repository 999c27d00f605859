"""Progress lines of a batch of runs: at most one per interval while runs go on, and the outcomes as one message."""

from types import SimpleNamespace

from poimen.write.progress import RunProgress


def plan(query: str, stream: str, chunks: int):
    return SimpleNamespace(query=SimpleNamespace(id=query), stream=SimpleNamespace(id=stream, chunk_shas=["c"] * chunks))


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_throttled_to_one_per_interval_and_say_where_the_batch_is():
    lines, clock = [], Clock()
    progress = RunProgress(lines.append, "L1", interval=5.0, clock=clock)
    progress.on_start(6)
    a, b = plan("q", "a.md", 3), plan("q", "b.md", 3)
    for turn in (1, 2):
        progress.on_turn(a, turn, True, 10)
        progress.on_turn(b, turn, False, 0)
    assert lines == ["L1: 6 chunks to read over the planned runs (sealed runs are skipped)"]  # within the interval
    clock.now = 5.0
    progress.on_turn(a, 3, True, 12)
    assert lines[1:] == ["L1: 5/6 chunks read this session, 3 gates opened, 1 runs read to the end; "
                         "in flight: q × b.md at 2/3"]
    progress.on_turn(b, 3, False, 0)
    assert len(lines) == 2  # the interval starts again at the last line


def test_finish_is_one_message_with_the_totals_and_a_line_per_run():
    lines = []
    progress = RunProgress(lines.append, "L2", clock=Clock())
    done = SimpleNamespace(status="sealed", query_id="q", stream_id="s1", run_id="a" * 64, chunks_used=1,
                           chunks_seen=2, error="")
    cut = SimpleNamespace(status="interrupted", query_id="q", stream_id="s2", run_id="b" * 64, chunks_used=0,
                          chunks_seen=0, error="model down")
    progress.finish([done, cut])
    assert lines == ["L2: 1 interrupted, 1 sealed\n"
                     "L2 q × s1: sealed (run aaaaaaaaaaaa): 1/2 gates opened\n"
                     "L2 q × s2: interrupted (run bbbbbbbbbbbb): model down"]
