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

from tests.support.prefect_server import PrefectServer, prefect_server


@pytest.fixture(scope="session")
def shared_prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """The session's Prefect server: its API URL and home (its database is there)."""
    home = tmp_path_factory.mktemp("prefect-server")
    with prefect_server(home) as api_url:
        yield PrefectServer(home, api_url)


UNIT_SECONDS = {
    "test_lost_worker.py": 343,
    "test_scale_out.py": 155,
    "test_user_project.py": 152,
    "test_deployments.py": 145,
    "test_docs.py[criteria.md]": 120,
    "test_docs.py[agents.md]": 107,
    "test_regression_suite.py": 106,
    "test_swallowed_cancellation.py": 104,
    "test_postgres_pool.py": 68,
    "test_production_traces.py": 61,
    "test_paired_runs.py": 60,
    "test_review_form.py": 48,
    "test_pytest_plugin.py": 47,
    "test_docs.py[eval-sets.md]": 46,
    "test_cli_terminal.py": 45,
    "test_temporary_api.py": 42,
    "test_docs.py[traces.md]": 39,
    "test_faults_cli.py": 38,
    "test_compare_efficiency.py": 37,
    "test_faults_agent_io.py": 33,
    "test_docs.py[mcp.md]": 32,
    "test_browser_report.py": 31,
    "test_docs.py[frameworks/langgraph.md]": 29,
    "test_docs.py[frameworks/pydantic_ai.md]": 27,
    "test_page_widths.py": 23,
    "test_docs.py[frameworks/openai_agents.md]": 22,
    "test_resume_after_kill.py": 21,
    "test_unstoppable_agent.py": 20,
}
"""Wall seconds of each unit of work that takes 20 s or more, as a run of ``.ci/run``
measured them (a module, or a page of a SPLIT module). Units start longest first, the
others after them in collection order, so the three workers end close together instead
of one finishing a long unit it took last. Only the order matters, and only for the
tier's wall time: a new long module goes in at its measured place."""
SPLIT = ("test_docs.py",)
"""Modules whose tests are units of their own (they share no module fixture, so nothing
is set up twice)."""


def unit_of(nodeid: str) -> str:
    """The unit of work the test ``nodeid`` belongs to, named as in UNIT_SECONDS: its
    module's file name, with the test's parameters for a SPLIT module."""
    module, _, test = nodeid.partition("::")
    name = Path(module).name
    if name in SPLIT and "[" in test:
        return name + test[test.index("[") :]
    return name


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
