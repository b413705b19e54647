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

The tier runs in parallel (``pytest tests/e2e -n 3 --dist loadfile``, scripts/test.sh):
its tests mostly wait — on workers, heartbeats, schedules, processes starting — so three
at a time share two cores, with the type check, frameworks and flow tiers beside them.
Each xdist worker is a session of its own, with its own Prefect server and SeaweedFS,
started when one of its tests first asks. A module is one unit of work (its module
fixtures are set up once), but for the documentation pages, each a unit alone; the
longest units start first, so the tier does not end waiting on one of them started
last.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Prefect's logging configured at collection, before absl's handler meets a test's
# capture buffer (see tests/flows/conftest.py).
import prefect.main  # noqa: F401
import pytest

from tests.support.e2e_schedule import UNIT_SECONDS, unit_of
from tests.support.prefect_server import PrefectServer, prefect_server


@pytest.fixture(scope="session")
def shared_prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """The session's Prefect server: its API URL and home (its database is there)."""
    home = tmp_path_factory.mktemp("prefect-server")
    with prefect_server(home) as api_url:
        yield PrefectServer(home, api_url)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    if all(item.path.parent == here for item in items):  # this tier alone: its order is ours
        # stable: a module's tests keep their order, units not listed theirs
        items.sort(key=lambda item: -UNIT_SECONDS.get(unit_of(item.nodeid), 0))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` here: a module per unit of work, but each test of the SPLIT
    modules a unit alone. (xdist's ``loadgroup`` cannot express it with pytest 9: the
    group it appends to a test's id is lost, and every test becomes a unit.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # units start in UNIT_SECONDS' order

    class ModulesAndSplitPages(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return ModulesAndSplitPages(config, log)
