"""Running one trial: a fresh session in its own temporary directory (and its own
environment and MCP servers, when the run sets them up), every user turn sent in order,
the trajectory recorded, and any failure kept as data.

An agent that raises, exhausts its steps, hangs past the timeout or blocks the event loop
(see :mod:`agentflow_eval.run.loop_watchdog`) fails this trial only: :func:`run_trial`
never raises for the agent's sake. The agent's code (its session's start, every turn,
its close) runs under a timeout it cannot refuse
(:mod:`agentflow_eval.run.abandonable`): cancelled at the timeout, abandoned if it is
still going :attr:`TrialSettings.cancel_grace_s` later, and timed out either way.

A model call the provider failed after its retries
(:class:`~agentflow_eval.llm.retry.ProviderUnavailable`, even wrapped in the agent's own
exception) makes the trial an *infrastructure* error, which pass rates leave out by
default. Refused credentials (:class:`~agentflow_eval.llm.retry.ProviderAuthError`) are
the one failure that is raised: every later call would be refused too, so the run stops.

Every string of the returned trial has been through the redactor
(:mod:`agentflow_eval.redaction`): keys quoted by an error body, an exception or a tool
result never reach the trials file or anything made from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from agentflow_eval.agents.base import (
    AgentSession,
    AgentUnderTest,
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
    bind_session,
)
from agentflow_eval.agents.tool_gate import MockNotReached, TrialTools
from agentflow_eval.agents.tool_simulator import SimulationCache, ToolSimulator, initial_state
from agentflow_eval.environments.environment import TrialInfo
from agentflow_eval.environments.mcp import McpServerFailed, McpTool, started_servers
from agentflow_eval.environments.probes import CheckFunctions
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.retry import (
    Fault,
    ProviderAuthError,
    ProviderUnavailable,
    auth_error_in,
    provider_error_in,
    provider_fault_in,
)
from agentflow_eval.models import defaults
from agentflow_eval.models.evalset import EvalCase, SessionInput
from agentflow_eval.models.history import chat_messages
from agentflow_eval.models.injection import InjectionPayload
from agentflow_eval.models.mcp_servers import McpServerSpec
from agentflow_eval.models.results import EndState, MessageEvent, Trial, TrialError, Turn
from agentflow_eval.models.tool_mocks import ToolMock, UnmockedPolicy
from agentflow_eval.redaction import might_contain_secret, redact_data
from agentflow_eval.run.abandonable import Overran, run_abandonable
from agentflow_eval.run.environment_factory import EnvironmentFactory
from agentflow_eval.run.loop_watchdog import EventLoopBlocked, LoopBlock, LoopWatchdog
from agentflow_eval.run.sigint import SigintSeen
from agentflow_eval.run.trial_environment import EnvironmentFailed, TrialEnvironment
from agentflow_eval.run.user_turns import UserTurnSource

__all__ = ["TrialSettings", "run_trial"]

_CLOSE_TIMEOUT_S = 10.0
"""How long a session's ``aclose`` may take (then its grace, then it is abandoned)."""


@dataclass
class _AgentCode:
    """What the agent's code left for its trial to record: its session, and how it
    blocked the event loop (if it did)."""

    session: AgentSession | None = None
    block: LoopBlock | None = None


