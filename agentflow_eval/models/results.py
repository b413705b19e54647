"""What a run produces: trials (what the agent did), criterion results (how it was judged),
case and run summaries. These models are the schema of ``results.json`` and of the
streamed ``trials.jsonl``/``judged.jsonl`` files; bump ``SCHEMA_VERSION`` on any change
a reader could notice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA_VERSION",
    "CaseResult",
    "CriterionResult",
    "CriterionSummary",
    "ExpectedTurn",
    "RecordedToolCall",
    "RunResult",
    "RunTotals",
    "Trial",
    "TrialError",
    "TrialResult",
    "Turn",
    "Usage",
]

SCHEMA_VERSION = "1.0"


class Record(BaseModel):
    """Base of result records: plain snake_case JSON, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid")


class Usage(Record):
    """Tokens and cost as the model reported them (zero where it did not)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls

    @classmethod
    def total(cls, usages: list[Usage]) -> Usage:
        out = cls()
        for usage in usages:
            out.add(usage)
        return out


class RecordedToolCall(Record):
    """A tool call the agent made, with what came back and how long it took."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    duration_ms: float = 0.0
    id: str | None = None


class Turn(Record):
    """What the agent did with one user turn."""

    invocation_id: str
    user_text: str
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    intermediate_responses: list[str] = Field(default_factory=list)
    final_response: str | None = None
    latency_ms: float = 0.0
    usage: Usage = Field(default_factory=Usage)


ErrorKind = Literal["exception", "max_steps", "timeout", "setup", "infrastructure"]
"""Why a trial did not finish. ``infrastructure``: a provider fault that outlasted its
retries (rate limits, 5xx, timeouts): not the agent's failure, so pass rates leave such
trials out unless a run asks to count them."""


class TrialError(Record):
    """Why a trial did not finish."""

    kind: ErrorKind
    message: str
    type: str | None = None
    traceback: str | None = None


class Trial(Record):
    """One run of one case: the trajectory the agent took, turn by turn."""

    case_id: str
    trial_index: int
    turns: list[Turn] = Field(default_factory=list)
    error: TrialError | None = None
    started_at: datetime
    duration_ms: float = 0.0
    workdir: str | None = None
    final_session_state: dict[str, Any] | None = None
    """The agent's session state when the trial ended (``None`` when the agent keeps no
    state this package can see, such as an OpenAI-shaped HTTP agent)."""

    @property
    def completed(self) -> bool:
        return self.error is None

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


CriterionStatus = Literal["passed", "failed", "not_evaluated", "skipped"]


class CriterionResult(Record):
    """One criterion's verdict on one trial.

    ``not_evaluated`` means the criterion could not give a verdict (a judge that kept
    failing); ``reason`` says why. It never counts as a pass. ``skipped`` means the case
    gives the criterion nothing to judge (no reference answer, say): it neither passes nor
    fails the trial.
    """

    criterion: str
    label: str = ""
    status: CriterionStatus
    score: float | None = None
    threshold: float | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None
    latency_ms: float | None = None

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
    criteria: list[CriterionResult] = Field(default_factory=list)
    status: TrialStatus

    @property
    def passed(self) -> bool:
        return self.status == "passed"


class CriterionSummary(Record):
    """A criterion across the trials of a case (or of the run)."""

    criterion: str
    label: str = ""
    threshold: float | None = None
    mean_score: float | None = None
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    skipped: int = 0


class ExpectedTurn(Record):
    """What the eval set expected of one user turn, copied into the results so a report
    re-rendered from ``results.json`` alone still shows expected calls and references."""

    invocation_id: str
    user_text: str = ""
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    final_response: str | None = None


class CaseResult(Record):
    """A case across its trials: the pass rate is the signal."""

    case_id: str
    label: str
    runs: int
    passed: int
    failed: int
    errored: int
    infrastructure_errors: int = 0
    """Errored trials whose error was the provider's (``TrialError.kind ==
    "infrastructure"``); included in ``errored``, left out of ``pass_rate``'s
    denominator unless the run counts them."""
    not_evaluated: int
    pass_rate: float
    ci_low: float
    ci_high: float
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    criteria: list[CriterionSummary] = Field(default_factory=list)
    mean_latency_ms: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    judge_usage: Usage = Field(default_factory=Usage)
    expected: list[ExpectedTurn] = Field(default_factory=list)


class RunTotals(Record):
    cases: int = 0
    trials: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    infrastructure_errors: int = 0
    not_evaluated: int = 0
    pass_rate: float = 0.0
    ci_low: float = 0.0
    ci_high: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    judge_usage: Usage = Field(default_factory=Usage)
    judge_calls: int = 0
    judge_cache_hits: int = 0


class RunResult(Record):
    """A whole evaluation run: the document behind results.json."""

    schema_version: str = SCHEMA_VERSION
    run_id: str
    eval_set_id: str
    eval_set_name: str = ""
    agent: str
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    runs_per_case: int
    started_at: datetime
    finished_at: datetime
    duration_s: float
    config: dict[str, Any] = Field(default_factory=dict)
    totals: RunTotals
    criteria: list[CriterionSummary] = Field(default_factory=list)
    cases: list[CaseResult] = Field(default_factory=list)
    trials: list[TrialResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
