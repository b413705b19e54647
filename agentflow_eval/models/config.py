"""Evaluation config: which criteria judge a run, with what thresholds and options.

Reads seed 001 §9's config and ADK's ``test_config.json`` unchanged: a criterion may be
a bare float (its threshold) or an object.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentflow_eval.models.evalset import FileModel, Rubric

__all__ = [
    "DEFAULT_CRITERIA",
    "ArgsMatch",
    "CriterionConfig",
    "EvalConfig",
    "JudgeSettings",
    "MatchType",
    "ModelRateLimit",
    "UserSimulatorConfig",
]

MatchType = Literal["EXACT", "IN_ORDER", "ANY_ORDER"]
ArgsMatch = Literal["exact", "ignore", "subset"]
TrajectoryScoring = Literal["partial", "all_or_nothing"]


class CriterionConfig(FileModel):
    """Options of one criterion. Each criterion reads the fields that concern it."""

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    # tool_trajectory_avg_score
    match_type: MatchType = "EXACT"
    args_match: ArgsMatch = "exact"
    tool_args_match: dict[str, ArgsMatch] = Field(default_factory=dict)
    scoring: TrajectoryScoring = "partial"
    # LLM judges
    judge_model: str | None = None
    num_samples: int | None = Field(default=None, ge=1)
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    rubrics: list[Rubric] = Field(default_factory=list)
    prompt_template: str | None = None
    # seed 003 expectations given in the config rather than per case
    name: str | None = None
    text: str | None = None
    case_sensitive: bool = True
    # a user's own criterion, ``module:attr``, and free-form options for it
    function: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    # accepted from ADK configs
    evaluate_intermediate_nl_responses: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("args_match", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _from_adk(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"threshold": float(data)}
        if isinstance(data, dict):
            data = dict(data)
            options = data.pop("judge_model_options", data.pop("judgeModelOptions", None))
            if isinstance(options, dict):
                data.setdefault(
                    "judge_model", options.get("judge_model", options.get("judgeModel"))
                )
                if "num_samples" in options or "numSamples" in options:
                    data.setdefault(
                        "num_samples", options.get("num_samples", options.get("numSamples"))
                    )
                model_config = options.get("judge_model_config") or {}
                if isinstance(model_config, dict) and "temperature" in model_config:
                    data.setdefault("temperature", model_config["temperature"])
        return data


class JudgeSettings(FileModel):
    """Defaults shared by every LLM-judge criterion of a run."""

    model: str = "gpt-4o-mini"
    max_concurrency: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    cache: bool = True
    refresh_cache: bool = False
    cache_expiration_s: float | None = None
    # where the judge model is served: a local or proxy endpoint, and the name of the
    # environment variable that holds its API key (never the key itself)
    api_base: str | None = None
    api_key_env: str | None = None
    # exponential backoff between retries of a transient judge failure; also the longest
    # wait a server's Retry-After can impose
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    retry_max_delay_s: float = Field(default=60.0, ge=0)


class ModelRateLimit(FileModel):
    """Request limits for the models a pattern matches, shared by every agent, simulator
    and judge call of a run (see :mod:`agentflow_eval.llm.ratelimit`)."""

    rpm: float | None = Field(default=None, gt=0, description="requests per minute")
    max_concurrency: int | None = Field(default=None, ge=1, description="requests in flight")
    burst: int | None = Field(
        default=None, ge=1, description="requests that may start at once (default: rpm / 60)"
    )
    prefect_limit: str | None = Field(
        default=None,
        description="a Prefect global concurrency limit to hold a slot of during each call, "
        "shared by every run on the same Prefect server",
    )
    prefect_rate_limit: str | None = Field(
        default=None,
        description="a Prefect global concurrency limit with slot decay to take one slot of "
        "before each call (a requests-per-period quota shared across runs)",
    )


class UserSimulatorConfig(FileModel):
    """The LLM that plays the user for ``conversation_scenario`` cases."""

    model_config = FileModel.model_config | {"extra": "allow"}

    model: str = "gpt-4o-mini"
    max_allowed_invocations: int = Field(default=10, ge=1)


class EvalConfig(FileModel):
    """What judges a run: criteria by name, plus run-wide defaults."""

    criteria: dict[str, CriterionConfig] = Field(default_factory=dict)
    user_simulator_config: UserSimulatorConfig | None = None
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    runs: int | None = Field(default=None, ge=1)
    max_concurrency: int | None = Field(default=None, ge=1)
    trial_timeout_s: float | None = Field(default=None, gt=0)
    agent_model: str | None = None
    rate_limits: dict[str, ModelRateLimit] = Field(default_factory=dict)
    """Model-name glob pattern (``"openai/gpt-4o*"``) → its limits."""

    @classmethod
    def default(cls) -> EvalConfig:
        """ADK's defaults: the exact trajectory and ROUGE-1 ≥ 0.8."""
        return cls(
            criteria={name: CriterionConfig(**opts) for name, opts in DEFAULT_CRITERIA.items()}
        )


DEFAULT_CRITERIA: dict[str, dict[str, Any]] = {
    "tool_trajectory_avg_score": {"threshold": 1.0},
    "response_match_score": {"threshold": 0.8},
}
