"""The regression flow's parameters: a suite of eval sets, each evaluated by its own
``evaluate`` flow run and compared with its baseline, and what the suite shares (where
runs are published, the baseline, the gate).

Like the evaluate flow's (:mod:`agentflow_eval.models.request`), the flow takes these as
top-level parameters, so the Prefect UI renders a form; :class:`RegressionParams` holds
them together, and :meth:`RegressionParams.evaluate_params` is what each eval set's
evaluate flow run is started with.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentflow_eval.models import defaults
from agentflow_eval.models.request import (
    S3,
    Against,
    AgainstModel,
    Agent,
    AgentModel,
    AgentVersion,
    Baseline,
    ConfigPath,
    EvalSetPath,
    FailOnRegression,
    GitSha,
    JudgeModel,
    Labels,
    MaxCostIncrease,
    MaxLatencyIncrease,
    MaxTokenIncrease,
    MaxToolCallIncrease,
    MaxTrials,
    OutputDir,
    RunRequest,
    Runs,
    S3Options,
    Secrets,
    UntilDecided,
    _ui,
)

__all__ = [
    "DEFAULT_EVALUATE_DEPLOYMENT",
    "REGRESSION_LABEL",
    "CrashRetries",
    "EvalTimeout",
    "Evals",
    "EvaluateDeployment",
    "RegressionParams",
    "Suite",
    "SuiteBaseline",
    "SuiteEntry",
    "SuitePublishTo",
]

DEFAULT_EVALUATE_DEPLOYMENT = "evaluate/adhoc"
REGRESSION_LABEL = "regression"
"""The label each evaluate run of a suite carries (``<suite>@<flow run id>#<entry>``): how
the suite finds its runs among an eval set's published runs, and how a person finds the
suite run a report belongs to."""


class SuiteEntry(BaseModel):
    """One eval set of the suite and the agent evaluated on it."""

    model_config = ConfigDict(extra="forbid", title="Eval set")

    agent: Agent = None
    evalset: EvalSetPath
    config: ConfigPath = None
    runs: Runs = None
    model: AgentModel = None
    judge_model: JudgeModel = None
    baseline: Baseline = None
    labels: Labels = Field(default_factory=dict)
    against: Against = None
    against_model: AgainstModel = None
    until_decided: UntilDecided = False
    max_trials: MaxTrials = None

    @property
    def paired(self) -> bool:
        """Whether a baseline agent runs beside this entry's agent."""
        return bool(self.against or self.against_model)


Suite = Annotated[
    str,
    Field(min_length=1, max_length=60),
    _ui(
        "Suite",
        "the suite's name: its combined summaries are published under "
        "<publish to>/regression/<suite>/ and its artifacts keyed by it",
    ),
]
Evals = Annotated[
    list[SuiteEntry],
    Field(min_length=1),
    _ui(
        "Eval sets",
        "each eval set with its agent (and optionally config, runs, models, baseline, "
        'labels), e.g. [{"agent": "my_agents.support:agent", "evalset": '
        '"evals/support.evalset.json"}]; each is its own evaluate flow run',
    ),
]
SuitePublishTo = Annotated[
    str,
    Field(min_length=1),
    _ui(
        "Publish to",
        "s3://bucket/prefix (or a folder every worker shares): each run is published "
        "there, the baselines are read from there, and the suite's summary goes there",
    ),
]
SuiteBaseline = Annotated[
    str,
    Field(min_length=1),
    _ui(
        "Baseline",
        "what each eval set is compared with (unless its entry names its own): latest, the "
        "last completed run of the eval set published to Publish to",
    ),
]
EvaluateDeployment = Annotated[
    str,
    _ui(
        "Evaluate deployment",
        "the deployment of the evaluate flow each eval set runs as (so the suite spreads "
        "over the work pool's workers); blank, or a deployment that does not exist: "
        "subflows in this flow run's process",
    ),
]

EvalTimeout = Annotated[
    float,
    Field(gt=0, le=7 * 24 * 60),
    _ui(
        "Eval set timeout (minutes)",
        "how long the suite waits for each eval set's evaluate flow run, time queued for a "
        "worker included; a run still going then is cancelled and its eval set reported "
        "incomplete, so the suite always ends (a retried eval set gets the time again)",
    ),
]
CrashRetries = Annotated[
    int,
    Field(ge=0, le=5),
    _ui(
        "Retries of a crashed eval set",
        "how many times an eval set is started again when its evaluate run crashed (its "
        "worker or machine lost: the run was marked Crashed, e.g. by the unresponsive-run "
        "automation once it stopped heartbeating); other failures are not retried",
    ),
]


class RegressionParams(BaseModel):
    """A regression suite: the same fields, titles and defaults as the regression flow's
    parameters."""

    model_config = ConfigDict(extra="forbid")

    evals: Evals
    publish_to: SuitePublishTo
    suite: Suite = "nightly"
    baseline: SuiteBaseline = "latest"
    fail_on_regression: FailOnRegression = False
    max_cost_increase: MaxCostIncrease = None
    max_latency_increase: MaxLatencyIncrease = None
    max_token_increase: MaxTokenIncrease = None
    max_tool_call_increase: MaxToolCallIncrease = None
    evaluate_deployment: EvaluateDeployment = DEFAULT_EVALUATE_DEPLOYMENT
    eval_timeout_minutes: EvalTimeout = defaults.SUITE_EVAL_TIMEOUT_MINUTES
    crash_retries: CrashRetries = defaults.SUITE_CRASH_RETRIES
    s3: S3 = Field(default_factory=S3Options)
    output_dir: OutputDir = defaults.OUTPUT_DIR
    agent_version: AgentVersion = None
    git_sha: GitSha = None
    labels: Labels = Field(default_factory=dict)
    secrets: Secrets = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_label_of_ours(self) -> RegressionParams:
        for labels in [self.labels, *(entry.labels for entry in self.evals)]:
            if REGRESSION_LABEL in labels:
                raise ValueError(
                    f"labels: {REGRESSION_LABEL!r} is set by the suite for each of its runs"
                )
        return self

    @model_validator(mode="after")
    def _each_eval_set_once(self) -> RegressionParams:
        # two runs of one eval set published at once would race on its runs.json, and
        # "latest" would compare one agent with the other
        seen: dict[str, int] = {}
        for index, entry in enumerate(self.evals):
            key = entry.evalset.strip()
            if key in seen:
                raise ValueError(
                    f"evals[{index}]: eval set {entry.evalset!r} is already evals[{seen[key]}]; "
                    "a suite evaluates each eval set once (use another suite for another agent)"
                )
            seen[key] = index
        return self

    def flow_parameters(self) -> dict[str, Any]:
        """These parameters as the regression flow's keyword arguments."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @classmethod
    def from_flow_parameters(cls, values: dict[str, Any]) -> RegressionParams:
        """The parameters of a flow run, from the flow's keyword arguments."""
        return cls.model_validate({name: values[name] for name in cls.model_fields})

    def tag(self, flow_run_id: str, index: int) -> str:
        """The :data:`REGRESSION_LABEL` value of entry ``index`` in flow run ``flow_run_id``."""
        return f"{self.suite}@{flow_run_id}#{index}"

    def evaluate_params(self, index: int, tag: str) -> RunRequest:
        """What entry ``index`` is evaluated with: its own fields, the suite's shared
        ones, and the suite's label."""
        entry = self.evals[index]
        return RunRequest(
            agent=entry.agent,
            evalset=entry.evalset,
            config=entry.config,
            runs=entry.runs,
            model=entry.model,
            judge_model=entry.judge_model,
            agent_version=self.agent_version,
            git_sha=self.git_sha,
            labels={**self.labels, **entry.labels, REGRESSION_LABEL: tag},
            output_dir=self.output_dir,
            publish_to=self.publish_to,
            s3=self.s3,
            # a paired entry's baseline is the agent run beside it
            baseline=None if entry.paired else (entry.baseline or self.baseline),
            against=entry.against,
            against_model=entry.against_model,
            until_decided=entry.until_decided,
            max_trials=entry.max_trials,
            fail_on_regression=self.fail_on_regression,
            max_cost_increase=self.max_cost_increase,
            max_latency_increase=self.max_latency_increase,
            max_token_increase=self.max_token_increase,
            max_tool_call_increase=self.max_tool_call_increase,
            secrets=self.secrets,
            track=self.suite,  # a suite's runs are their own history, apart from ad-hoc runs
        )
