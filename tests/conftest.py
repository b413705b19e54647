"""Test-wide environment: offline litellm, an isolated Prefect home, no analytics."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentflow_eval.testing import ScriptedOpenAIServer

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="agentflow-eval-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")

# Prefect configures logging when it is first imported, closing every handler that exists
# by then. absl (which rouge-score imports) makes a handler bound to whatever sys.stderr
# was at its import — under pytest, a capture buffer — so a Prefect import in a later test
# would close pytest's own capture. Configure Prefect's logging first, once.
import prefect.main  # noqa: F401

# The built-in criteria are found by importing the criteria package's modules on first use.
# Under pytest those modules are assertion-rewritten (the package is a pytest plugin), and
# CPython 3.11.7's compiler can fail doing that deep inside a Prefect flow's stack
# ("AST constructor recursion depth mismatch"). Load them here, at a shallow depth, once.
from agentflow_eval.criteria.registry import known_criteria

known_criteria()


@pytest.fixture(params=["auto", "litellm"])
def llm_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once per model transport: ``auto`` sends the tests' unpriced
    ``openai/...`` models on the scripted server through the direct OpenAI-compatible
    client, ``litellm`` through the real LiteLLM path."""
    monkeypatch.setenv("AGENTFLOW_LLM_TRANSPORT", request.param)
    return str(request.param)


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
