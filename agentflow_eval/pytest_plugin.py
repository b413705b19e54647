"""agentflow-eval's pytest plugin, loaded by pytest whenever agentflow-eval is installed
(entry point ``pytest11``).

Evaluation tests::

    import pytest
    from agentflow_eval import AgentEvaluator

    @pytest.mark.agentflow
    async def test_weather_agent():
        await AgentEvaluator.evaluate_file(
            "my_agent:agent", "evals/weather.evalset.json", min_pass_rate=0.8
        )

- **async tests run as they are**: a coroutine test marked ``agentflow`` (or asking for
  one of the fixtures below) runs on a fresh event loop, with no pytest-asyncio or
  anyio setting needed. Where such a plugin already runs the test, it is left to it.
- **options** for every evaluation of the session, over the tests' own values:
  ``--agentflow-runs N``, ``--agentflow-max-concurrency N``,
  ``--agentflow-judge-model MODEL``, ``--agentflow-output DIR`` (where run folders go;
  default ``eval-results``).
- **fixtures**: ``agentflow_settings`` (those options, resolved) and
  ``agent_evaluator`` (makes an :class:`~agentflow_eval.AgentEvaluator` for an agent).
- **a failing evaluation** is shown compactly: each case short of the bar with its
  expected tool calls against the failing trials' actual ones, why each fell short, and
  the path of the run's report, instead of a traceback.
- the terminal summary lists each evaluation test's runs: pass rate and report.

This module imports only pytest and the standard library when pytest loads it; the
evaluator is imported when a test uses it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from agentflow_eval.evaluator import AgentEvaluator
    from agentflow_eval.evaluator_session import FinishedRun, SessionSettings

__all__ = ["MARKER"]

MARKER = "agentflow"
_FIXTURES = frozenset({"agent_evaluator", "agentflow_settings"})
_OTHER_ASYNC_MARKERS = ("asyncio", "anyio", "trio")


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return number


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentflow-eval", "agent evaluations (agentflow-eval)")
    group.addoption(
        "--agentflow-runs",
        type=_positive_int,
        metavar="N",
        help="trials per case in every evaluation (over the tests' and configs' own)",
    )
    group.addoption(
        "--agentflow-max-concurrency",
        type=_positive_int,
        metavar="N",
        help="trials in flight in every evaluation",
    )
    group.addoption(
        "--agentflow-judge-model",
        metavar="MODEL",
        help="LiteLLM model for the LLM judges of every evaluation",
    )
    group.addoption(
        "--agentflow-output",
        metavar="DIR",
        help="folder for the run folders of every evaluation (default: eval-results)",
    )


class _Plugin:
    """The session's state: its settings and the runs its tests finished."""

    def __init__(self, settings: SessionSettings) -> None:
        self.settings = settings
        self.runs: list[tuple[str, FinishedRun]] = []
        self.current: pytest.Item | None = None
        self._contexts: list[Any] = []

    def open(self) -> None:
        from agentflow_eval.evaluator_session import on_finished_run, session_settings

        for context in (session_settings(self.settings), on_finished_run(self._finished)):
            context.__enter__()
            self._contexts.append(context)

    def close(self) -> None:
        while self._contexts:
            self._contexts.pop().__exit__(None, None, None)

    def _finished(self, finished: FinishedRun) -> None:
        if self.current is not None and _is_evaluation(self.current):
            self.runs.append((self.current.nodeid, finished))


_PLUGIN = pytest.StashKey[_Plugin]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: an agent evaluation (agentflow-eval): async or not, it runs without "
        "extra settings, and a failing evaluation is reported case by case",
    )
    from agentflow_eval.evaluator_session import SessionSettings

    output = config.getoption("agentflow_output")
    plugin = _Plugin(
        SessionSettings(
            runs=config.getoption("agentflow_runs"),
            max_concurrency=config.getoption("agentflow_max_concurrency"),
            judge_model=config.getoption("agentflow_judge_model"),
            output_dir=Path(output).resolve() if output else None,
        )
    )
    plugin.open()
    config.stash[_PLUGIN] = plugin


def pytest_unconfigure(config: pytest.Config) -> None:
    plugin = config.stash.get(_PLUGIN, None)
    if plugin is not None:
        plugin.close()


def _is_evaluation(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker(MARKER) is not None or bool(names & _FIXTURES)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a coroutine evaluation test on a fresh event loop, unless an async plugin
    runs it (it then hands pytest a plain function, or the test carries its marker)."""
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or not _is_evaluation(pyfuncitem):
        return None
    if any(pyfuncitem.get_closest_marker(name) for name in _OTHER_ASYNC_MARKERS):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(function(**arguments))
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    plugin = item.config.stash.get(_PLUGIN, None)
    if plugin is not None:
        plugin.current = item


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or report.when != "call":
        return
    from agentflow_eval.evaluator import EvaluationFailed

    error = call.excinfo.value
    if isinstance(error, EvaluationFailed):
        path, line, _ = item.location
        report.longrepr = f"{error}\n({path}:{(line or 0) + 1}: {item.name})"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    plugin = config.stash.get(_PLUGIN, None)
    if plugin is None or not plugin.runs:
        return
    terminalreporter.section("agentflow-eval")
    for nodeid, finished in plugin.runs:
        totals = finished.run.totals
        terminalreporter.write_line(
            f"{nodeid}: {finished.run.eval_set_id} "
            f"{totals.passed}/{totals.trials} passed ({totals.pass_rate:.0%}) · "
            f"report {finished.report}"
        )


@pytest.fixture
def agentflow_settings(request: pytest.FixtureRequest) -> SessionSettings:
    """This session's evaluation settings (from the ``--agentflow-*`` options)."""
    return request.config.stash[_PLUGIN].settings


@pytest.fixture
def agent_evaluator(agentflow_settings: SessionSettings) -> Callable[..., AgentEvaluator]:
    """``agent_evaluator(agent, config=None, **options)``: an
    :class:`~agentflow_eval.AgentEvaluator` for ``agent`` (an agent object or a spec
    such as ``"my_agent:agent"``), its runs under the session's settings."""
    from agentflow_eval.evaluator import AgentEvaluator

    def make(agent: Any, config: Any = None, **options: Any) -> AgentEvaluator:
        return AgentEvaluator(agent, config, **options)

    return make
