"""Fixtures of the index's tests."""

import pytest
from index_helpers import built


@pytest.fixture
def db(tmp_path, template):
    """The index of a copy of the session's template log (``index_helpers.built``), under tmp_path."""
    return built(tmp_path, template)[1]
