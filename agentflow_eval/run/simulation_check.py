"""Simulated tools checked before a run: a simulated tool is answered where a call is
awaited (the built-in LiteLLM loop, a Python agent's ``recorder.call_tool`` and
``acall_tool``); a framework's own tool hook asks the gate synchronously, where no model
can be called, so an agent of another kind refuses a case with one, in one line."""

from __future__ import annotations

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.run.inputs import RunInputs

__all__ = ["check_agent_simulates"]


def check_agent_simulates(agent: object, inputs: RunInputs) -> None:
    """Raise :class:`EvalFileError` naming the first mock that ``simulate``s a tool the
    agent cannot have simulated."""
    if isinstance(agent, PythonAgent | LiteLLMAgent):
        return
    name = getattr(agent, "name", type(agent).__name__)
    why = (
        f"agent {name!r} cannot have its tools simulated (only the LiteLLM agent and Python "
        "agents can): give the mock a result instead"
    )
    for i, mock in enumerate(inputs.config.tool_mocks):
        if mock.simulate is not None:
            raise EvalFileError(
                inputs.config_path or "the config", why, field=f"tool_mocks[{i}].simulate"
            )
    for case in inputs.eval_set.eval_cases:
        located = [(f"tool_mocks[{i}]", m) for i, m in enumerate(case.tool_mocks)]
        for t, turn in enumerate(case.conversation):
            located += [
                (f"conversation[{t}].tool_mocks[{i}]", m) for i, m in enumerate(turn.tool_mocks)
            ]
        for where, mock in located:
            if mock.simulate is not None:
                raise EvalFileError(
                    inputs.evalset_path or inputs.eval_set.eval_set_id,
                    why,
                    case_id=case.eval_id,
                    field=f"{where}.simulate",
                )
