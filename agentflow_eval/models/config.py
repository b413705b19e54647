"""Evaluation config: which criteria judge a run, with what thresholds and options.

Reads native configs and ADK's ``test_config.json`` unchanged: a criterion may be
a bare float (its threshold) or an object.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from agentflow_eval.models.evalset import FileModel, Rubric

__all__ = [
    "DEFAULT_CRITERIA",
    "ArgsMatch",
    "CriterionConfig",
    "EvalConfig",
    "JudgeModelOptions",
    "JudgeSettings",
    "MatchType",
    "ModelRateLimit",
    "StateMatch",
    "UserSimulatorConfig",
]

MatchType = Literal["EXACT", "IN_ORDER", "ANY_ORDER"]
ArgsMatch = Literal["exact", "ignore", "subset"]
TrajectoryScoring = Literal["partial", "all_or_nothing"]
StateMatch = Literal["exact", "subset"]

_ADK_MATCH_TYPES: dict[int, MatchType] = {0: "EXACT", 1: "IN_ORDER", 2: "ANY_ORDER"}
"""ADK's ``ToolTrajectoryCriterion.MatchType`` values, as its JSON dumps write them."""


class JudgeModelOptions(FileModel):
    """ADK's ``judge_model_options``: read into the criterion's ``judge_model``,
    ``num_samples`` and (from ``judge_model_config``) ``temperature``, ``max_tokens`` and
    ``seed``. ``parallelism_limit`` is accepted; the run's ``judge.max_concurrency`` limits
    judge calls instead (a load warning says so)."""

    judge_model: str | None = None
    judge_model_config: dict[str, Any] | None = None
    num_samples: int | None = Field(default=None, ge=1)
    parallelism_limit: int | None = Field(default=None, ge=1)


class CriterionConfig(FileModel):
    """Options of one criterion. Each criterion reads the fields that concern it."""

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    # tool_trajectory_avg_score
    match_type: MatchType = "EXACT"
    args_match: ArgsMatch = "exact"
    tool_args_match: dict[str, ArgsMatch] = Field(default_factory=dict)
    scoring: TrajectoryScoring = "partial"
    ignore_args: bool = False
    """ADK's spelling of ``args_match: ignore``."""
    # LLM judges
    judge_model: str | None = None
    num_samples: int | None = Field(default=None, ge=1)
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    rubrics: list[Rubric] = Field(default_factory=list)
    prompt_template: str | None = None
    judge_model_options: JudgeModelOptions | None = None
    include_intermediate_responses_in_final: bool = False
    """Judge each turn's intermediate responses followed by its final one, on both the
    agent's and the expected side (final_response_match_v2,
    rubric_based_final_response_quality_v1; as ADK)."""
    evaluate_intermediate_nl_responses: bool = False
    """hallucinations_v1: judge the intermediate responses' sentences too (as ADK)."""
    # final_session_state_match
    state_match: StateMatch = "exact"
    # case expectations given in the config rather than per case
    name: str | None = None
    text: str | None = None
    case_sensitive: bool = True
    # a user's own criterion, ``module:attr``, and free-form options for it
    function: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    defaulted: SkipJsonSchema[bool] = False
    """Set by :meth:`EvalConfig.default` (no config was given): the criterion judges a
    case that has expectations of its own only where the case gives what it compares
    against (see :func:`agentflow_eval.criteria.registry.build_criteria`)."""

    @field_validator("match_type", mode="before")
    @classmethod
    def _adk_match_type(cls, value: Any) -> Any:
        # ADK writes the enum's number in JSON dumps and accepts "in-order", "in order".
        if isinstance(value, int) and not isinstance(value, bool):
            return _ADK_MATCH_TYPES.get(value, value)
        if isinstance(value, str):
            return value.strip().upper().replace("-", "_").replace(" ", "_")
        return value

    @field_validator("args_match", "state_match", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _threshold_alone(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"threshold": float(data)}
        return data

    @model_validator(mode="after")
    def _adk_options(self) -> CriterionConfig:
        if self.ignore_args:
            if "args_match" in self.model_fields_set and self.args_match != "ignore":
                raise ValueError(
                    f"ignore_args: true contradicts args_match: {self.args_match!r}; give one"
                )
            self.args_match = "ignore"
        options = self.judge_model_options
        if options is not None:
            if self.judge_model is None:
                self.judge_model = options.judge_model
            if self.num_samples is None:
                self.num_samples = options.num_samples
            settings = options.judge_model_config or {}
            for ours, adks in (
                ("temperature", ("temperature",)),
                ("max_tokens", ("max_output_tokens", "maxOutputTokens")),
                ("seed", ("seed",)),
            ):
                given = next((settings[k] for k in adks if settings.get(k) is not None), None)
                if given is not None and getattr(self, ours) is None:
                    setattr(self, ours, given)
        return self


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
    """The LLM that plays the user for ``conversation_scenario`` cases.

    ADK's ``model_configuration.temperature`` sets the simulator's temperature; its other
    fields (``type``, ``custom_instructions``, ``include_function_calls``) are accepted,
    and a load warning names any that would change the simulation."""

    model_config = FileModel.model_config | {"extra": "allow"}

    model: str = "gpt-4o-mini"
    max_allowed_invocations: int = Field(default=10, ge=1)
    type: Literal["llm_backed", "llm_audio"] | None = None
    custom_instructions: str | None = None
    include_function_calls: bool = False
    model_configuration: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _temperature(self) -> UserSimulatorConfig:
        settings = self.model_configuration or {}
        extra = self.model_extra if self.model_extra is not None else {}
        if settings.get("temperature") is not None and "temperature" not in extra:
            extra["temperature"] = settings["temperature"]
        return self


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

    _load_warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def load_warnings(self) -> list[str]:
        """What reading the config file noticed but did not refuse (keys ADK ignores,
        options this package accepts without using), one line each."""
        return self._load_warnings

    @classmethod
    def default(cls) -> EvalConfig:
        """ADK's defaults, the exact trajectory and ROUGE-1 ≥ 0.8, marked as defaults: a
        case with expectations of its own gets them only where it gives their reference."""
        return cls(
            criteria={
                name: CriterionConfig(**opts, defaulted=True)
                for name, opts in DEFAULT_CRITERIA.items()
            }
        )

    @property
    def defaulted_criteria(self) -> list[str]:
        """The criteria that are defaults rather than asked for."""
        return [name for name, options in self.criteria.items() if options.defaulted]


DEFAULT_CRITERIA: dict[str, dict[str, Any]] = {
    "tool_trajectory_avg_score": {"threshold": 1.0},
    "response_match_score": {"threshold": 0.8},
}