@dataclass(frozen=True)
class TrialSettings:
    """How each trial runs."""

    timeout_s: float = defaults.TRIAL_TIMEOUT_S
    cancel_grace_s: float = defaults.CANCEL_GRACE_S
    """How long an agent past its timeout may take to stop once cancelled before it is
    abandoned (:mod:`agentflow_eval.run.abandonable`)."""
    workroot: Path | None = None
    keep_workdirs: bool = False
    tool_mocks: tuple[ToolMock, ...] = ()
    """The config's tool mocks (every case)."""
    unmocked_tools: UnmockedPolicy = "run"
    """The config's policy for calls no mock answers (a case may say otherwise)."""
    environment: EnvironmentFactory | None = None
    """The run's environment function: each trial gets an environment of its own."""
    check_functions: CheckFunctions = field(default_factory=dict)
    """The functions the cases' end-state checks call, by spec."""
    mcp_servers: tuple[McpServerSpec, ...] = ()
    """The config's MCP servers each trial starts for itself (``scope: "trial"``)."""
    shared_mcp_tools: tuple[McpTool, ...] = ()
    """The tools of the servers the trial stage started once for the run."""
    injection_payloads: Mapping[str, InjectionPayload] = field(default_factory=dict)
    """The payloads a mock's ``inject`` names by id: the package's and the config's
    (checked when the run was planned)."""
    simulation_cache: SimulationCache | None = None
    """Where simulated tools' replies are kept (the run's trials share it)."""

    def tools_of(
        self, case: EvalCase, trial_index: int, simulator: ToolSimulator | None = None
    ) -> TrialTools:
        """The tool mocks of one trial of ``case`` (``simulator``: its simulated world)."""
        return TrialTools(
            config_mocks=self._resolved(self.tool_mocks),
            case_mocks=self._resolved(case.tool_mocks),
            unmocked=case.unmocked_tools or self.unmocked_tools,
            seed_key=f"{case.eval_id}#{trial_index}",
            simulator=simulator,
        )

    def simulator_for(self, case: EvalCase, models: ModelClient) -> ToolSimulator | None:
        """A fresh simulated world for one trial of ``case``, or ``None`` when no mock
        reaching it simulates its tool."""
        mocks = [
            *(m for inv in case.conversation for m in inv.tool_mocks),
            *case.tool_mocks,
            *self.tool_mocks,
        ]
        specs = [mock.simulate for mock in mocks if mock.simulate is not None]
        if not specs:
            return None
        return ToolSimulator(
            models,
            state=initial_state(specs),
            cache=self.simulation_cache,
            loop=asyncio.get_running_loop(),
        )

    def turn_mocks_of(self, case: EvalCase) -> dict[str, tuple[ToolMock, ...]]:
        """Each turn's own tool mocks, by invocation id."""
        return {inv.invocation_id: self._resolved(inv.tool_mocks) for inv in case.conversation}

    def _resolved(self, mocks: Sequence[ToolMock]) -> tuple[ToolMock, ...]:
        # the gate answers with a payload's text, so a team's payload named by id is
        # looked up here, where the config's payloads are known
        return tuple(mock.resolved(self.injection_payloads) for mock in mocks)


async def run_trial(
    agent: AgentUnderTest,
    case: EvalCase,
    trial_index: int,
    settings: TrialSettings,
    turn_source: UserTurnSource,
    models: ModelClient,
    *,
    watchdog: LoopWatchdog | None = None,
    sigint: SigintSeen | None = None,
) -> Trial:
    """Run ``case`` once against a fresh session of ``agent``, taking user turns from
    ``turn_source`` and giving the session ``models`` for its model calls; return what
    happened. ``watchdog`` (running for the whole trial stage) stops an agent that blocks
    the event loop. A ``KeyboardInterrupt`` or ``SystemExit`` the agent's code raises is
    the trial's error; a ``KeyboardInterrupt`` from a Ctrl-C ``sigint`` saw stops the run
    (without ``sigint`` every one does).

    With an environment function in ``settings``, the trial's own environment is set up
    before the session starts and torn down after it ends, whatever ended it
    (:mod:`agentflow_eval.run.trial_environment`); a setup or teardown that fails makes
    the trial an infrastructure error. When the agent is done, and before the
    environment is torn down, the world is read into the trial's ``end_state``: what
    the environment captures of itself, and what the case's end-state checks find.

    The config's ``trial``-scoped MCP servers (``settings.mcp_servers``) are started
    after the environment, their tools (with the run's shared ones) handed to the session
    as ``SessionContext.mcp_tools``, and stopped when the session ends, however it
    ended (:mod:`agentflow_eval.environments.mcp`); one that does not start makes the
    trial an infrastructure error.

    Raises :class:`~agentflow_eval.llm.retry.ProviderAuthError` when a model call's
    credentials were refused (the run cannot go on); nothing else."""
    started_at = datetime.now(UTC)
    start = time.perf_counter()
    workroot = settings.workroot or Path(tempfile.gettempdir())
    # a unique name, reserved not created: the directory appears when a tool first asks
    workdir = (workroot / f"trial-{trial_index}-{uuid.uuid4().hex[:12]}").resolve()
    environment = TrialEnvironment(
        settings.environment, TrialInfo(case, trial_index, workdir), limit_s=settings.timeout_s
    )
    turns: list[Turn] = []
    simulator: ToolSimulator | None = None
    final_state: dict[str, Any] | None = None
    end_state: EndState | None = None
    try:
        try:
            env = await environment.set_up()
        except EnvironmentFailed as failed:
            error: TrialError | None = failed.trial_error()
        else:
            variables = env.variables if env is not None else {}
            try:
                # the trial's own MCP servers: started after its environment (whose
                # variables they are given), stopped before it is torn down
                async with started_servers(settings.mcp_servers, variables=variables) as own:
                    context = SessionContext(
                        case_id=case.eval_id,
                        trial_index=trial_index,
                        session_id=f"{case.eval_id}#{trial_index}",
                        session_input=case.session_input or SessionInput(),
                        workdir_path=workdir,
                        models=models,
                        history=chat_messages(case.history),
                        environment=env,
                        mcp_tools=(*settings.shared_mcp_tools, *own),
                    )
                    simulator = settings.simulator_for(case, models)
                    error, final_state = await _run_session(
                        agent,
                        context,
                        case,
                        settings,
                        turn_source,
                        turns,
                        watchdog,
                        sigint,
                        simulator,
                    )
            except McpServerFailed as failed:  # not the agent's fault: the infrastructure's
                error = TrialError(
                    kind="infrastructure", type="McpServerError", message=str(failed)
                )
            try:  # the world as the agent left it, before it is torn down
                end_state = await environment.capture(case.end_state, settings.check_functions)
            except EnvironmentFailed as failed:
                error = _with_environment_failure(error, failed)
            end_state = _with_simulated_world(end_state, simulator)
        try:
            await environment.tear_down()
        except EnvironmentFailed as failed:
            error = _with_environment_failure(error, failed)
    except BaseException:
        with contextlib.suppress(EnvironmentFailed):
            await environment.tear_down()  # the run stops: what the trial set up goes too
        raise
    finally:
        if not settings.keep_workdirs and workdir.exists():
            shutil.rmtree(workdir, ignore_errors=True)
    trial = Trial(
        case_id=case.eval_id,
        trial_index=trial_index,
        turns=turns,
        error=error,
        started_at=started_at,
        duration_ms=(time.perf_counter() - start) * 1000,
        workdir=str(workdir) if settings.keep_workdirs and workdir.exists() else None,
        final_session_state=final_state,
        end_state=end_state,
        simulated_state=simulator.state if simulator is not None else None,
    )
    return redacted(trial)


