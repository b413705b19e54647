"""The judges' agreement where people read a run: the scorecard, the Prefect summary's
Markdown, report.html, the --json summary, the gates (naming an untrustworthy judge
without failing the run) and the comparison of two labelled runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.compare.comparison import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.gates import gate_verdict
from agentflow_eval.report.html import render_html
from agentflow_eval.report.markdown import comparison_markdown, summary_markdown
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.report.summary import run_summary
from agentflow_eval.review.agreement import judge_agreement
from agentflow_eval.review.labels import Label
from agentflow_eval.review.sampling import plan_review
from agentflow_eval.review.verdicts import VerdictLedger
from tests.support.judged_runs import CRITERION, planted_run

AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
REVIEWER = "<b>ana</b>"


def labelled_run(
    *, wrong: float, seed: int, run_id: str, min_agreement: float | None = 0.9
) -> RunResult:
    planted = planted_run(cases=100, trials=4, wrong_share=wrong, seed=seed, run_id=run_id)
    labels = [
        Label(
            run_id=item.run_id,
            case_id=item.case_id,
            trial=item.trial,
            criterion=item.criterion,
            content_key=item.content_key,
            label="pass" if planted.truth[(item.case_id, item.trial)] else "fail",
            reviewer=REVIEWER,
            labelled_at=AT,
        )
        for item in plan_review(planted.run, size=120, seed=seed).items
    ]
    run = planted.run
    run.judge_agreement = judge_agreement(
        VerdictLedger.of_run(run), labels, run_ids={run.run_id}, min_agreement=min_agreement
    )
    return run


@pytest.fixture(scope="module")
def doubtful() -> RunResult:
    """A judge wrong on a fifth of its verdicts, held to 90% agreement."""
    return labelled_run(wrong=0.2, seed=1, run_id="doubtful")


def test_the_scorecard_names_the_figures_and_the_untrustworthy_judge(doubtful: RunResult) -> None:
    card = format_scorecard(doubtful)
    assert "against people (120 labelled of 400 verdicts, 1 reviewer)" in card
    for word in ("agreement", "sensitivity", "specificity", "κ", "corrected for the judge"):
        assert word in card
    assert "UNTRUSTWORTHY: judge answer matches reference (LLM judge) is untrustworthy" in card
    assert "below min_judge_agreement 90%" in card


def test_the_prefect_summary_says_it_too(doubtful: RunResult) -> None:
    text = summary_markdown(doubtful)
    assert "## Judges against people" in text
    assert "> **judge answer matches reference (LLM judge) is untrustworthy" in text
    assert "(untrustworthy)" in text


def test_report_html_shows_the_section_escaped(doubtful: RunResult) -> None:
    page = render_html(doubtful)
    assert 'id="judge-agreement"' in page and "Judges against people" in page
    assert "untrustworthy: below 90%" in page
    assert "&lt;b&gt;ana&lt;/b&gt;" in page and REVIEWER not in page


def test_the_gates_name_the_judge_and_do_not_fail_the_run(doubtful: RunResult) -> None:
    verdict = gate_verdict(RunRequest(min_judge_agreement=0.9), doubtful, None)
    [said] = verdict.untrustworthy_judges
    assert "answer matches reference (LLM judge) is untrustworthy" in said
    assert not verdict.failed
    summary = run_summary(doubtful)
    assert summary.untrustworthy_judges == [CRITERION]
    assert summary.judge_agreement == doubtful.judge_agreement


def test_a_judge_that_meets_the_level_is_not_named() -> None:
    trusted = labelled_run(wrong=0.0, seed=2, run_id="trusted")
    [agreement] = trusted.judge_agreement
    assert agreement.agreement is not None and agreement.agreement.value == 1.0
    assert not agreement.untrustworthy
    assert gate_verdict(RunRequest(), trusted, None).untrustworthy_judges == ()
    assert "UNTRUSTWORTHY" not in format_scorecard(trusted)


def test_the_comparison_of_two_labelled_runs_shows_both_sides(doubtful: RunResult) -> None:
    later = labelled_run(wrong=0.05, seed=3, run_id="later")
    later = later.model_copy(update={"eval_set_id": doubtful.eval_set_id})
    comparison = compare_runs(doubtful, later)
    [change] = comparison.judge_agreement
    assert change.criterion == CRITERION and change.untrustworthy == ["baseline"]
    assert change.baseline_corrected is not None and change.candidate_corrected is not None
    assert change.corrected_change is not None
    assert change.corrected_change.value == pytest.approx(
        change.candidate_corrected.value - change.baseline_corrected.value
    )
    assert (
        change.corrected_change.low < change.corrected_change.value < (change.corrected_change.high)
    )
    record = RunComparison(baseline="doubtful", comparison=comparison)
    [line] = [line for line in comparison_lines(record) if "against people" in line]
    assert "agreement 78% (69%–84%) → 96%" in line and "untrustworthy in the baseline" in line
    assert "**Judges against people**" in comparison_markdown(record)
    assert "Judges against people" in render_html(later, record)
    # a run without labels compares as before: no judge line
    assert (
        compare_runs(doubtful, planted_run(cases=100, trials=4, run_id="x").run).judge_agreement
        == []
    )
