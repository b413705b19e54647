"""A simulated tool, as files write it: where no real service exists, a tool mock can
answer each call by asking a model, given the tool's description, the state of the
simulated world so far and the call (Google ADK's environment simulation does the same).

The simulated tools of a trial share one state: it starts as the union of their
``state`` objects, each call's answer gives the state after it, and the trial records
where it ended (``Trial.simulated_state``). A reply is asked with the mock's ``seed`` and
``temperature`` and cached by everything that shaped it, so a rerun answers alike and a
prompt is paid for once.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agentflow_eval.models.file_model import FileModel

__all__ = ["SimulatedTool"]


class SimulatedTool(FileModel):
    """How a tool mock answers by simulation (see the module)."""

    description: str = Field(min_length=1)
    """What the tool does and what it returns, as a service's documentation would say."""
    model: str = "gpt-4o-mini"
    """The LiteLLM model that plays the tool."""
    state: dict[str, Any] = Field(default_factory=dict)
    """What the simulated world holds before the first call (merged with the other
    simulated tools' states of the trial; the first to give a key wins)."""
    seed: int = 0
    """Sent with every request, and part of the cache key."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """The model's temperature."""
    api_base: str | None = None
    """Where the model is served, when not its provider's default."""
    api_key_env: str | None = None
    """The environment variable holding the model's key."""