def _with_simulated_world(
    end_state: EndState | None, simulator: ToolSimulator | None
) -> EndState | None:
    """Where no environment captured the world, the simulated tools' world is what was
    captured: a case's ``json_path`` checks judge what the simulated calls left."""
    if simulator is None or end_state is None or end_state.captured is not None:
        return end_state
    return end_state.model_copy(update={"captured": simulator.state})


async def _run_session(
    agent: AgentUnderTest,
    context: SessionContext,
    case: EvalCase,
    settings: TrialSettings,
    turn_source: UserTurnSource,
    turns: list[Turn],
    watchdog: LoopWatchdog | None,
    sigint: SigintSeen | None,
    simulator: ToolSimulator | None = None,
) -> tuple[TrialError | None, dict[str, Any] | None]:
    """The agent's part of the trial: a fresh session answering every user turn into
    ``turns``, under the trial timeout; its error (``None`` when it finished) and its
    final state."""
    trial_index = context.trial_index
    error: TrialError | None = None
    final_state: dict[str, Any] | None = None
    agent_code = _AgentCode()
    guard = (
        watchdog.guard((case.eval_id, trial_index))
        if watchdog is not None
        else contextlib.nullcontext(None)
    )

    async def attempt() -> None:
        with bind_session(context), guard as watched:
            try:
                agent_code.session = await agent.start_session(context)
                await _converse(
                    agent_code.session,
                    turn_source,
                    turns,
                    settings.tools_of(case, trial_index, simulator),
                    settings.turn_mocks_of(case),
                )
            except asyncio.CancelledError:
                if watched is None or watched.block is None:
                    raise
                _uncancel_own()  # the watchdog's cancellation, taken back
            except EventLoopBlocked:
                if watched is None or watched.block is None:
                    raise
            finally:
                agent_code.block = watched.block if watched is not None else None

    try:
        try:
            await run_abandonable(
                attempt(), timeout_s=settings.timeout_s, grace_s=settings.cancel_grace_s
            )
        except Overran:
            if agent_code.block is None:
                raise
        if agent_code.block is not None:
            # however the agent's code ended, it stalled every trial beside it
            error = _blocked_error(agent, agent_code.block, settings)
    except Overran as overran:
        error = TrialError(kind="timeout", type="TimeoutError", message=f"trial {overran}")
    except TimeoutError:
        error = TrialError(
            kind="timeout",
            type="TimeoutError",
            message=f"trial did not finish within {settings.timeout_s:g} s",
        )
    except MaxStepsExceeded as exc:
        error = TrialError(kind="max_steps", type=type(exc).__name__, message=str(exc))
    except KeyboardInterrupt as exc:
        if sigint is None or sigint.received:
            raise  # the user's Ctrl-C: the run stops
        error = _exception_error(exc)  # the agent's own: its trial failed
    except SystemExit as exc:  # a library calling sys.exit: the trial failed, not the run
        error = _exception_error(exc)
    except Exception as exc:
        refused = auth_error_in(exc)
        if refused is not None:
            raise refused from None
        fault = provider_fault_in(exc, who=f"agent {agent.name}")
        if fault is not None and fault.kind == "auth":
            # a framework's own client was refused the key: the run cannot go on either
            raise ProviderAuthError(fault.reason, attempts=1) from None
        error = _exception_error(exc, fault)
    finally:
        session = agent_code.session
        if session is not None:
            final_state = _session_state(session)
            await _close_quietly(session, settings.cancel_grace_s)
    return error, final_state


