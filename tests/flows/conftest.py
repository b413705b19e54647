"""The flow tier: flows and tasks in this process, against one real, temporary Prefect
API (SQLite) started once for the session (``prefect_test_harness``)."""

from __future__ import annotations

# Prefect configures logging when it is first imported, closing every handler that exists
# by then. absl (which rouge-score imports) makes a handler bound to whatever sys.stderr
# was at its import — under pytest, a capture buffer — so a Prefect import in a later test
# would close pytest's own capture. Configure Prefect's logging first, at collection.
import prefect.main  # noqa: F401
import pytest
from prefect.testing.utilities import prefect_test_harness


@pytest.fixture(scope="session", autouse=True)
def prefect_api():
    with prefect_test_harness(server_startup_timeout=180):
        yield
