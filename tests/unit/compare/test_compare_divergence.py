"""Where a regressed case's trajectories part ways: each side's most common path and, at
the first step where they differ, what each side called there."""

from __future__ import annotations

from support.run_counts import Counts, run_with_counts

from agentflow_eval.compare import compare_runs
from agentflow_eval.compare.divergence import END, path_divergence
from agentflow_eval.compare.render import format_divergence
from agentflow_eval.models.results import TrialFigures


def _trials(paths: list[list[str]], nodes: list[list[str]] | None = None) -> list[TrialFigures]:
    return [
        TrialFigures(
            trial_index=i,
            latency_ms=1000.0,
            tool_calls=len(path),
            tool_path=path,
            node_path=nodes[i] if nodes else None,
        )
        for i, path in enumerate(paths)
    ]


def test_a_changed_second_call_in_six_of_ten_trials_diverges_at_step_2() -> None:
    before = [["search_orders", "lookup_order", "reply"]] * 10
    after = [["search_orders", "refund", "reply"]] * 6 + [
        ["search_orders", "lookup_order", "reply"]
    ] * 4
    baseline = run_with_counts([Counts("refunds", 10, 10, figures=_trials(before))])
    candidate = run_with_counts([Counts("refunds", 3, 10, figures=_trials(after))], run_id="c")
    comparison = compare_runs(baseline, candidate)
    case = comparison.cases[0]
    assert case.verdict == "regression"
    [tools] = case.divergence
    assert tools.kind == "tool" and tools.step == 2
    assert tools.baseline_path == ["search_orders", "lookup_order", "reply"]
    assert (tools.baseline_path_trials, tools.baseline_trials) == (10, 10)
    assert tools.candidate_path == ["search_orders", "refund", "reply"]
    assert (tools.candidate_path_trials, tools.candidate_trials) == (6, 10)
    assert [(c.name, c.baseline, c.candidate) for c in tools.calls] == [
        ("refund", 0, 6),
        ("lookup_order", 10, 4),
    ]
    assert format_divergence(tools) == (
        "tools: step 2: refund 0/10 → 6/10, lookup_order 10/10 → 4/10 (most common path: "
        "search_orders, lookup_order, reply (10/10) → search_orders, refund, reply (6/10))"
    )


def test_a_case_that_did_not_regress_shows_no_divergence() -> None:
    paths = [["search_orders", "lookup_order"]] * 5
    baseline = run_with_counts([Counts("steady", 5, 5, figures=_trials(paths))])
    candidate = run_with_counts(
        [Counts("steady", 5, 5, figures=_trials([["search_orders", "refund"]] * 5))], run_id="c"
    )
    assert compare_runs(baseline, candidate).cases[0].divergence == []


def test_nodes_diverge_where_recorded_and_a_path_that_ended_reads_end() -> None:
    tools = [["lookup"]] * 4
    nodes_b = [["agent", "tools", "agent"]] * 4
    nodes_c = [["agent"]] * 3 + [["agent", "tools", "agent"]]
    baseline = run_with_counts([Counts("c", 4, 4, figures=_trials(tools, nodes_b))])
    candidate = run_with_counts([Counts("c", 0, 4, figures=_trials(tools, nodes_c))], run_id="x")
    case = compare_runs(baseline, candidate).cases[0]
    tool, node = case.divergence
    assert tool.kind == "tool" and tool.step is None and tool.calls == []
    assert node.kind == "node" and node.step == 2
    assert [(c.name, c.baseline, c.candidate) for c in node.calls] == [
        (END, 0, 3),
        ("tools", 4, 1),
    ]


def test_no_trial_on_a_side_has_no_divergence() -> None:
    assert path_divergence("tool", [], [["a"]]) is None
