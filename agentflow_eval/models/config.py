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
    """LLM judges: a jinja2 template file replacing the built-in prompt."""
    # seed 003 expectations given in the config rather than per case
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
    # accepted from ADK configs
    evaluate_intermediate_nl_responses: bool = False
    """hallucinations_v1: judge the intermediate responses too, not only final answers."""

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
    """The LLM that plays the user for ``conversation_scenario`` cases."""

    model_config = FileModel.model_config | {"extra": "allow"}

    model: str = "gpt-4o-mini"
    """The LiteLLM model that plays the user."""
    max_allowed_invocations: int = Field(default=10, ge=1)
    """The most user turns a simulated conversation may take."""


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
