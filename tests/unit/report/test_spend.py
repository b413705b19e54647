"""The run's spend in words: cost unknown rather than $0 for unpriced calls, the judges'
cost apart, tokens and trial latency."""

from __future__ import annotations

import re

import pytest
from support.report_page import case_details
from support.sample_results import UsageKind, sample_run

from agentflow_eval.models.results import TrialFigures, Usage
from agentflow_eval.report.formats import format_duration_ms
from agentflow_eval.report.html import render_html
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.report.spend import call_cost_text, case_spend_cells, cost_text, spend_line
from agentflow_eval.report.summary import run_summary
from agentflow_eval.run.efficiency import case_efficiency


def test_cost_is_unknown_while_any_call_is_unpriced() -> None:
    priced = Usage.of_call(100, 10, 0.0012)
    assert cost_text(priced) == "$0.0012"
    both = Usage.total([priced, Usage.of_call(50, 5, None)])
    assert both.known_cost_usd is None and both.cost_usd == 0.0012
    assert cost_text(both) == "unknown (1 of 2 calls priced)"
    assert cost_text(Usage.of_call(50, 5, None)) == "unknown"
    assert cost_text(Usage()) == "–"
    # a known price of zero is a cost, not an unknown one
    assert cost_text(Usage.of_call(50, 5, 0.0)) == "$0.0000"


def test_the_scorecard_states_the_runs_spend_under_its_counts() -> None:
    run, _ = sample_run(trials=4)
    totals = run.totals
    assert totals.trial_latency_ms is not None and totals.judge_usage.calls
    expected = (
        f"spend: agent ${totals.usage.cost_usd:.4f} "
        f"(judge ${totals.judge_usage.cost_usd:.4f}) · tokens {totals.usage.total_tokens:,} · "
        f"median trial {format_duration_ms(totals.trial_latency_ms.median)} "
        f"(p90 {format_duration_ms(totals.trial_latency_ms.p90)})"
    )
    assert spend_line(run) == expected
    lines = format_scorecard(run).splitlines()
    assert lines[4] == "         " + expected


def test_the_json_summary_carries_each_cases_figures() -> None:
    run, _ = sample_run(trials=4)
    summary = run_summary(run)
    assert [case.efficiency for case in summary.cases] == [case.efficiency for case in run.cases]
    assert summary.cases[0].efficiency is not None
    assert summary.totals.trial_latency_ms == run.totals.trial_latency_ms


def _figures(index: int, calls: int, cost: float | None) -> TrialFigures:
    return TrialFigures(trial_index=index, model_calls=calls, cost_usd=cost, latency_ms=10.0)


def test_a_case_reads_its_cost_as_the_run_does() -> None:
    """A case's cost cell follows the run's rule: "–" where no model call was recorded
    (an agent whose calls were not captured: nobody measured a cost), "unknown" while a
    price is unknown, and a known zero as $0.0000."""
    uncaptured = case_efficiency([_figures(0, 0, 0.0), _figures(1, 0, 0.0)])
    unpriced = case_efficiency([_figures(0, 2, None), _figures(1, 2, 0.001)])
    free = case_efficiency([_figures(0, 1, 0.0), _figures(1, 1, 0.0)])
    assert case_spend_cells(uncaptured)["cost"] == cost_text(Usage()) == "–"
    assert case_spend_cells(unpriced)["cost"] == "unknown"
    assert case_spend_cells(free)["cost"] == "$0.0000 (p90 $0.0000)"


def test_a_trial_or_turn_reads_its_cost_as_the_run_does() -> None:
    assert call_cost_text(Usage()) == "–"  # no call recorded: nobody measured a cost
    assert call_cost_text(Usage.of_call(50, 5, None)) == "unknown"
    assert call_cost_text(Usage.of_call(50, 5, 0.0)) == "$0.0000"
    assert call_cost_text(Usage.of_call(50, 5, 0.00057)) == "$0.00057"


_HEADER_COST = re.compile(r"<dt>Agent tokens · cost</dt><dd>[\d,]+ · ([^<]+)</dd>")
_CASE_COST = re.compile(r'<span class="fig" data-fig="cost"><i>cost</i> ([^<]+)</span>')


@pytest.mark.parametrize(
    ("usage", "reads"),
    [("uncaptured", "–"), ("unpriced", "unknown"), ("free", "$0.0000"), ("priced", "$0.0")],
)
def test_the_report_reads_one_cost_the_same_way_in_the_header_and_on_every_case(
    usage: UsageKind, reads: str
) -> None:
    """Calls the agent did not report, calls nobody could price, calls known to cost
    nothing, priced calls: the run's header, each case's line and facts, and each trial
    read the same, never $0.0000 for a cost nobody knows and never "–" for a known zero."""
    run, _ = sample_run(cases=3, trials=2, usage=usage)
    page = render_html(run)
    header = _HEADER_COST.search(page)
    assert header is not None and header.group(1).startswith(reads), header
    assert [cost.startswith(reads) for cost in _CASE_COST.findall(page)] == [True] * 3
    for case in run.cases:
        details = case_details(page, case.case_id)
        (fact,) = [fact for fact in details["facts"] if fact.startswith("cost ")]
        assert fact.startswith(f"cost {reads}"), fact
        for trial in details["trials"]:
            cost = trial["meta"].rsplit(" · ", 1)[1].removeprefix("cost ")
            assert cost.startswith(reads), (case.case_id, trial["meta"])
    if usage in ("uncaptured", "unpriced"):
        assert "$0.0000" not in page
