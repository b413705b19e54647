"""Evaluation config: which criteria judge a run, with what thresholds and options.

Reads native configs and ADK's ``test_config.json`` unchanged: a criterion may be
a bare float (its threshold) or an object. What each criterion's own options are is the
criterion's business (:mod:`agentflow_eval.criteria`): this layer keeps them as written
until a :class:`CriteriaCatalogue` says which model reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import (
    Field,
    PrivateAttr,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from agentflow_eval.models.environment_spec import EnvironmentSpec
from agentflow_eval.models.file_model import FileModel
from agentflow_eval.models.injection import InjectionPayload
from agentflow_eval.models.mcp_servers import McpServerSpec
from agentflow_eval.models.tool_mocks import ToolMock, UnmockedPolicy

__all__ = [
    "CRITERIA_CATALOGUE",
    "DEFAULT_CRITERIA",
    "CriteriaCatalogue",
    "CriterionConfig",
    "EvalConfig",
    "JudgeSettings",
    "ModelRateLimit",
    "UserSimulatorConfig",
]

CRITERIA_CATALOGUE = "agentflow_eval.criteria_catalogue"
"""The validation-context key under which :class:`EvalConfig` finds a
:class:`CriteriaCatalogue` (see :meth:`EvalConfig.model_validate`)."""


class CriterionConfig(FileModel):
    """One entry of a config's ``criteria``: what every criterion takes (its threshold; a
    criterion of one's own's ``function`` and ``options``), and the criterion's own options.

    Each criterion owns a model of its options (a subclass of this one, declared with the
    criterion in :mod:`agentflow_eval.criteria`); until that model has read them (when a
    config is loaded with the criteria's catalogue, or when the criteria are built), a
    criterion's own keys are kept as written, as extra keys."""

    model_config = FileModel.model_config | {"extra": "allow"}

    threshold: float | None = Field(default=None, ge=0.0)
    """A trial passes the criterion at score >= threshold (each criterion has a default;
    its options model holds it to its scale, [0, 1] for most)."""
    # a user's own criterion, ``module:attr``, and free-form options for it
    function: str | None = None
    """A criterion of one's own: ``package.module:attr`` or ``path/to/checks.py:attr``."""
    options: dict[str, Any] = Field(default_factory=dict)
    """A criterion of one's own: keyword arguments for its check function."""
    defaulted: SkipJsonSchema[bool] = False
    """Set by :meth:`EvalConfig.default` (no config was given): the criterion judges a
    case that has expectations of its own only where the case gives what it compares
    against (see :func:`agentflow_eval.criteria.registry.build_criteria`)."""

    @model_validator(mode="before")
    @classmethod
    def _threshold_alone(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"threshold": float(data)}
        return data

    def written(self) -> dict[str, Any]:
        """The entry's keys as given: the common fields that were set, and the
        criterion's own options (as a model of them holds them, or as written)."""
        data = {name: getattr(self, name) for name in self.model_fields_set}
        return {**data, **(self.model_extra or {})}


class CriteriaCatalogue(Protocol):
    """What reading a config needs to know about the criteria (the criteria registry
    provides it; the models and file layers cannot import the criteria)."""

    def options_model(self, name: str, entry: Any) -> type[CriterionConfig]:
        """The model that reads config entry ``name`` (``entry`` as written)."""
        ...

    def entry_warnings(self, name: str, entry: Mapping[str, Any]) -> list[str]:
        """What entry ``name`` holds that its criterion accepts and does not use, one line
        per key (relative to the entry: ``"key ..."``)."""
        ...


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

    criteria: dict[str, SerializeAsAny[CriterionConfig]] = Field(default_factory=dict)
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
    tool_mocks: list[ToolMock] = Field(default_factory=list)
    """Tools mocked in every case (a case's and a turn's own mocks are tried first)."""
    unmocked_tools: UnmockedPolicy = "run"
    """What a tool call no mock answers does: ``run`` the real tool, or ``fail`` the call
    with a message naming the tool and its arguments (a case may say otherwise)."""
    injection_payloads: list[InjectionPayload] = Field(default_factory=list)
    """The team's own injected instructions, named by id in a tool mock's ``inject``
    (beside the package's set; an id of the package's replaces its payload)."""
    environment: EnvironmentSpec | None = None
    """The environment each trial gets, set up before it and torn down after it (a
    function's ``module:attr`` or ``file.py:attr``, or ``{"function", "options"}``); it
    replaces the eval set's."""
    mcp_servers: list[McpServerSpec] = Field(default_factory=list)
    """MCP servers whose tools the agent gets: each started for every trial (or once for
    the run, ``scope: "run"``) and stopped when it ends (docs/mcp.md)."""

    _load_warnings: list[str] = PrivateAttr(default_factory=list)

    @field_validator("injection_payloads")
    @classmethod
    def _distinct_payloads(cls, value: list[InjectionPayload]) -> list[InjectionPayload]:
        # a mock names a payload by id: two of one id would leave it unsaid which it means
        ids = [payload.id for payload in value]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"payload ids must differ; given more than once: {twice}")
        return value

    @field_validator("criteria", mode="wrap")
    @classmethod
    def _own_options(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        """With a :class:`CriteriaCatalogue` in the validation context (under
        :data:`CRITERIA_CATALOGUE`), each entry is read by its criterion's own options
        model, in the same pass as the rest of the config (so every problem of a file is
        found at once, located under ``criteria.<name>``)."""
        context = info.context if isinstance(info.context, Mapping) else {}
        catalogue: CriteriaCatalogue | None = context.get(CRITERIA_CATALOGUE)
        if catalogue is None or not isinstance(value, Mapping):
            return handler(value)
        entries: dict[str, CriterionConfig] = {}
        problems: list[InitErrorDetails] = []
        for name, entry in value.items():
            model = catalogue.options_model(name, entry)
            if isinstance(entry, model):
                entries[name] = entry
                continue
            data = entry.written() if isinstance(entry, CriterionConfig) else entry
            try:
                entries[name] = model.model_validate(data, context=info.context)
            except ValidationError as exc:
                problems += [
                    InitErrorDetails(
                        type=PydanticCustomError(error["type"], error["msg"]),
                        loc=(name, *error["loc"]),
                        input=error["input"],
                    )
                    for error in exc.errors(include_url=False)
                ]
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        return entries

    @field_validator("mcp_servers")
    @classmethod
    def _distinct_servers(cls, value: list[McpServerSpec]) -> list[McpServerSpec]:
        names = [server.name for server in value]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two MCP servers are named {', '.join(map(repr, twice))}")
        return value

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
