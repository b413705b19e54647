"""Test-wide environment for every tier (tests/unit, tests/flows, tests/e2e; README's
Development section): offline litellm, an isolated Prefect home, no analytics, the
default model transport; a scripted OpenAI-compatible server per module; one SeaweedFS
for the session's flow and end-to-end tests."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentflow_eval.testing import ScriptedOpenAIServer
    from tests.support.seaweed import SeaweedFS

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="agentflow-eval-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")
# Model calls take the default transport (tests/unit/llm/test_transport_contract.py runs
# the calls judges and agents make over both, and finds them alike).
os.environ.pop("AGENTFLOW_LLM_TRANSPORT", None)

# The built-in criteria's modules are imported when the registry is first asked
# (criteria/builtins.py). Under pytest those modules are assertion-rewritten (the package
# is a pytest plugin), and CPython 3.11.7's compiler can fail doing that deep inside a
# Prefect flow's stack ("AST constructor recursion depth mismatch"). Load them here, at a
# shallow depth, once.
from agentflow_eval.criteria.registry import known_criteria

known_criteria()


# Collection imports every test module and what they import, and frees little: the cyclic
# collector is paused meanwhile (agentflow_eval/import_cost.py says why) and what it
# loaded is then frozen, so the session's later full collections do not walk it again.
@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
    gc.enable()


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """Each test leaves os.environ as it found it. The CLI run in the test's process sets
    variables for its process (Prefect's console log level, for one); left behind, they
    would reach every process a later test starts — a Prefect worker that logs warnings
    only, say."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ScriptedOpenAIServer]:
    """One scripted OpenAI-compatible server per test module (stopping one costs half a
    second: its poll interval)."""
    from agentflow_eval.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as running:
        yield running


@pytest.fixture
def server(shared_server: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    """The module's server with no handler and no recorded requests."""
    shared_server.requests.clear()
    shared_server.handler = None
    return shared_server


@pytest.fixture(scope="session")
def shared_seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedFS]:
    """The session's S3-compatible store (a process: for tests/flows and tests/e2e, never
    the core tier), started when a test first asks for it; each module keeps to a bucket
    of its own."""
    from tests.support.seaweed import SeaweedFS

    store = SeaweedFS(tmp_path_factory.mktemp("seaweed") / "data")
    store.start()
    try:
        yield store
    finally:
        store.stop()
