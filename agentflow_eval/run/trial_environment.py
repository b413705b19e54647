"""One trial's environment, from setup to teardown.

:class:`TrialEnvironment` calls the run's environment function
(:class:`~agentflow_eval.run.environment_factory.EnvironmentFactory`) for the trial and
enters the context manager it returns — an async one in the event loop, a synchronous
one in a worker thread — to get the trial's
:class:`~agentflow_eval.environments.environment.Environment`; after the trial it exits
it. Each step is bounded by the trial timeout.

What the environment's own code does wrong is not the agent's fault: a function that
raises, hangs, returns no context manager or yields something other than an
``Environment``, and a teardown that fails, raise :class:`EnvironmentFailed`, which the
trial records as an *infrastructure* error (:meth:`EnvironmentFailed.trial_error`).

Teardown always runs once setup has succeeded, however the trial ended: after an error
or a timeout, and when the trial is cancelled (Ctrl-C, the run's deadline), even while
it is being set up: a cancellation then waits for setup and teardown to finish (each
within its bound) before it goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from agentflow_eval.environments.environment import Environment, TrialInfo
from agentflow_eval.environments.probes import CheckFunctions, read_probes
from agentflow_eval.models.end_state import EndStateCheck
from agentflow_eval.models.results import EndState, TrialError
from agentflow_eval.run.environment_factory import EnvironmentFactory

__all__ = ["EnvironmentFailed", "TrialEnvironment"]

Step = Literal["setup", "teardown", "capture"]

_TRACEBACK_LINES = 12
_CANCELLED_GRACE_S = 1.0
"""How long a setup or teardown cut off at its bound is given to wind down."""


class EnvironmentFailed(Exception):
    """The environment's own code failed a step of the trial's environment."""

    def __init__(self, spec: str, step: Step, why: str, cause: BaseException | None = None):
        super().__init__(f"environment {spec!r}: {step} failed: {why}")
        self.step = step
        self.traceback = (
            "".join(traceback.format_exception(cause)[-_TRACEBACK_LINES:]) if cause else None
        )

    def trial_error(self) -> TrialError:
        """The trial's error: infrastructure, not the agent's."""
        return TrialError(
            kind="infrastructure",
            type=f"Environment{self.step.capitalize()}Error",
            message=str(self),
            traceback=self.traceback,
        )


@dataclass
class _Settled:
    """How a step ended: its value or error, cut off at its bound, and whether the
    caller was cancelled while it waited."""

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    cancelled: bool = False


async def _settle(work: Coroutine[Any, Any, Any], limit_s: float) -> _Settled:
    """Run ``work`` to its end or to ``limit_s``, through any cancellation of the
    caller (which :attr:`_Settled.cancelled` reports: the caller re-raises it once it
    has done what must be done)."""
    task: asyncio.Future[Any] = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    outcome = _Settled()
    while not task.done():
        remaining = deadline - loop.time()
        if remaining <= 0:
            outcome.timed_out = True
            task.cancel()
            await asyncio.wait([task], timeout=_CANCELLED_GRACE_S)
            return outcome
        try:
            await asyncio.wait([task], timeout=remaining)
        except asyncio.CancelledError:
            outcome.cancelled = True  # the step goes on: what it holds must be let go
    if task.cancelled():
        outcome.error = asyncio.CancelledError()
    elif task.exception() is not None:
        outcome.error = task.exception()
    else:
        outcome.value = task.result()
    return outcome


class TrialEnvironment:
    """Set up, and tear down, the environment of one trial (see the module)::

    environment = TrialEnvironment(factory, trial, limit_s=60)
    env = await environment.set_up()       # None when the run has no environment
    try:
        ...                                # the agent's trial
    finally:
        await environment.tear_down()
    """

    def __init__(
        self, factory: EnvironmentFactory | None, trial: TrialInfo, *, limit_s: float
    ) -> None:
        self.factory = factory
        self.trial = trial
        self.limit_s = limit_s
        self.environment: Environment | None = None
        self._exit: Callable[[], Awaitable[Any]] | None = None

    @property
    def spec(self) -> str:
        return self.factory.spec if self.factory is not None else ""

    async def set_up(self) -> Environment | None:
        """The trial's environment (``None`` without an environment function). Raises
        :class:`EnvironmentFailed`; cancelled meanwhile, it tears down what it set up
        before the cancellation goes on."""
        if self.factory is None:
            return None
        try:
            manager = self.factory.manager(self.trial)
        except Exception as exc:
            raise self._failed("setup", exc) from None
        enter = self._entry(manager)
        settled = await _settle(enter(), self.limit_s)
        entered = settled.error is None and not settled.timed_out
        if settled.cancelled:
            if entered:
                await self._tear_down_quietly()
            raise asyncio.CancelledError
        if settled.timed_out:
            self._exit = None  # it never finished entering: nothing to exit
            raise EnvironmentFailed(
                self.spec, "setup", f"it did not finish within {self.limit_s:g} s"
            )
        if settled.error is not None:
            self._exit = None
            raise self._failed("setup", settled.error)
        if not isinstance(settled.value, Environment):
            await self._tear_down_quietly()
            raise EnvironmentFailed(
                self.spec,
                "setup",
                f"it yielded {type(settled.value).__name__}; yield an "
                "agentflow_eval.Environment (its folder, database, variables, resource)",
            )
        self.environment = settled.value
        return settled.value

    async def capture(
        self, checks: Sequence[EndStateCheck], functions: CheckFunctions
    ) -> EndState | None:
        """What the world looks like now: what the environment's ``capture()``
        records, and what each of ``checks`` finds (in the trial's working directory
        when the run sets up no environment). ``None`` when there is nothing to read:
        no environment and no checks, or an environment that was never set up. Raises
        :class:`EnvironmentFailed` when ``capture()`` fails, or reading takes longer
        than the bound."""
        if self.factory is None and not checks:
            return None
        if self.factory is not None and self.environment is None:
            return None
        environment = self.environment if self.environment is not None else Environment()
        try:
            async with asyncio.timeout(self.limit_s):
                captured = None
                if environment.capture is not None:
                    captured = await _called(environment.capture)
                probes = await read_probes(checks, environment, self.trial.workdir_path, functions)
        except TimeoutError:
            raise EnvironmentFailed(
                self.spec or "(none)", "capture", f"it did not finish within {self.limit_s:g} s"
            ) from None
        except Exception as exc:
            raise self._failed("capture", exc) from None
        return EndState(captured=to_jsonable_python(captured, fallback=repr), probes=probes)

    async def tear_down(self) -> None:
        """Exit what :meth:`set_up` entered (once; nothing when it entered nothing).
        Raises :class:`EnvironmentFailed`; cancelled meanwhile, it finishes first."""
        exit_, self._exit = self._exit, None
        if exit_ is None:
            return
        settled = await _settle(_awaited(exit_), self.limit_s)
        if settled.cancelled:
            raise asyncio.CancelledError
        if settled.timed_out:
            raise EnvironmentFailed(
                self.spec, "teardown", f"it did not finish within {self.limit_s:g} s"
            )
        if settled.error is not None:
            raise self._failed("teardown", settled.error)

    async def _tear_down_quietly(self) -> None:
        # the step that called it reports its own failure
        with contextlib.suppress(EnvironmentFailed):
            await self.tear_down()

    def _entry(self, manager: Any) -> Callable[[], Coroutine[Any, Any, Any]]:
        """How to enter ``manager``; remembers how to exit it."""
        if hasattr(manager, "__aenter__") and hasattr(manager, "__aexit__"):
            self._exit = lambda: manager.__aexit__(None, None, None)

            async def enter_async() -> Any:
                return await manager.__aenter__()

            return enter_async
        if hasattr(manager, "__enter__") and hasattr(manager, "__exit__"):
            threads = self.factory.threads if self.factory is not None else None
            assert threads is not None
            self._exit = lambda: threads.run(manager.__exit__, None, None, None)

            async def enter_sync() -> Any:
                return await threads.run(manager.__enter__)

            return enter_sync
        if inspect.iscoroutine(manager):
            manager.close()
            hint = "decorate it with @contextlib.asynccontextmanager and yield"
        else:
            hint = "decorate it with @contextlib.contextmanager (or asynccontextmanager) and yield"
        raise EnvironmentFailed(
            self.spec,
            "setup",
            f"it returned {type(manager).__name__}, not a context manager: {hint} the "
            "agentflow_eval.Environment",
        )

    def _failed(self, step: Step, exc: BaseException) -> EnvironmentFailed:
        return EnvironmentFailed(self.spec, step, f"{type(exc).__name__}: {exc}", exc)


async def _awaited(fn: Callable[[], Awaitable[Any]]) -> Any:
    return await fn()


async def _called(fn: Callable[[], Any]) -> Any:
    """``fn()`` awaited when it is async, else in a worker thread."""
    if inspect.iscoroutinefunction(fn):
        return await fn()
    result = await asyncio.to_thread(fn)
    return await result if inspect.isawaitable(result) else result
