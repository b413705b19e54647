"""What a comparison finds, as the JSON ``agentflow-eval compare --json`` prints.

Field names are stable: readers (CI scripts, the regression flow, reports) rely on them;
bump :data:`COMPARISON_VERSION` on any change a reader could notice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentflow_eval.compare.exact import TestMethod
from agentflow_eval.compare.power import PowerMethod
from agentflow_eval.models.agreement import Estimate
from agentflow_eval.models.tolerances import EfficiencyTolerances, Measure

__all__ = [
    "COMPARISON_VERSION",
    "BaselineProblem",
    "CaseComparison",
    "CaseCounts",
    "CaseEfficiency",
    "ChangeVerdict",
    "Comparison",
    "CriterionChange",
    "EfficiencyComparison",
    "EfficiencyFinding",
    "EfficiencyTest",
    "EfficiencyVerdict",
    "JudgeAgreementChange",
    "MeasureChange",
    "OverallChange",
    "OverallEfficiencyChange",
    "Pairing",
    "PathDivergence",
    "PowerSummary",
    "RunComparison",
    "RunInfo",
    "SequentialCase",
    "SequentialStatus",
    "SequentialSummary",
    "StepCount",
    "Verdict",
]

COMPARISON_VERSION = "1.4"
"""1.1: a case's counts leave out its trials without a verdict (``not_evaluated``), as they
leave out those the provider failed. 1.2: efficiency against the baseline (per case and
overall: cost, tokens, latency, tool calls; ``efficiency``) and where a regressed case's
trajectories part ways (``divergence``); ``regressed`` also holds for an efficiency
change beyond a tolerance the team gave. 1.3: ``pairing`` (runs made apart or side by
side); apart, latency is not called and cost, tokens and tool calls only beyond a drift
margin; side by side, efficiency is tested pair by pair, and per-case verdicts come from
anytime-valid evidence on the pairs (``sequential``). 1.4: each judge people checked in both
runs, its agreement and corrected pass rate on both sides (``judge_agreement``)."""

ChangeVerdict = Literal["regression", "improvement", "no significant change"]
Verdict = Literal["regression", "improvement", "no significant change", "added", "removed"]
"""``regression``/``improvement``: the pass rate changed significantly (per case: Holm-
adjusted exact test; overall: the paired interval excludes zero). ``no significant
change``: the data cannot tell a change from noise (see the power summary for how large
a change could hide). ``added``/``removed``: the case is in the candidate only / the
baseline only."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunInfo(_Model):
    """One side of the comparison: which run, and where its results were read."""

    source: str
    run_id: str
    eval_set_id: str
    eval_set_name: str = ""
    agent: str
    agent_model: str | None = None
    started_at: datetime
    runs_per_case: int
    simulated: bool = False


class CaseCounts(_Model):
    """A case's trials on one side. ``runs`` counts only what the agent answered for:
    trials that failed for infrastructure reasons (a provider fault after retries) are
    left out of ``runs`` and ``passed`` and counted in ``infrastructure_errors``; trials
    no criterion gave a verdict on (a judge that never answered) likewise, counted in
    ``not_evaluated``."""

    passed: int
    runs: int
    infrastructure_errors: int = 0
    not_evaluated: int = 0
    pass_rate: float | None = Field(description="passed / runs; None with no countable trial")


class CriterionChange(_Model):
    """A criterion's mean score on both sides (None where a side has no score)."""

    criterion: str
    label: str = ""
    baseline_mean: float | None = None
    candidate_mean: float | None = None
    change: float | None = None


class JudgeAgreementChange(_Model):
    """A judge people checked in both runs: its agreement with them and κ on each side,
    and the criterion's pass rate corrected for its error on each side, with the change
    (its interval approximate: each side's interval read as a normal one)."""

    criterion: str
    label: str = ""
    baseline_agreement: Estimate | None = None
    candidate_agreement: Estimate | None = None
    baseline_kappa: Estimate | None = None
    candidate_kappa: Estimate | None = None
    baseline_corrected: Estimate | None = None
    candidate_corrected: Estimate | None = None
    corrected_change: Estimate | None = None
    untrustworthy: list[Literal["baseline", "candidate"]] = Field(default_factory=list)


