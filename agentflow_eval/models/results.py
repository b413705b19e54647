"""What a run produces: trials (what the agent did), criterion results (how it was judged),
case and run summaries. These models are the schema of ``results.json`` and of the
streamed ``trials.jsonl``/``judged.jsonl`` files; bump ``SCHEMA_VERSION`` on any change
a reader could notice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from agentflow_eval.models.agreement import JudgeAgreement

__all__ = [
    "SCHEMA_VERSION",
    "AgentOutput",
    "CaseEfficiency",
    "CaseResult",
    "CriterionResult",
    "CriterionSummary",
    "EndState",
    "EndStateProbe",
    "ExpectedTurn",
    "HandoffEvent",
    "MessageEvent",
    "ModelCallEvent",
    "NodeEvent",
    "PairedWith",
    "RecordedToolCall",
    "RejudgedFrom",
    "RunResult",
    "RunTotals",
    "ToolCallEvent",
    "TrajectoryEvent",
    "Trial",
    "TrialError",
    "TrialFigures",
    "TrialResult",
    "Turn",
    "Usage",
    "ValueSpread",
]

SCHEMA_VERSION = "1.7"
"""1.1: each turn records its events in order (``events``); ``tool_calls``,
``intermediate_responses`` and ``usage`` are derived from them. 1.2: a component case's
turn records the component's ``output``; a case judged on the next step only says so
(``next_step_only``). 1.3: a run that judged an earlier run's trials again names that run
(``rejudged_from``); a trial keeps what the agent printed (``agent_output``); each case
keeps what each of its trials took (``trial_figures``: cost, tokens, calls, latency, the
paths its trajectory took) and summarises it (``efficiency``: medians and 90th
percentiles with intervals), and the run its trials' latency (``totals.trial_latency_ms``);
a usage counts its calls whose price is unknown (``unpriced_calls``); the run records what
its agent was loaded from (``agent_spec``) and the history it joins (``track``), so
``latest`` finds an earlier run of the same agent in the same history. 1.4: each trial's
figures keep how firmly it passed (``pass_value``: 1 or 0, an LLM judge's share of votes
when split; null when it has no verdict on the agent), and a run made side by side with
another names it (``paired_with``); an LLM judge's criterion summary measures its noise
from its samples (``judge_flip_rate``, ``judge_variance_share``). 1.5: a run whose judged
content people labelled measures each judge against them (``judge_agreement``: agreement,
sensitivity, specificity and κ with intervals, the pass rate corrected for the judge's
error beside the raw one, reviewers against each other). 1.6: a trial keeps what the
world looked like when it was over (``end_state``: what its environment captured, and
what each of its case's end-state checks found), read before the environment was torn
down. 1.7: a trial whose tools were simulated keeps the simulated world's state
(``simulated_state``)."""


class Record(BaseModel):
    """Base of result records: plain snake_case JSON, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Usage(Record):
    """Tokens and cost as the model reported them (zero where it did not)."""

    prompt_tokens: int = 0
    """Tokens sent to the model."""
    completion_tokens: int = 0
    """Tokens the model wrote."""
    total_tokens: int = 0
    """prompt_tokens + completion_tokens."""
    cost_usd: float = 0.0
    """Cost in US dollars of the calls whose price is known (``unpriced_calls`` are not in
    it)."""
    calls: int = 0
    """Model calls counted."""
    unpriced_calls: int = 0
    """Calls whose price is unknown (a self-hosted endpoint, a model no price list knows):
    while any are counted the cost is unknown, not ``cost_usd``."""

    @classmethod
    def of_call(
        cls,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float | None,
        total_tokens: int | None = None,
        calls: int = 1,
    ) -> Usage:
        """One model call's usage; ``cost_usd`` None when its price is unknown."""
        return cls(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=total_tokens or prompt_tokens + completion_tokens,
            cost_usd=cost_usd or 0.0,
            calls=calls,
            unpriced_calls=calls if cost_usd is None else 0,
        )

    @property
    def known_cost_usd(self) -> float | None:
        """The cost in US dollars; None when some call's price is unknown."""
        return None if self.unpriced_calls else self.cost_usd

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls
        self.unpriced_calls += other.unpriced_calls

    @classmethod
    def total(cls, usages: list[Usage]) -> Usage:
        out = cls()
        for usage in usages:
            out.add(usage)
        return out


class RecordedToolCall(Record):
    """A tool call the agent made, with what came back and how long it took."""

    name: str
    """The tool's name."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments the agent passed."""
    result: Any = None
    """What the tool returned (JSON values; anything else as its repr)."""
    error: str | None = None
    """The tool's error, if it raised."""
    duration_ms: float = 0.0
    """How long the call took."""
    id: str | None = None
    """The call's id, if the agent gave one."""
    served_by: Literal["tool", "mock", "fault", "policy"] = "tool"
    """What answered the call: the tool itself, a tool mock, an injected fault, or the
    policy for unmocked tools (``unmocked_tools: fail``)."""


class _Event(Record):
    """What every event of a turn has: when it happened and who acted."""

    at_ms: float = 0.0
    """When it happened: milliseconds since the turn started."""
    author: str | None = None
    """The agent, sub-agent or graph node that acted, when the agent says."""


class MessageEvent(_Event):
    """Text the agent said: between tool calls, or (``final``) its answer to the turn."""

    kind: Literal["message"] = "message"
    """What the event is: a message."""
    text: str
    """What it said."""
    final: bool = False
    """Whether this is the turn's final answer."""


class ModelCallEvent(_Event):
    """One call the agent made to a model, with its usage."""

    kind: Literal["model_call"] = "model_call"
    """What the event is: a model call."""
    model: str | None = None
    """The model called, when known."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and cost of this call (its ``calls`` is 1)."""
    latency_ms: float | None = None
    """How long the call took, when known."""


class ToolCallEvent(_Event):
    """One tool call, with its arguments and its result or error."""

    kind: Literal["tool_call"] = "tool_call"
    """What the event is: a tool call."""
    call: RecordedToolCall
    """The call."""


class NodeEvent(_Event):
    """A step of the agent began: a graph node, an agent or sub-agent taking its turn."""

    kind: Literal["node"] = "node"
    """What the event is: a node visit."""
    name: str
    """The node's or agent's name."""
    path: list[str] = Field(default_factory=list)
    """Where it sits: the enclosing (sub)graphs or parent agents, outermost first."""


class HandoffEvent(_Event):
    """Control passed from one agent to another (a handoff, a sub-agent transfer)."""

    kind: Literal["handoff"] = "handoff"
    """What the event is: a handoff."""
    source: str | None = None
    """The agent that handed off."""
    target: str
    """The agent that took over."""


TrajectoryEvent = Annotated[
    MessageEvent | ModelCallEvent | ToolCallEvent | NodeEvent | HandoffEvent,
    Field(discriminator="kind"),
]
"""One thing that happened in a turn, in the order it happened."""

_VIEWS = ("tool_calls", "intermediate_responses", "usage")


class Turn(Record):
    """What the agent did with one user turn: its events, in order, and the views derived
    from them (tool calls, intermediate responses, usage) that criteria and reports read.

    The views are written with the events, for readers of results files; when a turn is
    read back they are derived from its events again. A turn written before events were
    recorded (results schema 1.0) is read into events from its views."""

    invocation_id: str
    """The eval set's id for this user turn."""
    user_text: str
    """What the user said."""
    events: list[TrajectoryEvent] = Field(default_factory=list)
    """What happened, in order: messages, model calls, tool calls, node visits, handoffs."""
    final_response: str | None = None
    """The agent's answer; null when the turn ended without one."""
    output: Any = None
    """A component case: what the component returned (a JSON value; anything else as its
    repr); ``final_response`` holds it as text."""
    latency_ms: float = 0.0
    """Wall time of the turn."""

    @model_validator(mode="before")
    @classmethod
    def _events_from_views(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(view in data for view in _VIEWS):
            return data
        data = dict(data)
        calls = data.pop("tool_calls", None) or []
        texts = data.pop("intermediate_responses", None) or []
        usage = data.pop("usage", None)
        if "events" not in data:  # written before events were recorded
            events: list[Any] = [MessageEvent(text=text) for text in texts]
            events += [ToolCallEvent(call=RecordedToolCall.model_validate(c)) for c in calls]
            totals = Usage.model_validate(usage) if usage is not None else Usage()
            if totals.calls or totals.total_tokens or totals.cost_usd:
                events.append(ModelCallEvent(usage=totals))
            data["events"] = events
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tool_calls(self) -> list[RecordedToolCall]:
        """The tool calls the agent made in this turn, in order."""
        return [event.call for event in self.events if isinstance(event, ToolCallEvent)]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def intermediate_responses(self) -> list[str]:
        """Text the agent said between tool calls."""
        return [
            event.text
            for event in self.events
            if isinstance(event, MessageEvent) and not event.final and event.text
        ]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def usage(self) -> Usage:
        """The agent's model usage in this turn, summed over its model calls."""
        return Usage.total(
            [event.usage for event in self.events if isinstance(event, ModelCallEvent)]
        )

    @property
    def nodes(self) -> list[NodeEvent]:
        """The steps the agent took in this turn (nodes, agents), in order."""
        return [event for event in self.events if isinstance(event, NodeEvent)]

    @property
    def handoffs(self) -> list[HandoffEvent]:
        return [event for event in self.events if isinstance(event, HandoffEvent)]


ErrorKind = Literal["exception", "max_steps", "timeout", "setup", "infrastructure"]
"""Why a trial did not finish. ``infrastructure``: a provider fault that outlasted its
retries (rate limits, 5xx, timeouts): not the agent's failure, so pass rates leave such
trials out unless a run asks to count them."""


class TrialError(Record):
    """Why a trial did not finish."""

    kind: ErrorKind
    """exception, max_steps, timeout, setup, or infrastructure (a provider fault that outlasted
    its retries)."""
    message: str
    """The error's message."""
    type: str | None = None
    """The exception's type name."""
    traceback: str | None = None
    """Where it was raised."""


class AgentOutput(Record):
    """What the agent's code wrote to ``sys.stdout`` and ``sys.stderr`` during its trial
    (from any thread or task it started), and what the subprocesses it started wrote,
    redacted. Each stream keeps its first bytes up to a limit and then says how many
    more there were (``… N bytes more``)."""

    stdout: str = ""
    """What it printed to standard output."""
    stderr: str = ""
    """What it wrote to standard error."""


class EndStateProbe(Record):
    """What one end-state check read when the trial was over."""

    key: str
    """What was read (the check's query, file and path, or function, as JSON): a later
    judging finds the value by it."""
    found: Any = None
    """What was found: a query's rows (a list of rows, each a list of values), a file's
    text, the value at a JSON path, or what a check function returned."""
    error: str | None = None
    """Why nothing could be read (a missing file, a query that failed)."""


class EndState(Record):
    """What the world looked like when the trial was over, read before its environment
    was torn down."""

    captured: Any = None
    """What the environment's ``capture()`` recorded (null without one)."""
    probes: list[EndStateProbe] = Field(default_factory=list)
    """What each of the case's end-state checks read."""

    def probe(self, key: str) -> EndStateProbe | None:
        """What was read under ``key``, if it was."""
        return next((probe for probe in self.probes if probe.key == key), None)


class Trial(Record):
    """One run of one case: the trajectory the agent took, turn by turn."""

    case_id: str
    """The case this trial ran."""
    trial_index: int
    """Which run of the case, counting from 0. Every label for people (the CLI, pytest,
    report.html, junit.xml) numbers trials from 1: "trial 1" is trial_index 0."""
    turns: list[Turn] = Field(default_factory=list)
    """What the agent did with each user turn."""
    error: TrialError | None = None
    """Why the trial did not finish; null when it did."""
    started_at: datetime
    """When the trial started (UTC)."""
    duration_ms: float = 0.0
    """Wall time of the trial."""
    workdir: str | None = None
    """The trial's own working directory, when it was kept."""
    final_session_state: dict[str, Any] | None = None
    """The agent's session state when the trial ended (``None`` when the agent keeps no
    state this package can see, such as an OpenAI-shaped HTTP agent)."""
    agent_output: AgentOutput | None = None
    """What the agent printed during the trial; null when it printed nothing."""
    end_state: EndState | None = None
    """What the world looked like when the trial was over; null when the run set up no
    environment and the case has no end-state checks (or its setup failed)."""
    simulated_state: dict[str, Any] | None = None
    """Where the simulated tools' world ended (their shared state after the trial's last
    simulated call); null when no tool was simulated."""

    @property
    def completed(self) -> bool:
        return self.error is None

    @property
    def number(self) -> int:
        """The trial's number as every human-facing label shows it, counting from 1
        (``trial_index`` counts from 0 and stays for compatibility)."""
        return self.trial_index + 1

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_id, self.trial_index)

    @property
    def tool_calls(self) -> list[RecordedToolCall]:
        return [call for turn in self.turns for call in turn.tool_calls]

    @property
    def final_response(self) -> str | None:
        return self.turns[-1].final_response if self.turns else None

    @property
    def usage(self) -> Usage:
        return Usage.total([turn.usage for turn in self.turns])


class PairedWith(Record):
    """The run made side by side with this one: trial ``j`` of each on a case started
    together. ``runs_per_case`` is then the first round's pairs; an ``adaptive`` run
    added pairs after it to the cases not yet decided, so a case may have more."""

    run_id: str
    """The other run's id."""
    side: Literal["baseline", "candidate"]
    """Which agent this run is."""
    adaptive: bool = False
    """Pairs were added after the first round to undecided cases (``until_decided``)."""


class TrialFigures(Record):
    """What one trial took, as measured: the values a case's efficiency summaries and a
    comparison's efficiency tests are computed from, and the paths its trajectory took.
    Kept in the case's summary (not only with the trial) so a comparison reads them from
    a results.json's summaries alone."""

    trial_index: int
    """Which run of the case (0-based)."""
    errored: bool = False
    """Whether the trial did not finish (its figures cover what it did before it stopped)."""
    cost_usd: float | None = None
    """The agent's model cost in US dollars; null when some call's price is unknown."""
    input_tokens: int = 0
    """Tokens the agent sent to its models."""
    output_tokens: int = 0
    """Tokens the agent's models wrote."""
    model_calls: int = 0
    """Model calls the agent made."""
    tool_calls: int = 0
    """Tool calls the agent made."""
    steps: int = 0
    """The agent's steps: node visits where the framework records them, else model calls."""
    latency_ms: float = 0.0
    """Wall time of the trial."""
    turn_latency_ms: list[float] = Field(default_factory=list)
    """Wall time of each turn, in order."""
    pass_value: float | None = None
    """How firmly the trial passed, in [0, 1]: 1 passed, 0 failed, and for a verdict an
    LLM judge split on, its share of votes for a pass; null for a trial that is no
    verdict on the agent (the provider failed it, or no criterion could judge it)."""
    tool_path: list[str] = Field(default_factory=list)
    """The tools called, in order, over every turn."""
    node_path: list[str] | None = None
    """The nodes (graph nodes, agents) visited, in order, where the framework records them."""

    @classmethod
    def of(cls, trial: Trial, pass_value: float | None = None) -> TrialFigures:
        """The figures of ``trial``, read from its recorded events, and how firmly it
        passed (``pass_value``, from its verdicts)."""
        usage = trial.usage
        nodes = [
            event.name
            for turn in trial.turns
            for event in turn.events
            if isinstance(event, NodeEvent)
        ]
        tools = [call.name for call in trial.tool_calls]
        return cls(
            trial_index=trial.trial_index,
            errored=trial.error is not None,
            cost_usd=usage.known_cost_usd,
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            model_calls=usage.calls,
            tool_calls=len(tools),
            steps=len(nodes) if nodes else usage.calls,
            latency_ms=trial.duration_ms,
            pass_value=pass_value,
            turn_latency_ms=[turn.latency_ms for turn in trial.turns],
            tool_path=tools,
            node_path=nodes or None,
        )


class ValueSpread(Record):
    """How one measure spread over trials: its median and 90th percentile, each with a
    distribution-free 95% interval from order statistics (bounds are observed values;
    with few trials the interval covers less than 95%, and its coverage says how much)."""

    trials: int
    """The trials measured."""
    min: float
    """The smallest value."""
    max: float
    """The largest value."""
    median: float
    """The median (interpolated between the middle values)."""
    median_low: float
    """Lower bound of the median's interval."""
    median_high: float
    """Upper bound of the median's interval."""
    median_coverage: float
    """The median interval's exact coverage (0.95, or less with few trials)."""
    p90: float
    """The 90th percentile (interpolated)."""
    p90_low: float
    """Lower bound of the 90th percentile's interval."""
    p90_high: float
    """Upper bound of the 90th percentile's interval."""
    p90_coverage: float
    """The 90th percentile interval's exact coverage (0.95, or less with few trials)."""


class CaseEfficiency(Record):
    """What a case's trials took, summarised per measure over its trials (errored ones
    included: they spent what they spent)."""

    cost_usd: ValueSpread | None = None
    """The agent's cost per trial in US dollars; null when some trial's cost is unknown."""
    total_tokens: ValueSpread
    """The agent's tokens (prompt and completion) per trial."""
    model_calls: ValueSpread
    """The agent's model calls per trial."""
    tool_calls: ValueSpread
    """The agent's tool calls per trial."""
    latency_ms: ValueSpread
    """Wall time per trial."""


CriterionStatus = Literal["passed", "failed", "not_evaluated", "skipped"]


class CriterionResult(Record):
    """One criterion's verdict on one trial.

    ``not_evaluated`` means the criterion could not give a verdict (a judge that kept
    failing); ``reason`` says why. It never counts as a pass. ``skipped`` means the case
    gives the criterion nothing to judge (no reference answer, say): it neither passes nor
    fails the trial.
    """

    criterion: str
    """The criterion's name in the config."""
    label: str = ""
    """How the scorecard names it."""
    status: CriterionStatus
    """passed, failed, not_evaluated (no verdict; reason says why) or skipped (nothing to judge)."""
    score: float | None = None
    """The score in [0, 1]; null without a verdict."""
    threshold: float | None = None
    """The score a pass needs."""
    reason: str | None = None
    """Why it fell short, was not evaluated or was skipped."""
    details: dict[str, Any] = Field(default_factory=dict)
    """The criterion's evidence: per-turn matches, judge votes and reasoning, ..."""
    usage: Usage | None = None
    """The judge's model usage for this verdict."""
    latency_ms: float | None = None
    """How long the verdict took."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


TrialStatus = Literal["passed", "failed", "errored", "not_evaluated"]


class TrialResult(Record):
    """A trial with its criterion results and overall status.

    passed: completed and every criterion passed. errored: the agent failed to finish.
    failed: some criterion failed. not_evaluated: none failed but some had no verdict.
    """

    trial: Trial
    """The trial."""
    criteria: list[CriterionResult] = Field(default_factory=list)
    """Each criterion's verdict on it."""
    status: TrialStatus
    """passed, failed, errored, or not_evaluated (some criterion gave no verdict, or all were
    skipped)."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


class CriterionSummary(Record):
    """A criterion across the trials of a case (or of the run)."""

    criterion: str
    """The criterion's name in the config."""
    label: str = ""
    """How the scorecard names it."""
    threshold: float | None = None
    """The score a pass needs."""
    mean_score: float | None = None
    """The mean score over the trials it judged; null if none."""
    passed: int = 0
    """Trials it passed."""
    failed: int = 0
    """Trials it failed."""
    not_evaluated: int = 0
    """Trials it gave no verdict on."""
    skipped: int = 0
    """Trials it had nothing to judge in."""
    judge_sampled_trials: int = 0
    """An LLM judge's: trials it judged with 2 samples or more (its noise is measured on
    those)."""
    judge_split_trials: int = 0
    """Of those, trials whose samples did not all agree."""
    judge_flip_rate: float | None = None
    """How often two of the judge's samples on the same answer disagree."""
    judge_variance_share: float | None = None
    """The share of the pass rate's variance the judge's noise explains."""


class ExpectedTurn(Record):
    """What the eval set expected of one user turn, copied into the results so a report
    re-rendered from ``results.json`` alone still shows expected calls and references."""

    invocation_id: str
    """The turn's id."""
    user_text: str = ""
    """What the user says."""
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    """The expected tool calls."""
    final_response: str | None = None
    """The reference answer, if any."""


class CaseResult(Record):
    """A case across its trials: the pass rate is the signal."""

    case_id: str
    """The case's id."""
    label: str
    """What the case is judged on."""
    runs: int
    """Trials run."""
    passed: int
    """Trials that passed."""
    failed: int
    """Trials some criterion failed."""
    errored: int
    """Trials that did not finish."""
    infrastructure_errors: int = 0
    """Errored trials whose error was the provider's (``TrialError.kind ==
    "infrastructure"``); included in ``errored``, left out of ``pass_rate``'s
    denominator unless the run counts them."""
    not_evaluated: int
    """Trials without a verdict (never counted as passed)."""
    rated_runs: int | None = None
    """The trials the pass rate is over: ``runs`` less the not-evaluated ones and the
    provider-failed ones, unless the run counts those (read as ``runs`` from files
    written before it existed)."""
    pass_rate: float
    """passed / rated_runs."""
    ci_low: float
    """Lower bound of the pass rate's Wilson 95% interval."""
    ci_high: float
    """Upper bound of the pass rate's Wilson 95% interval."""
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    """k → the chance that at least one of k trials passes."""
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    """k → the chance that all k trials pass."""
    criteria: list[CriterionSummary] = Field(default_factory=list)
    """Each criterion over the case's trials."""
    mean_latency_ms: float = 0.0
    """Mean wall time of a trial."""
    usage: Usage = Field(default_factory=Usage)
    """The agent's model usage over the case's trials."""
    judge_usage: Usage = Field(default_factory=Usage)
    """The judges' model usage over the case's trials."""
    expected: list[ExpectedTurn] = Field(default_factory=list)
    """What the eval set expected, turn by turn."""
    next_step_only: bool = False
    """The criteria judged only the agent's next step of each trial (the case's
    ``next_step_only``): its first tool calls, or its answer when it called no tool."""
    trial_figures: list[TrialFigures] = Field(default_factory=list)
    """What each trial took (cost, tokens, calls, latency, paths), sorted by trial index."""
    efficiency: CaseEfficiency | None = None
    """What the case's trials took, summarised (null without trials, or in files written
    before schema 1.3)."""

    @model_validator(mode="after")
    def _rated_defaults_to_runs(self) -> CaseResult:
        if self.rated_runs is None:
            self.rated_runs = self.runs
        return self


class RunTotals(Record):
    cases: int = 0
    """Cases in the run."""
    trials: int = 0
    """Trials run."""
    passed: int = 0
    """Trials that passed."""
    failed: int = 0
    """Trials some criterion failed."""
    errored: int = 0
    """Trials that did not finish."""
    infrastructure_errors: int = 0
    """Errored trials the model provider failed (included in errored)."""
    not_evaluated: int = 0
    """Trials without a verdict (never counted as passed)."""
    rated_trials: int | None = None
    """The trials the pass rate is over: ``trials`` less the provider-failed ones, unless
    the run counts those (read as ``trials`` from files written before it existed)."""
    pass_rate: float = 0.0
    """passed / rated_trials."""
    ci_low: float = 0.0
    """Lower bound of the pass rate's Wilson 95% interval."""
    ci_high: float = 0.0
    """Upper bound of the pass rate's Wilson 95% interval."""
    usage: Usage = Field(default_factory=Usage)
    """The agent's model usage over the run."""
    judge_usage: Usage = Field(default_factory=Usage)
    """The judges' model usage over the run."""
    judge_calls: int = 0
    """Judge model calls made."""
    judge_cache_hits: int = 0
    """Judge verdicts reused from the cache."""
    trial_latency_ms: ValueSpread | None = None
    """Wall time per trial over the whole run (null without trials, or in files written
    before schema 1.3)."""

    @model_validator(mode="after")
    def _rated_defaults_to_trials(self) -> RunTotals:
        if self.rated_trials is None:
            self.rated_trials = self.trials
        return self


class RejudgedFrom(Record):
    """The run whose stored trials a re-judged run judged again (its agent was not run)."""

    run_id: str
    """The source run's id."""
    run_dir: str
    """The source run's folder, where it was when it was re-judged."""


class RunResult(Record):
    """A whole evaluation run: the document behind results.json."""

    schema_version: str = SCHEMA_VERSION
    """This document's schema version."""
    run_id: str
    """The run's id (the end of its folder's name)."""
    eval_set_id: str
    """The eval set's id."""
    eval_set_name: str = ""
    """The eval set's name."""
    agent: str
    """The agent's name."""
    agent_spec: str | None = None
    """What the agent was loaded from (``package.module:attr``, ``path/file.py:attr`` or
    an endpoint URL), when the run was started from parameters."""
    track: str | None = None
    """The history the run joins (``adhoc``, ``schedule``, ``event`` or a team's own name):
    its ``latest`` baseline is the last good run of the same track."""
    paired_with: PairedWith | None = None
    """For a run made side by side with another (a paired run's two agents): the other
    run; the two are compared pair by pair (before ``cases``: a comparison reads the
    summary alone)."""
    agent_version: str | None = None
    """The version of the agent under test, as its deploy named it."""
    git_sha: str | None = None
    """The commit the agent under test was built from."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Free-form name → value pairs the run was started with (environment, team, ...)."""
    agent_model: str | None = None
    """The agent's model, when it has one."""
    judge_model: str | None = None
    """The LLM judges' model, when the run has judges."""
    simulated: bool = False
    """Whether the offline demo model stood in for the agent's or the judge's model: named
    by the run, or answering some model call of the agent's (its replies say so, whatever
    model name the agent's client sent)."""
    counts_infrastructure_errors: bool = False
    """Whether trials the model provider failed (after retries) count against the pass
    rates; by default they are reported apart and left out."""
    runs_per_case: int
    """Trials per case."""
    started_at: datetime
    """When the run started (UTC)."""
    finished_at: datetime
    """When the results were written (UTC)."""
    duration_s: float
    """Seconds the run spent, on the monotonic clock: each session's time, summed over
    a resumed run's sessions (never negative, whatever the wall clock did)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The config the run used (non-default values)."""
    totals: RunTotals
    """The run's totals."""
    criteria: list[CriterionSummary] = Field(default_factory=list)
    """Each criterion over every trial."""
    judge_agreement: list[JudgeAgreement] = Field(default_factory=list)
    """Each judged criterion whose verdicts people labelled, against them (empty without
    labels)."""
    cases: list[CaseResult] = Field(default_factory=list)
    """Each case's results."""
    trials: list[TrialResult] = Field(default_factory=list)
    """Every trial with its verdicts, sorted by case id and trial index."""
    notes: list[str] = Field(default_factory=list)
    """What a reader should know about the run (a subset of cases, trials nothing judged, ...)."""
    rejudged_from: RejudgedFrom | None = None
    """For a run that judged an earlier run's trials again: that run (its trials are these)."""
