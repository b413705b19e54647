"""The history of an eval set's published runs: ``runs.json`` (every run, newest first)
and ``latest.json`` (a pointer to the newest completed run), kept beside the run folders.

Entries are keyed by their folder, so publishing a run again (a retry, a later
``publish`` of a pending run) replaces its entry instead of adding a second one.

Every run goes into the history, but ``latest`` (the baseline ``--baseline latest``
compares with) only moves to a *completed* run: one that has every planned trial
(``complete``), measured something (``measured``: not every trial errored or went
without a verdict) and failed none of its gates (``gate_failed``: its pass rate was below
``min_pass_rate`` or a case's below ``min_case_pass_rate``, or it regressed, or could not
be compared, under ``fail_on_regression``). A run that failed a gate must not become the
baseline its own retry is compared with, nor a run that measured nothing the baseline of
the next night.

Each entry keeps its cases' pass counts (``case_counts``), so the index can show each
case's recent trend, what its trials took (``efficiency``: per trial, the median latency,
tokens and cost with their intervals), so the trend page can show efficiency by version
and window, and a digest of its comparison with its baseline, if it had one: the tests
that called a drop, named with their p-values, so the page shows the test and not a
line on a chart. Every field added since the first manifests has a default, so older
``runs.json`` files read as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.errors import StoreError
from agentflow_eval.files.limits import UnreadableFile, validate_json
from agentflow_eval.models.results import CaseEfficiency, RunResult
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.keys import join_key, key_part

__all__ = [
    "CASE_HISTORY_RUNS",
    "MANIFEST_VERSION",
    "AgentIdentity",
    "ComparisonDigest",
    "DropTest",
    "EfficiencyDrop",
    "LatestPointer",
    "RunEntry",
    "RunsManifest",
    "find_labelled_run",
    "published_url",
    "run_entry",
]

MANIFEST_VERSION = 1

CASE_HISTORY_RUNS = 20
"""The newest runs whose per-case counts the manifest keeps (for the cases' trends);
older entries keep their totals only, so runs.json stays small for large eval sets."""


class DropTest(BaseModel):
    """A case whose pass rate a test called a drop: its counts on each side, the test
    and its Holm-adjusted p-value (or, for a case decided pair by pair, its e-value)."""

    model_config = ConfigDict(extra="ignore")

    case_id: str
    test: str
    baseline: tuple[int, int] | None = None
    """Trials passed, trials counted."""
    candidate: tuple[int, int] | None = None
    change: float | None = None
    p_adjusted: float | None = None
    e_value: float | None = None


class EfficiencyDrop(BaseModel):
    """A measure a test called significantly worse: a case's (``case_id``) or the run's
    overall (None), its medians' ratio and the test's Holm-adjusted p-value."""

    model_config = ConfigDict(extra="ignore")

    case_id: str | None = None
    measure: str
    test: str
    ratio: float | None = None
    p_adjusted: float | None = None
    regression: bool = False
    """Beyond the tolerance the team gave: the gate's regression, not only a change."""


class ComparisonDigest(BaseModel):
    """What a run's comparison with its baseline found, in brief (``comparison.json``
    in its folder has it all); ``problem`` says why there was no comparison."""

    model_config = ConfigDict(extra="ignore")

    baseline: str
    baseline_run_id: str | None = None
    verdict: str | None = None
    change: float | None = None
    regressed_cases: list[str] = Field(default_factory=list)
    improved_cases: list[str] = Field(default_factory=list)
    problem: str | None = None
    alpha: float | None = None
    """The level the tests were held to."""
    overall_p: float | None = None
    """The overall change's p-value (paired by case)."""
    drops: list[DropTest] = Field(default_factory=list)
    """The regressed cases' tests."""
    efficiency_drops: list[EfficiencyDrop] = Field(default_factory=list)
    """The measures significantly worse."""


@dataclass(frozen=True)
class AgentIdentity:
    """Which agent a run evaluated, and in which history, as ``latest`` matches it: what
    it was loaded from (``spec``, when recorded), its name, its model (when it has one)
    and its track (when recorded)."""

    name: str
    spec: str | None = None
    model: str | None = None
    track: str | None = None

    @classmethod
    def of(cls, run: RunResult) -> AgentIdentity:
        return cls(run.agent, run.agent_spec, run.agent_model, run.track)

    @classmethod
    def of_entry(cls, entry: RunEntry) -> AgentIdentity:
        return cls(entry.agent, entry.agent_spec, entry.agent_model, entry.track)

    def describe(self) -> str:
        model = f" (model {self.model})" if self.model else ""
        track = f" in history {self.track!r}" if self.track else ""
        return f"{self.spec or self.name}{model}{track}"


class RunEntry(BaseModel):
    """One published run, as the index lists it. Paths are relative to the eval set's
    folder, so the index works wherever the folder is served from."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    folder: str
    started_at: datetime
    finished_at: datetime
    published_at: datetime
    agent: str
    agent_spec: str | None = None
    track: str | None = None
    """The history the run joined; None for runs published before tracks were recorded
    (they count as every track's, so an upgrade keeps its baselines)."""
    agent_model: str | None = None
    judge_model: str | None = None
    simulated: bool = False
    runs_per_case: int
    cases: int
    trials: int
    passed: int
    failed: int
    errored: int
    pass_rate: float
    ci_low: float
    ci_high: float
    files: list[str] = Field(default_factory=list)
    agent_version: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    complete: bool = True
    """Every planned trial (cases × runs per case) is in the results."""
    gate_failed: bool = False
    """The run failed a gate: a pass-rate gate (``min_pass_rate``,
    ``min_case_pass_rate``) or its regression gate (``fail_on_regression``)."""
    measured: bool = True
    """Some trial has a verdict on the agent (passed or failed): a run whose every trial
    errored, or had no verdict, measured nothing."""
    case_counts: dict[str, tuple[int, int]] = Field(default_factory=dict)
    """Per case: trials passed, and trials counted (infrastructure errors left out)."""
    comparison: ComparisonDigest | None = None
    efficiency: CaseEfficiency | None = None
    """What the run's trials took, over all its cases (None: no trials, or a run
    published before entries kept it)."""

    def path(self, name: str) -> str:
        return f"{self.folder}/{name}"

    @property
    def window(self) -> tuple[datetime, datetime]:
        """The time the run covers: for production traces, its traces' window (labels
        ``window_start`` and ``window_end``), else the time it ran."""
        try:
            start = datetime.fromisoformat(self.labels["window_start"])
            end = datetime.fromisoformat(self.labels["window_end"])
        except (KeyError, ValueError):
            return self.started_at, self.finished_at
        return _utc(start), _utc(end)  # a label without an offset is read as UTC

    def evaluated(self, agent: AgentIdentity) -> bool:
        """Whether this run evaluated ``agent`` in its history: the same spec (its name,
        where either run did not record one), the same model where ``agent`` names one,
        and the same track (where both recorded one)."""
        if agent.spec is not None and self.agent_spec is not None:
            same = agent.spec == self.agent_spec
        else:
            same = agent.name == self.agent
        same_track = agent.track is None or self.track is None or agent.track == self.track
        return same and same_track and (agent.model is None or agent.model == self.agent_model)

    @property
    def completed(self) -> bool:
        """Whether the run may be ``latest``: complete, measured, and not failed by its
        gate."""
        return self.complete and self.measured and not self.gate_failed


class RunsManifest(BaseModel):
    """``runs.json``: every published run of one eval set, newest first."""

    model_config = ConfigDict(extra="ignore")

    manifest_version: int = MANIFEST_VERSION
    eval_set_id: str
    eval_set_name: str = ""
    runs: list[RunEntry] = Field(default_factory=list)

    def latest_completed(self) -> RunEntry | None:
        """The newest run that may be ``latest`` (see :attr:`RunEntry.completed`)."""
        return next((run for run in self.runs if run.completed), None)

    def with_run(self, entry: RunEntry, eval_set_name: str = "") -> RunsManifest:
        """This manifest with ``entry`` added (or replacing the entry of its folder)."""
        runs = [run for run in self.runs if run.folder != entry.folder] + [entry]
        runs.sort(key=lambda run: (run.started_at, run.folder), reverse=True)
        runs = [
            run
            if index < CASE_HISTORY_RUNS or not run.case_counts
            else run.model_copy(update={"case_counts": {}})
            for index, run in enumerate(runs)
        ]
        return RunsManifest(
            eval_set_id=self.eval_set_id,
            eval_set_name=eval_set_name or self.eval_set_name,
            runs=runs,
        )


class LatestPointer(BaseModel):
    """``latest.json``: where the newest run of the eval set is, and how it did."""

    eval_set_id: str
    run_id: str
    folder: str
    started_at: datetime
    pass_rate: float
    ci_low: float
    ci_high: float
    simulated: bool
    report: str
    results: str
    junit: str
    report_url: str | None = None

    @classmethod
    def of(cls, eval_set_id: str, entry: RunEntry, report_url: str | None) -> LatestPointer:
        return cls(
            eval_set_id=eval_set_id,
            run_id=entry.run_id,
            folder=entry.folder,
            started_at=entry.started_at,
            pass_rate=entry.pass_rate,
            ci_low=entry.ci_low,
            ci_high=entry.ci_high,
            simulated=entry.simulated,
            report=entry.path("report.html"),
            results=entry.path("results.json"),
            junit=entry.path("junit.xml"),
            report_url=report_url,
        )


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def run_entry(
    run: RunResult,
    folder: str,
    files: list[str],
    published_at: datetime | None = None,
    *,
    comparison: ComparisonDigest | None = None,
    gate_failed: bool = False,
    efficiency: CaseEfficiency | None = None,
) -> RunEntry:
    """The index entry of ``run``, published in ``folder`` (``efficiency``: what its
    trials took, summarised by the caller, which may import the run's statistics)."""
    totals = run.totals
    return RunEntry(
        run_id=run.run_id,
        folder=folder,
        started_at=_utc(run.started_at),
        finished_at=_utc(run.finished_at),
        published_at=_utc(published_at or datetime.now(UTC)),
        agent=run.agent,
        agent_spec=run.agent_spec,
        track=run.track,
        agent_model=run.agent_model,
        judge_model=run.judge_model,
        simulated=run.simulated,
        runs_per_case=run.runs_per_case,
        cases=totals.cases,
        trials=totals.trials,
        passed=totals.passed,
        failed=totals.failed,
        errored=totals.errored,
        pass_rate=totals.pass_rate,
        ci_low=totals.ci_low,
        ci_high=totals.ci_high,
        files=files,
        agent_version=run.agent_version,
        labels=dict(run.labels),
        complete=bool(run.cases) and all(case.runs >= run.runs_per_case for case in run.cases),
        gate_failed=gate_failed,
        measured=totals.passed + totals.failed > 0,
        case_counts={
            case.case_id: (case.passed, max(case.runs - case.infrastructure_errors, 0))
            for case in run.cases
        },
        comparison=comparison,
        efficiency=efficiency,
    )


# ------------------------------------------------------------ finding a run again


def find_labelled_run(
    store: ObjectStore, eval_set_id: str, key: str, value: str
) -> RunEntry | None:
    """The newest published run of ``eval_set_id`` whose label ``key`` is ``value``, or
    None when there is none (or no runs.json yet). Raises :class:`StoreError`."""
    raw = store.get(join_key(key_part(eval_set_id), "runs.json"))
    if raw is None:
        return None
    try:
        manifest = validate_json(RunsManifest, raw, f"{store.describe()}: {eval_set_id}/runs.json")
    except UnreadableFile as exc:
        raise StoreError(str(exc), transient=False) from None
    return next((run for run in manifest.runs if run.labels.get(key) == value), None)


def published_url(store: ObjectStore, eval_set_id: str, entry: RunEntry, name: str) -> str:
    """Where a person opens file ``name`` of the published run ``entry``."""
    return store.url(join_key(key_part(eval_set_id), entry.folder, name))
