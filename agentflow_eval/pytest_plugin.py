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
- **options** for every evaluation of the session, over the tests' own values: run
  request fields (:data:`SESSION_OPTIONS`), each the run command's flag behind
  ``agentflow-``: ``--agentflow-runs N``, ``--agentflow-max-concurrency N``,
  ``--agentflow-trial-timeout-s SECONDS``, ``--agentflow-judge-model MODEL``,
  ``--agentflow-output-dir DIR`` (where run folders go; default ``eval-results``).
- **fixtures**: ``agentflow_settings`` (those options: ``.values``) and
  ``agent_evaluator`` (makes an :class:`~agentflow_eval.AgentEvaluator` for an agent).
- **a failing evaluation** is shown compactly: each case short of the bar with its
  expected tool calls against the failing trials' actual ones, why each fell short, and
  the path of the run's report, instead of a traceback.
- the terminal summary lists each evaluation test's runs: pass rate and report.

Installed, this plugin loads in every pytest session of every project, so it imports
only pytest and the standard library when pytest loads it. The session's settings
(:mod:`agentflow_eval.evaluator_session`) are imported when an ``--agentflow-*`` option is
given or an evaluation test (marked, or asking for a fixture) is set up; the evaluator when
a test uses it. A session of other tests, failing or not, imports nothing else of ours.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from agentflow_eval.evaluator import AgentEvaluator
    from agentflow_eval.evaluator_session import FinishedRun, SessionSettings

__all__ = ["MARKER", "SESSION_OPTIONS"]

MARKER = "agentflow"
_FIXTURES = frozenset({"agent_evaluator", "agentflow_settings"})
_OTHER_ASYNC_MARKERS = ("asyncio", "anyio", "trio")


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return number


def _positive_float(value: str) -> float:
    number = float(value)
    if not 0 < number < float("inf"):
        raise ValueError(f"must be a number above 0, got {value}")
    return number


SESSION_OPTIONS: dict[str, tuple[Callable[[str], Any], str, str]] = {
    "runs": (_positive_int, "N", "trials per case in every evaluation"),
    "max_concurrency": (_positive_int, "N", "trials in flight in every evaluation"),
    "trial_timeout_s": (_positive_float, "SECONDS", "seconds per trial in every evaluation"),
    "judge_model": (str, "MODEL", "LiteLLM model for the LLM judges of every evaluation"),
    "output_dir": (str, "DIR", "folder for the run folders of every evaluation"),
}
"""The run-request fields a session sets for every evaluation, over the tests' own
values and the configs': each is ``--agentflow-`` and the field's name with dashes (the
run command's flag behind ``agentflow-``)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentflow-eval", "agent evaluations (agentflow-eval)")
    for field, (kind, metavar, help) in SESSION_OPTIONS.items():
        names = [f"--agentflow-{field.replace('_', '-')}"]
        if field == "output_dir":
            names.append("--agentflow-output")  # the earlier spelling
        group.addoption(*names, dest=f"agentflow_{field}", type=kind, metavar=metavar, help=help)


class _Plugin:
    """The session's state: its settings and the runs its tests finished."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.runs: list[tuple[str, FinishedRun]] = []
        self.current: pytest.Item | None = None
        self._settings: SessionSettings | None = None
        self._contexts: list[Any] = []

    @property
    def settings(self) -> SessionSettings:
        self.open()
        assert self._settings is not None
        return self._settings

    def open(self) -> None:
        """Apply the settings and listen for finished runs, once: at the first evaluation
        test, or at once when an option is given (the evaluator may be used anywhere)."""
        if self._settings is not None:
            return
        # Imported here, not at the top: the plugin loads in every pytest session of
        # every project, and only one that evaluates needs the settings.
        from agentflow_eval.evaluator_session import (
            SessionSettings,
            on_finished_run,
            session_settings,
        )

        self._settings = SessionSettings(**self.values)
        for context in (session_settings(self._settings), on_finished_run(self._finished)):
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
    values = {field: config.getoption(f"agentflow_{field}") for field in SESSION_OPTIONS}
    if values["output_dir"]:
        values["output_dir"] = str(Path(values["output_dir"]).resolve())
    plugin = _Plugin(values)
    if any(value is not None for value in values.values()):
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
        if _is_evaluation(item):
            plugin.open()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or report.when != "call":
        return
    evaluator = sys.modules.get("agentflow_eval.evaluator")
    if evaluator is None:  # no test has used the evaluator: the error is not its
        return
    error = call.excinfo.value
    if isinstance(error, evaluator.EvaluationFailed):
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
