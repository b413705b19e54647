"""A run's comparison with its baseline, in brief, for its entry in ``runs.json``: the
verdict, the change, and the tests that called a drop (each regressed case's test and
Holm-adjusted p-value, or its e-value where it was decided pair by pair; each measure
significantly worse), so a page built from the history names the test behind a drop
without reading every run's ``comparison.json``."""

from __future__ import annotations

from agentflow_eval.compare.efficiency import efficiency_findings
from agentflow_eval.compare.models import Comparison, RunComparison
from agentflow_eval.storage.history import ComparisonDigest, DropTest, EfficiencyDrop

__all__ = ["OVERALL_EFFICIENCY_TEST", "comparison_digest"]

OVERALL_EFFICIENCY_TEST = "t on log ratios"
"""How a measure's overall change is tested (the geometric mean of per-case ratios)."""


def comparison_digest(record: RunComparison) -> ComparisonDigest:
    """The digest of ``record`` (a run folder's ``comparison.json``)."""
    digest = ComparisonDigest(
        baseline=record.baseline,
        problem=record.problem.message if record.problem else None,
    )
    compared = record.comparison
    if compared is None:
        return digest
    digest.baseline_run_id = compared.baseline.run_id
    digest.verdict = "regression" if compared.regressed else compared.overall.verdict
    digest.change = compared.overall.change
    digest.alpha = compared.alpha
    digest.overall_p = compared.overall.p_value
    digest.regressed_cases = [c.case_id for c in compared.cases if c.verdict == "regression"]
    digest.improved_cases = [c.case_id for c in compared.cases if c.verdict == "improvement"]
    digest.drops = _drops(compared)
    digest.efficiency_drops = _efficiency_drops(compared)
    return digest


def _drops(compared: Comparison) -> list[DropTest]:
    e_values = {
        case.case_id: case.e_value
        for case in (compared.sequential.cases if compared.sequential else [])
    }
    return [
        DropTest(
            case_id=case.case_id,
            # a case decided pair by pair has no exact test: its evidence is the e-value
            test=case.test or ("e-value" if case.case_id in e_values else "exact"),
            baseline=(case.baseline.passed, case.baseline.runs) if case.baseline else None,
            candidate=(case.candidate.passed, case.candidate.runs) if case.candidate else None,
            change=case.change,
            p_adjusted=case.p_adjusted,
            e_value=e_values.get(case.case_id),
        )
        for case in compared.cases
        if case.verdict == "regression"
    ]


def _efficiency_drops(compared: Comparison) -> list[EfficiencyDrop]:
    case_test = compared.efficiency.test if compared.efficiency else "mann-whitney-u"
    return [
        EfficiencyDrop(
            case_id=finding.case_id,
            measure=finding.measure,
            test=case_test if finding.case_id is not None else OVERALL_EFFICIENCY_TEST,
            ratio=finding.ratio,
            p_adjusted=finding.p_adjusted,
            regression=finding.beyond_tolerance,
        )
        for finding in efficiency_findings(compared)
    ]
