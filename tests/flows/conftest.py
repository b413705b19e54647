"""Flow tests run against a real, temporary Prefect API (SQLite), started once."""

from __future__ import annotations

import pytest
from prefect.testing.utilities import prefect_test_harness


@pytest.fixture(scope="session", autouse=True)
def prefect_api():
    with prefect_test_harness(server_startup_timeout=180):
        yield
