"""The end-to-end tier: real processes and servers.

The session shares one real Prefect server (``prefect server start``, SQLite) and one
SeaweedFS (tests/conftest.py), each started when a test first asks for it. Modules that
need process workers start their own on a work pool of their own (``deployable_copy``),
so no worker takes another module's flow run; tests that read flow runs, events or
objects back select their own (by deployment, parameters, run ids, buckets). Commands a
test runs as processes point at the shared server (``PREFECT_API_URL``) instead of each
booting Prefect's temporary server; the tests whose subject is that temporary server
keep it (tests/e2e/test_temporary_api.py, the Ctrl-C run of test_cli_terminal.py, the
temporary server dying with the CLI in test_faults_cli.py, and the README walk-through
in a fresh install, test_user_project.py).
"""

from __future__ import annotations

from collections.abc import Iterator

# Prefect's logging configured at collection, before absl's handler meets a test's
# capture buffer (see tests/flows/conftest.py).
import prefect.main  # noqa: F401
import pytest

from tests.support.prefect_server import PrefectServer, prefect_server


@pytest.fixture(scope="session")
def shared_prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """The session's Prefect server: its API URL and home (its database is there)."""
    home = tmp_path_factory.mktemp("prefect-server")
    with prefect_server(home) as api_url:
        yield PrefectServer(home, api_url)
