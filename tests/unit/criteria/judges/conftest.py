"""Judge tests: one scripted OpenAI-compatible server per module (starting and stopping
one costs ~0.5 s), reset for each test; and the judge API key in the environment."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from judge_helpers import KEY_ENV

from agentflow_eval.testing import ScriptedOpenAIServer


@pytest.fixture(autouse=True)
def judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "test")


@pytest.fixture
def server(shared_server: ScriptedOpenAIServer) -> Iterator[ScriptedOpenAIServer]:
    """The module's server with no handler and no recorded requests. A test must use up
    the replies it pushes; a leftover one fails it, so nothing leaks into the next test."""
    shared_server.handler = None
    shared_server.requests.clear()
    yield shared_server
    shared_server.handler = None
    try:
        _assert_script_used_up(shared_server)
    finally:
        shared_server.requests.clear()


def _assert_script_used_up(server: ScriptedOpenAIServer) -> None:
    """With an empty script and no handler the server answers 400; any other answer
    was a scripted reply still queued (drained here, so the next test starts clean)."""
    body = json.dumps({"model": "probe", "messages": []}).encode()
    leftovers = 0
    while leftovers < 100:
        request = urllib.request.Request(
            f"{server.url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=5):
                pass
        except urllib.error.HTTPError as exc:
            if exc.code == 400:
                break
        leftovers += 1
    if leftovers:
        raise AssertionError(f"the test left {leftovers} scripted replies unused")