EfficiencyVerdict = Literal[
    "slower",
    "faster",
    "costlier",
    "cheaper",
    "hungrier",
    "leaner",
    "chattier",
    "terser",
    "no significant change",
]
"""Per measure, a significant change (Holm-adjusted at ``alpha``): latency ``slower``/
``faster``; cost ``costlier``/``cheaper``; tokens ``hungrier``/``leaner`` (more/fewer
tokens); tool calls ``chattier``/``terser`` (more/fewer calls)."""

EfficiencyTest = Literal["mann-whitney-u", "wilcoxon-signed-rank"]
"""The per-case test on the trials' values: for runs made apart, the two-sided
Mann–Whitney U test (Wilcoxon rank-sum), exact without ties up to 8 trials a side, else
the normal approximation with tie and continuity corrections; for runs made side by side,
the two-sided Wilcoxon signed-rank test on the pairs' differences
(:mod:`agentflow_eval.compare.efficiency`)."""

Pairing = Literal["apart", "paired"]
"""How the two runs were made: ``apart`` (at different times, each on its machine's and
provider's load then) or ``paired`` (side by side, trial ``j`` of each on the same case
started together)."""

OverallEfficiencyMethod = Literal["geometric mean of per-case median ratios, t on log ratios"]


class MeasureChange(_Model):
    """One measure of one case on both sides: the medians over the trials tested (errored
    trials left out), their ratio, the test and its verdict."""

    measure: Measure
    baseline_trials: int = 0
    candidate_trials: int = 0
    baseline_median: float | None = None
    candidate_median: float | None = None
    ratio: float | None = Field(
        default=None, description="candidate median / baseline median (None: baseline median 0)"
    )
    p_value: float | None = Field(default=None, description="two-sided Mann–Whitney U p-value")
    p_adjusted: float | None = Field(
        default=None, description="Holm-adjusted across the cases tested for this measure"
    )
    test: EfficiencyTest | None = None
    verdict: EfficiencyVerdict = "no significant change"
    tolerance: float | None = Field(
        default=None, description="the increase the gate tolerates (None: not gated)"
    )
    beyond_tolerance: bool = Field(
        default=False,
        description="significantly worse and the median rose by more than the tolerance",
    )
    note: str | None = None


class CaseEfficiency(_Model):
    """A case's efficiency on both sides: one :class:`MeasureChange` per measure."""

    errored_baseline: int = 0
    errored_candidate: int = 0
    measures: list[MeasureChange] = Field(default_factory=list)


class OverallEfficiencyChange(_Model):
    """One measure over the cases both runs have, paired by case: the geometric mean of
    the per-case ratios of medians, with a ``confidence`` interval from Student's t on
    the log ratios (always above zero); None with fewer than two cases to pair."""

    measure: Measure
    verdict: EfficiencyVerdict = "no significant change"
    paired_cases: int = 0
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    p_value: float | None = None
    method: OverallEfficiencyMethod = "geometric mean of per-case median ratios, t on log ratios"
    worse_cases: int = Field(default=0, description="cases significantly worse (Holm)")
    better_cases: int = Field(default=0, description="cases significantly better (Holm)")
    tolerance: float | None = None
    beyond_tolerance: bool = False
    note: str | None = None


class EfficiencyComparison(_Model):
    """Efficiency against the baseline: the per-case test, the tolerances the gate was
    given, each measure overall, and whether some change went beyond its tolerance."""

    test: EfficiencyTest = "mann-whitney-u"
    pairing: Pairing = "apart"
    drift_margin: float | None = Field(
        default=None,
        description="runs made apart: the change a run-wide shift of the machine or the "
        "provider could explain, within which no case or overall verdict is given (latency "
        "is not called at all apart)",
    )
    tolerances: EfficiencyTolerances = Field(default_factory=EfficiencyTolerances)
    overall: list[OverallEfficiencyChange] = Field(default_factory=list)
    regressed: bool = Field(
        default=False,
        description="a significant increase beyond its tolerance, overall or in some case",
    )
    notes: list[str] = Field(default_factory=list)


