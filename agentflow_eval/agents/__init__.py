"""Agents under test: the protocol and its adapters."""

from agentflow_eval.agents.base import (
    AgentSession,
    AgentUnderTest,
    MaxStepsExceeded,
    SessionContext,
    TrajectoryRecorder,
    current_session,
    trial_workdir,
)
from agentflow_eval.agents.http import HttpAgent
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.agents.python import PythonAgent

__all__ = [
    "AgentLoadError",
    "AgentSession",
    "AgentUnderTest",
    "HttpAgent",
    "LiteLLMAgent",
    "MaxStepsExceeded",
    "PythonAgent",
    "SessionContext",
    "TrajectoryRecorder",
    "current_session",
    "load_agent",
    "trial_workdir",
]
