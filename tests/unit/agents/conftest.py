"""Fixtures for the agent adapter tests: fresh session contexts, bound like a trial."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import SessionContext, bind_session
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.evalset import SessionInput

MakeContext = Callable[..., SessionContext]


@pytest.fixture
def make_context(tmp_path: Path) -> MakeContext:
    """Build a SessionContext with its own workdir under tmp_path."""

    def make(
        case_id: str = "case", trial_index: int = 0, state: dict[str, Any] | None = None
    ) -> SessionContext:
        workdir = tmp_path / f"{case_id}-{trial_index}"
        workdir.mkdir(parents=True, exist_ok=True)
        return SessionContext(
            case_id=case_id,
            trial_index=trial_index,
            session_id=f"{case_id}-{trial_index}-session",
            session_input=SessionInput(state=state or {}),
            workdir_path=workdir,
            # tagged with the trial, as the trial stage gives a session its client
            models=ModelClient().tagged(case=case_id, trial=str(trial_index)),
        )

    return make


@pytest.fixture
def context(make_context: MakeContext) -> Iterator[SessionContext]:
    """A session context bound as the current trial (as the trial runner does)."""
    ctx = make_context()
    with bind_session(ctx):
        yield ctx