class EfficiencyFinding(_Model):
    """A significant efficiency change for the worse, where summaries and events list
    them: a case's (``case_id``) or the run's overall (``case_id`` None), and whether it
    went beyond its tolerance (then it is a regression)."""

    case_id: str | None = None
    measure: Measure
    verdict: EfficiencyVerdict
    ratio: float | None = None
    baseline_median: float | None = None
    candidate_median: float | None = None
    p_adjusted: float | None = None
    tolerance: float | None = None
    beyond_tolerance: bool = False


class StepCount(_Model):
    """What was called at the divergence step: trials that called ``name`` there on
    each side (``name`` is ``(end)`` for trials whose path had ended)."""

    name: str
    baseline: int
    candidate: int


class PathDivergence(_Model):
    """Where a case's trajectories part ways: each side's most common path (of tools
    called, or of nodes visited) with how many trials took it, and at the first step
    where those paths differ (1-based) what each side's trials called there."""

    kind: Literal["tool", "node"]
    baseline_trials: int
    candidate_trials: int
    baseline_path: list[str]
    baseline_path_trials: int
    candidate_path: list[str]
    candidate_path_trials: int
    step: int | None = Field(default=None, description="None: the most common paths agree")
    calls: list[StepCount] = Field(default_factory=list)


class CaseComparison(_Model):
    """One case: its counts on both sides, the exact test and the verdict."""

    case_id: str
    label: str = ""
    verdict: Verdict
    baseline: CaseCounts | None = None
    candidate: CaseCounts | None = None
    change: float | None = Field(
        default=None, description="candidate pass rate minus baseline pass rate"
    )
    p_value: float | None = Field(default=None, description="two-sided exact p-value")
    p_adjusted: float | None = Field(
        default=None, description="Holm-adjusted across the tested cases; significant at <= alpha"
    )
    test: TestMethod | None = None
    criteria: list[CriterionChange] = Field(default_factory=list)
    note: str | None = None
    efficiency: CaseEfficiency | None = None
    divergence: list[PathDivergence] = Field(default_factory=list)


class OverallChange(_Model):
    """The change in pass rate over the cases both runs have, paired by case: the mean of
    the per-case pass rates on each side, their difference with a ``confidence`` interval
    (Student's t over the per-case differences; see ``agentflow_eval.compare.paired``)."""

    verdict: ChangeVerdict
    paired_cases: int
    added_cases: int = 0
    removed_cases: int = 0
    regressed_cases: int = 0
    improved_cases: int = 0
    baseline_pass_rate: float | None = None
    candidate_pass_rate: float | None = None
    change: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    standard_error: float | None = None
    clustered_se: float | None = None
    trial_se: float | None = None
    p_value: float | None = None
    note: str | None = None


class PowerSummary(_Model):
    """What the per-case test can detect with the trials the runs used.

    ``minimum_detectable_drop``: the smallest drop from ``reference_pass_rate`` that a
    case flags as a regression with ``target_power``, at the level a case that regressed
    alone among ``cases_tested`` must reach after Holm's correction (``level``, one-sided
    alpha / (2 m)); ``minimum_detectable_drop_alone`` at ``alpha / 2``, for a case tested
    by itself; ``minimum_detectable_drop_from_full`` at ``level`` for a case that always
    passed (100%), the easiest drop to see. None: not even a drop to 0 is flagged that
    often. ``runs_needed``: trials
    per side for a case to flag a drop of ``detect_drop`` with ``target_power`` at
    ``level`` (``runs_needed_exceeds``: more than ``runs_needed``)."""

    alpha: float
    target_power: float
    cases_tested: int
    runs_baseline: int = Field(description="median countable trials per case, baseline")
    runs_candidate: int = Field(description="median countable trials per case, candidate")
    reference_pass_rate: float
    level: float
    test: TestMethod
    method: PowerMethod
    minimum_detectable_drop: float | None = None
    minimum_detectable_drop_alone: float | None = None
    minimum_detectable_drop_from_full: float | None = None
    detect_drop: float
    power_at_detect_drop: float | None = None
    runs_needed: int | None = None
    runs_needed_method: PowerMethod | None = None
    runs_needed_exceeds: bool = False