def _with_environment_failure(error: TrialError | None, failed: EnvironmentFailed) -> TrialError:
    """The trial's error once its environment failed after setup (reading its state,
    tearing it down): that failure (the infrastructure's) when the trial had none; else
    the trial's own, saying so too."""
    if error is None:
        return failed.trial_error()
    return error.model_copy(update={"message": f"{error.message} (and then {failed})"})


def redacted(trial: Trial) -> Trial:
    """``trial`` with every string in it redacted (answers, tool calls and results,
    errors and tracebacks); the same object when nothing in it could be a secret."""
    if not might_contain_secret(trial.model_dump_json()):
        return trial
    return Trial.model_validate(redact_data(trial.model_dump(mode="json")))


def _session_state(session: AgentSession) -> dict[str, Any] | None:
    """A copy of the session's ``state`` dict, JSON-ready (it goes into trials.jsonl), or
    ``None`` when the session exposes none."""
    state = getattr(session, "state", None)
    if not isinstance(state, dict):
        return None
    jsonable: dict[str, Any] = to_jsonable_python(state, fallback=repr)
    return jsonable


async def _converse(
    session: AgentSession,
    source: UserTurnSource,
    turns: list[Turn],
    tools: TrialTools,
    turn_mocks: Mapping[str, Sequence[ToolMock]],
) -> None:
    """Send each user turn, its tool calls going through the turn's gate of ``tools``;
    append a Turn as soon as it starts so a failure mid-turn still leaves the tool calls
    made so far in the record."""
    while (nxt := await source.next_turn(turns)) is not None:
        invocation_id, message = nxt
        recorder = TrajectoryRecorder(
            tools.for_turn(invocation_id, turn_mocks.get(invocation_id) or ())
        )
        turn = Turn(invocation_id=invocation_id, user_text=message.text)
        turn.events = recorder.events  # the turn holds what happened so far, whatever ends it
        turns.append(turn)
        try:
            turn.final_response = await session.respond(message, recorder)
        finally:
            turn.latency_ms = recorder.elapsed_ms()
        unreached = recorder.tools.unreached(recorder.tool_calls)
        if unreached:  # a mocked tool's own code ran: the trial cannot stand as hermetic
            raise MockNotReached(unreached)
        if turn.final_response is not None:
            recorder.add(MessageEvent(text=turn.final_response, final=True))


def _exception_error(exc: BaseException, fault: Fault | None = None) -> TrialError:
    lines = traceback.format_exception(exc)
    provider = provider_error_in(exc)
    if isinstance(provider, ProviderUnavailable):
        # the provider's fault after every retry, even if the agent wrapped it
        return TrialError(
            kind="infrastructure",
            type=type(provider).__name__,
            message=provider.reason,
            traceback="".join(lines[-12:]),
        )
    if fault is not None and fault.transient:
        # a framework's own model client gave up on the provider (after its retries)
        return TrialError(
            kind="infrastructure",
            type=type(exc).__name__,
            message=fault.reason,
            traceback="".join(lines[-12:]),
        )
    return TrialError(
        kind="exception",
        type=type(exc).__name__,
        message=str(exc) or type(exc).__name__,
        traceback="".join(lines[-12:]),
    )


def _blocked_error(agent: AgentUnderTest, block: LoopBlock, settings: TrialSettings) -> TrialError:
    where = f" in {block.where}" if block.where else ""
    how = "stopped" if block.interrupted else f"stopped after {block.seconds:.1f} s"
    return TrialError(
        kind="timeout",
        type="EventLoopBlocked",
        message=(
            f"agent {agent.name!r} blocked the event loop{where} for over "
            f"{min(block.seconds, settings.timeout_s):.1f} s and was {how}: an async agent must "
            "not make blocking calls (time.sleep, synchronous I/O); await them, or make the "
            "agent a plain function (it then runs in a worker thread)"
        ),
    )


def _uncancel_own() -> None:
    """Take back the one cancellation the watchdog asked for; one from anyone else
    stands."""
    task = asyncio.current_task()
    if task is not None and task.uncancel() > 0:
        raise asyncio.CancelledError


async def _close_quietly(session: AgentSession, grace_s: float) -> None:
    # closing is best effort: the trial's verdict is already recorded
    with contextlib.suppress(Exception):
        await run_abandonable(session.aclose(), timeout_s=_CLOSE_TIMEOUT_S, grace_s=grace_s)
