"""A failure query's lines are the ones that state a failure, not the ones that only carry a level marker.

Build tools print a level on every line of an error block: Maven's bare
``[ERROR]`` separators and its ``[ERROR] ^`` caret lines, a test runner's
``<<< ERROR!``. Counted as failure lines they got the failure bonus and the
query's failure words, and filled a memory or a lookup's matching lines with
markers while the line that said what broke ranked beside them.
"""

from __future__ import annotations

import pytest

from poimen.relevance import Scorer, looks_like_failure, states_a_failure

STATED = "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.1:compile: Compilation failure"
MARKERS = ["[ERROR]", "[ERROR] ^", "[ERROR]      ^", "<<< ERROR!", "WARN", "2024-03-01T12:00:00Z ERROR"]


@pytest.mark.parametrize("unit", MARKERS)
def test_a_level_marker_alone_is_no_failure_line(unit):
    assert not looks_like_failure(unit) and not states_a_failure(unit)


@pytest.mark.parametrize("unit", [STATED, "2024-03-01 WARN disk usage above 90%", "Caused by: java.io.IOException: disk full",
                                  "Time elapsed: 600.01 s <<< ERROR!", "HTTP/1.1 502 Bad Gateway"])
def test_a_line_that_says_what_failed_is_one(unit):
    assert looks_like_failure(unit) and states_a_failure(unit)


def test_a_failure_query_ranks_the_stated_failure_above_the_markers():
    block = ["[INFO] BUILD FAILURE", *MARKERS[:4], STATED, "[INFO] Total time: 17.9 s"]
    ranked = Scorer().rank("Which errors occurred?", block)
    order = [block[i] for i, _ in ranked]
    assert order.index(STATED) < min(order.index(m) for m in MARKERS[:4])
    scores = dict((block[i], s) for i, s in ranked)
    assert all(scores[STATED] > scores[m] for m in MARKERS[:4])