SequentialStatus = Literal["regressed", "improved", "cleared", "capped", "undecided"]
"""A paired case's verdict from its pairs (:mod:`agentflow_eval.compare.sequential`):
``regressed``/``improved``, its e-value for a drop (a rise) reached ``cases / alpha``;
``cleared``, its e-value against a drop of ``clear_drop`` or more reached ``1 / alpha``;
``capped``, it reached the pairs a case may have first; ``undecided``, the run ended
(its budget spent, or no trials were to be added) first."""


class SequentialCase(_Model):
    """One case's anytime-valid verdict from its pairs."""

    case_id: str
    status: SequentialStatus
    pairs: int
    discordant: int = Field(description="pairs where one side passed and the other did not")
    e_value: float = Field(description="the evidence of a drop, as an e-value (1: none)")
    change: float | None = Field(
        default=None, description="mean of candidate minus baseline over the pairs"
    )
    ci_low: float | None = None
    ci_high: float | None = Field(
        default=None,
        description="1 - alpha confidence sequence of the change, valid wherever the run stopped",
    )


class SequentialSummary(_Model):
    """Per-case verdicts from paired trials, valid under continuous monitoring and any
    allocation of trials to cases; and what a fixed design would have spent."""

    test: Literal["betting e-values on paired trials"] = "betting e-values on paired trials"
    alpha: float
    threshold: float = Field(description="the e-value that flags a case: cases / alpha")
    clear_drop: float = Field(description="a cleared case shows no drop of this or more")
    adaptive: bool = False
    max_pairs_per_case: int | None = None
    max_trials: int | None = None
    trials: int = Field(description="trials the pairs took, both agents")
    first_round_pairs: int = Field(description="pairs per case before any was added")
    fixed_design_trials: int | None = Field(
        default=None,
        description="trials (both sides) a fixed design with the exact per-case test and "
        "Holm's correction needs to find a drop of clear_drop in every case with 80 % "
        "power, at the baseline's pass rates",
    )
    counts: dict[str, int] = Field(default_factory=dict)
    cases: list[SequentialCase] = Field(default_factory=list)


class Comparison(_Model):
    """A candidate run against its baseline: per case, overall, criteria, power."""

    comparison_version: str = COMPARISON_VERSION
    alpha: float
    pairing: Pairing = "apart"
    baseline: RunInfo
    candidate: RunInfo
    overall: OverallChange
    cases: list[CaseComparison] = Field(default_factory=list)
    criteria: list[CriterionChange] = Field(default_factory=list)
    power: PowerSummary | None = None
    sequential: SequentialSummary | None = None
    efficiency: EfficiencyComparison | None = None
    judge_agreement: list[JudgeAgreementChange] = Field(default_factory=list)
    regressed: bool = Field(
        description="a significant regression overall or in some case (pass rate, or "
        "efficiency beyond a tolerance the team gave)"
    )
    notes: list[str] = Field(default_factory=list)


class BaselineProblem(_Model):
    """Why a run was not compared with its baseline. ``no-earlier-run``: ``latest`` found
    no published run of the eval set other than this one (the first run of a schedule);
    ``unavailable``: the baseline could not be read or compared (missing, unreadable,
    another eval set, the store down), so nobody can say whether the agent regressed;
    ``other-agent``: ``latest`` found only runs of other agents (or models), which are not
    compared with this one (like a first run, it does not fail the gate)."""

    kind: Literal["no-earlier-run", "unavailable", "other-agent"]
    message: str


class RunComparison(_Model):
    """``comparison.json`` in a run folder: the baseline the run was asked to compare
    with (as written: ``latest``, a folder, an ``s3://`` URI), and either the comparison
    (the document ``agentflow-eval compare --json`` prints) or why there is none."""

    baseline: str
    fail_on_regression: bool = False
    comparison: Comparison | None = None
    problem: BaselineProblem | None = None

    @property
    def regressed(self) -> bool:
        """A significant regression, overall or in some case."""
        return self.comparison is not None and self.comparison.regressed

    @property
    def gate_failed(self) -> bool:
        """Whether a run that fails on regression fails: it regressed, or its baseline
        was unavailable (a first run, with no earlier one, passes)."""
        if not self.fail_on_regression:
            return False
        return self.regressed or (self.problem is not None and self.problem.kind == "unavailable")
