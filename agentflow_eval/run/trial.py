"""Running one trial: a fresh session in its own temporary directory, every user turn
sent in order, the trajectory recorded, and any failure kept as data.

An agent that raises, exhausts its steps or hangs past the timeout fails this trial
only: :func:`run_trial` never raises for the agent's sake.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass
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
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.evalset import EvalCase, SessionInput
from agentflow_eval.models.results import Trial, TrialError, Turn
from agentflow_eval.run import defaults
from agentflow_eval.run.user_turns import UserTurnSource

__all__ = ["TrialSettings", "run_trial"]


@dataclass(frozen=True)
class TrialSettings:
    """How each trial runs."""

    timeout_s: float = defaults.TRIAL_TIMEOUT_S
    workroot: Path | None = None
    keep_workdirs: bool = False


async def run_trial(
    agent: AgentUnderTest,
    case: EvalCase,
    trial_index: int,
    settings: TrialSettings,
    turn_source: UserTurnSource,
    models: ModelClient,
) -> Trial:
    """Run ``case`` once against a fresh session of ``agent``, taking user turns from
    ``turn_source`` and giving the session ``models`` for its model calls; return what
    happened."""
    started_at = datetime.now(UTC)
    start = time.perf_counter()
    workroot = settings.workroot or Path(tempfile.gettempdir())
    # a unique name, reserved not created: the directory appears when a tool first asks
    workdir = (workroot / f"trial-{trial_index}-{uuid.uuid4().hex[:12]}").resolve()
    context = SessionContext(
        case_id=case.eval_id,
        trial_index=trial_index,
        session_id=f"{case.eval_id}#{trial_index}",
        session_input=case.session_input or SessionInput(),
        workdir_path=workdir,
        models=models,
    )
    turns: list[Turn] = []
    error: TrialError | None = None
    session: AgentSession | None = None
    final_state: dict[str, Any] | None = None
    try:
        with bind_session(context):
            async with asyncio.timeout(settings.timeout_s):
                session = await agent.start_session(context)
                await _converse(session, turn_source, turns)
    except TimeoutError:
        error = TrialError(
            kind="timeout",
            type="TimeoutError",
            message=f"trial did not finish within {settings.timeout_s:g} s",
        )
    except MaxStepsExceeded as exc:
        error = TrialError(kind="max_steps", type=type(exc).__name__, message=str(exc))
    except Exception as exc:
        error = _exception_error(exc)
    finally:
        if session is not None:
            final_state = _session_state(session)
            await _close_quietly(session)
        if not settings.keep_workdirs and workdir.exists():
            shutil.rmtree(workdir, ignore_errors=True)
    return Trial(
        case_id=case.eval_id,
        trial_index=trial_index,
        turns=turns,
        error=error,
        started_at=started_at,
        duration_ms=(time.perf_counter() - start) * 1000,
        workdir=str(workdir) if settings.keep_workdirs and workdir.exists() else None,
        final_session_state=final_state,
    )


def _session_state(session: AgentSession) -> dict[str, Any] | None:
    """A copy of the session's ``state`` dict, JSON-ready (it goes into trials.jsonl), or
    ``None`` when the session exposes none."""
    state = getattr(session, "state", None)
    if not isinstance(state, dict):
        return None
    return to_jsonable_python(state, fallback=repr)


async def _converse(session: AgentSession, source: UserTurnSource, turns: list[Turn]) -> None:
    """Send each user turn; append a Turn as soon as it starts so a failure mid-turn still
    leaves the tool calls made so far in the record."""
    while (nxt := await source.next_turn(turns)) is not None:
        invocation_id, message = nxt
        recorder = TrajectoryRecorder()
        turn = Turn(invocation_id=invocation_id, user_text=message.text)
        turn.tool_calls = recorder.tool_calls
        turn.intermediate_responses = recorder.intermediate_responses
        turn.usage = recorder.usage_total
        turns.append(turn)
        start = time.perf_counter()
        try:
            turn.final_response = await session.respond(message, recorder)
        finally:
            turn.latency_ms = (time.perf_counter() - start) * 1000


def _exception_error(exc: BaseException) -> TrialError:
    lines = traceback.format_exception(exc)
    return TrialError(
        kind="exception",
        type=type(exc).__name__,
        message=str(exc) or type(exc).__name__,
        traceback="".join(lines[-12:]),
    )


async def _close_quietly(session: AgentSession) -> None:
    # closing is best effort: the trial's verdict is already recorded
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.aclose(), timeout=10)
