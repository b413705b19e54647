"""How an eval set or a config names the environment each trial gets: a function of
one's own, named as agents are (``package.module:attr`` or ``path/to/file.py:attr``),
with keyword options for it. Written as the spec alone, or as an object::

    "environment": "examples.order_desk.environment:order_database"
    "environment": {"function": "envs.py:seeded_folder", "options": {"files": "seed/"}}
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from agentflow_eval.models.file_model import FileModel

__all__ = ["EnvironmentSpec"]


class EnvironmentSpec(FileModel):
    """The environment every trial gets: the function that sets one up and tears it
    down (a context manager, sync or async, yielding an ``agentflow_eval.Environment``),
    and its options."""

    function: str
    """``package.module:attr`` or ``path/to/file.py:attr`` (relative to the current
    directory)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the function."""

    @model_validator(mode="before")
    @classmethod
    def _spec_alone(cls, data: Any) -> Any:
        return {"function": data} if isinstance(data, str) else data

    @field_validator("function")
    @classmethod
    def _module_and_attribute(cls, value: str) -> str:
        target, sep, attr = value.strip().rpartition(":")
        if not sep or not target.strip() or not attr.strip():
            raise ValueError(f"{value!r} is not 'package.module:attr' or 'path/to/file.py:attr'")
        return value.strip()
