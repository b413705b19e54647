"""The core tier: the library alone, fast, in parallel (``pytest -n auto``).

A test here imports no Prefect, starts no process and no server but in-process ones (the
scripted model server is a thread). Those belong to the flow tier (tests/flows) and the
end-to-end tier (tests/e2e): Prefect costs seconds to import in every worker and
reconfigures logging when it loads, and processes and servers are what make a suite slow
and order-dependent. The guards of tests/support/core_tier.py hold the line, each failing
the test that crossed it: a test after which ``prefect`` is in ``sys.modules`` fails with
the stack that first imported it (when the session runs this tier alone, as
scripts/test.sh does: other tiers import Prefect by design); a process started while a
core test runs raises at the call.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.core_tier import PREFECT_GUARD, PREFECT_WATCH, PROCESS_GUARD

CORE = Path(__file__).resolve().parent
_reported: list[str] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """The Prefect guard is on when this session runs the core tier alone."""
    PREFECT_GUARD.on = bool(session.items) and all(
        item.path.is_relative_to(CORE) for item in session.items
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The process guard is on from a core test's setup to its teardown (this hook sees
    every tier's tests when one session runs them all)."""
    PROCESS_GUARD.active = item.path.is_relative_to(CORE)
    try:
        return (yield)
    finally:
        PROCESS_GUARD.active = False


@pytest.fixture(autouse=True)
def _no_prefect(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not PREFECT_GUARD.on or _reported or "prefect" not in sys.modules:
        return
    _reported.append(request.node.nodeid)  # one failure says it; the rest would repeat it
    pytest.fail(
        "Prefect was imported in the core tier (tests/unit); a test that needs it belongs "
        f"in tests/flows. First imported here:\n{PREFECT_WATCH.imported_by()}",
        pytrace=False,
    )
