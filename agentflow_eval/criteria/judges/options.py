"""The options every LLM-judge criterion takes: which model judges, how often it is asked,
its sampling settings and prompt, in this package's spelling or in Google ADK's
``judge_model_options``. A criterion whose options model is (a subclass of)
:class:`JudgeCriterionOptions` is one that calls a judge."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.models.config import CriterionConfig
from agentflow_eval.models.file_model import FileModel

__all__ = ["JudgeCriterionOptions", "JudgeModelOptions"]


class JudgeModelOptions(FileModel):
    """ADK's ``judge_model_options``: read into the criterion's ``judge_model``,
    ``num_samples`` and (from ``judge_model_config``) ``temperature``, ``max_tokens`` and
    ``seed``. ``parallelism_limit`` is accepted; the run's ``judge.max_concurrency`` limits
    judge calls instead (a load warning says so)."""

    judge_model: str | None = None
    """Read into the criterion's judge_model."""
    judge_model_config: dict[str, Any] | None = None
    """Its temperature, max_tokens and seed are read into the criterion's."""
    num_samples: int | None = Field(default=None, ge=1)
    """Read into the criterion's num_samples."""
    parallelism_limit: int | None = Field(default=None, ge=1)
    """Accepted; judge.max_concurrency limits judge calls instead."""


_ADK_JUDGE_SETTINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("temperature", ("temperature",)),
    ("max_tokens", ("max_output_tokens", "maxOutputTokens")),
    ("seed", ("seed",)),
)
"""Our option, and the ``judge_model_config`` keys ADK writes it under."""


class JudgeCriterionOptions(CriterionOptions):
    """Options of an LLM-judge criterion."""

    judge_model: str | None = None
    """The LiteLLM model that judges (default: judge.model)."""
    num_samples: int | None = Field(default=None, ge=1)
    """How many times the judge is asked per turn; the majority wins."""
    temperature: float | None = None
    """The judge's sampling temperature."""
    seed: int | None = None
    """A sampling seed, for providers that take one."""
    max_tokens: int | None = None
    """The most tokens a judge reply may use."""
    prompt_template: str | None = None
    """A jinja2 template file (or inline text) replacing the built-in prompt."""
    judge_model_options: JudgeModelOptions | None = None
    """ADK's judge options (judge_model, num_samples, the model's temperature)."""

    @classmethod
    def of(cls, entry: CriterionConfig) -> JudgeCriterionOptions:
        """``entry`` read as judge options (itself when it already is)."""
        return entry if isinstance(entry, cls) else cls.model_validate(entry.written())

    @model_validator(mode="after")
    def _adk_judge_options(self) -> JudgeCriterionOptions:
        options = self.judge_model_options
        if options is not None:
            if self.judge_model is None:
                self.judge_model = options.judge_model
            if self.num_samples is None:
                self.num_samples = options.num_samples
            settings = options.judge_model_config or {}
            for ours, adks in _ADK_JUDGE_SETTINGS:
                given = next((settings[k] for k in adks if settings.get(k) is not None), None)
                if given is not None and getattr(self, ours) is None:
                    setattr(self, ours, given)
        return self
