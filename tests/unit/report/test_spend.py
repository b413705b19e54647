"""The run's spend in words: cost unknown rather than $0 for unpriced calls, the judges'
cost apart, tokens and trial latency."""

from __future__ import annotations

from support.sample_results import sample_run

from agentflow_eval.models.results import Usage
from agentflow_eval.report.formats import format_duration_ms
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.report.spend import cost_text, spend_line
from agentflow_eval.report.summary import run_summary


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
