"""What every criterion's options model starts from: the common part of a config entry
(threshold; ``function`` and ``options`` for a criterion of one's own) and Google ADK's
``include_intermediate_responses_in_final``, which ADK accepts on every criterion.

A built-in criterion's options model subclasses :class:`CriterionOptions` with exactly
the fields it reads, and is named in the criterion's declaration
(:func:`agentflow_eval.criteria.registry.criterion`). A config entry with ``function`` is
read by :class:`CriterionOptions` itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agentflow_eval.models.config import CriterionConfig

__all__ = ["CriterionOptions", "lower_case"]


class CriterionOptions(CriterionConfig):
    """Options of a criterion: its threshold, and nothing it does not read (unknown keys
    are refused, with a "did you mean")."""

    model_config = CriterionConfig.model_config | {"extra": "forbid"}

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """A trial passes the criterion at score >= threshold, a score in [0, 1] (each
    criterion has a default)."""

    include_intermediate_responses_in_final: bool = False
    """Judge each turn's intermediate responses followed by its final one, on both the
    agent's and the expected side, as ADK does, where the criterion reads it (elsewhere
    accepted, with a load warning)."""


def lower_case(value: Any) -> Any:
    """A before-validator's body for options ADK writes in either case."""
    return value.lower() if isinstance(value, str) else value
