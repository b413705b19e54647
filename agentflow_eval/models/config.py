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
    """Read into the criterion's judge_model."""
    judge_model_config: dict[str, Any] | None = None
    """Its temperature, max_tokens and seed are read into the criterion's."""
    num_samples: int | None = Field(default=None, ge=1)
    """Read into the criterion's num_samples."""
    parallelism_limit: int | None = Field(default=None, ge=1)
    """Accepted; judge.max_concurrency limits judge calls instead."""


class CriterionConfig(FileModel):
    """Options of one criterion. Each criterion reads the fields that concern it."""

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """A trial passes the criterion at score >= threshold (each criterion has a default)."""
    # tool_trajectory_avg_score
    match_type: MatchType = "EXACT"
    """tool_trajectory_avg_score: EXACT (same calls, same order, nothing extra), IN_ORDER
    (expected calls in order, extras allowed) or ANY_ORDER."""
    args_match: ArgsMatch = "exact"
    """tool_trajectory_avg_score: compare arguments exactly, ignore them, or require the
    expected ones as a subset."""
    tool_args_match: dict[str, ArgsMatch] = Field(default_factory=dict)
    """tool_trajectory_avg_score: args_match per tool name, over args_match."""
    scoring: TrajectoryScoring = "partial"
    """tool_trajectory_avg_score: partial credit per turn, or ADK's all_or_nothing."""
    ignore_args: bool = False
    """ADK's spelling of ``args_match: ignore``."""
    # LLM judges
    judge_model: str | None = None
    """LLM judges: the LiteLLM model that judges (default: judge.model)."""
    num_samples: int | None = Field(default=None, ge=1)
    """LLM judges: how many times the judge is asked per turn; the majority wins."""
    temperature: float | None = None
    """LLM judges: the judge's sampling temperature."""
    seed: int | None = None
    """LLM judges: a sampling seed, for providers that take one."""
    max_tokens: int | None = None
    """LLM judges: the most tokens a judge reply may use."""
    rubrics: list[Rubric] = Field(default_factory=list)
    """Rubric criteria: rubrics for every case (cases and turns add their own)."""
    prompt_template: str | None = None
    """LLM judges: a jinja2 template file (or inline text) replacing the built-in prompt."""
    judge_model_options: JudgeModelOptions | None = None
    """ADK's judge options (judge_model, num_samples, the model's temperature)."""
    include_intermediate_responses_in_final: bool = False
    """Judge each turn's intermediate responses followed by its final one, on both the
    agent's and the expected side (final_response_match_v2,
    rubric_based_final_response_quality_v1; as ADK)."""
    evaluate_intermediate_nl_responses: bool = False
    """hallucinations_v1: judge the intermediate responses' sentences too (as ADK)."""
    # final_session_state_match
    state_match: StateMatch = "exact"
    """final_session_state_match: how the session's final state is compared."""
    # case expectations given in the config rather than per case
    name: str | None = None
    """calls_tool: the tool that must be called."""
    text: str | None = None
    """final_contains: the text the final answer must contain."""
    case_sensitive: bool = True
    """final_contains: whether case must match."""
    # a user's own criterion, ``module:attr``, and free-form options for it
    function: str | None = None
    """A criterion of one's own: ``package.module:attr`` or ``path/to/checks.py:attr``."""
    options: dict[str, Any] = Field(default_factory=dict)
    """A criterion of one's own: keyword arguments for its check function."""
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
    """The LiteLLM model of every LLM judge without a judge_model of its own."""
    max_concurrency: int = Field(default=8, ge=1)
    """Judge calls in flight at once (apart from the trials' own limit)."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds before a judge call is given up and retried."""
    max_retries: int = Field(default=4, ge=0)
    """Retries of a judge call that failed for a transient reason (429, 5xx, timeout,
    malformed JSON)."""
    cache: bool = True
    """Keep judge verdicts (keyed by criterion, prompt, model and options) and reuse them."""
    refresh_cache: bool = False
    """Ask the judge again even when a verdict is cached, and store the new one."""
    cache_expiration_s: float | None = None
    """How long a cached verdict stays valid (default: for ever)."""
    # where the judge model is served: a local or proxy endpoint, and the name of the
    # environment variable that holds its API key (never the key itself)
    api_base: str | None = None
    """The endpoint that serves the judge model (a local server or a proxy)."""
    api_key_env: str | None = None
    """The environment variable holding the judge's API key (never the key itself)."""
    # exponential backoff between retries of a transient judge failure; also the longest
    # wait a server's Retry-After can impose
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    """The first wait before a retry; each later one doubles it."""
    retry_max_delay_s: float = Field(default=60.0, ge=0)
    """The longest wait before a retry, also for a server's Retry-After."""


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
    """The LiteLLM model that plays the user."""
    max_allowed_invocations: int | None = Field(default=10, ge=1)
    """The most user turns a simulated conversation may take; ADK's ``-1`` (or null)
    sets no limit, and the conversation ends only when the simulated user says it is
    done."""
    type: Literal["llm_backed", "llm_audio"] | None = None
    """ADK's simulator kind (accepted)."""
    custom_instructions: str | None = None
    """ADK's instructions template for its simulated user: accepted, not used (the
    simulated user has its own prompt; a load warning says so)."""
    include_function_calls: bool = False
    """ADK's option to show its simulated user the agent's tool calls: accepted, not used
    (the simulated user sees text only; a load warning says so)."""
    model_configuration: dict[str, Any] | None = None
    """Options of the simulated user's model (its temperature is used)."""

    @field_validator("max_allowed_invocations", mode="before")
    @classmethod
    def _no_limit(cls, value: Any) -> Any:
        return None if value == -1 and not isinstance(value, bool) else value

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
    """Criterion name → its threshold (a number) or options (an object)."""
    user_simulator_config: UserSimulatorConfig | None = None
    """The simulated user of conversation_scenario cases (required when there are any)."""
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    """Settings shared by every LLM judge of the run."""
    runs: int | None = Field(default=None, ge=1)
    """Trials per case (default 5); --runs wins."""
    max_concurrency: int | None = Field(default=None, ge=1)
    """Trials in flight at once (default 16); --max-concurrency wins."""
    trial_timeout_s: float | None = Field(default=None, gt=0)
    """Seconds before a trial is failed as hung (default 120); --timeout wins."""
    agent_model: str | None = None
    """Accepted for older configs; not used (the agent's model is the agent's own, or
    --model)."""
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
