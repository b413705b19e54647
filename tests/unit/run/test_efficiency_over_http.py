"""What each trial took, through the real path (the LiteLLM agent, HTTP to the scripted
OpenAI-compatible server): cost at LiteLLM's list price for a priced model name, unknown
for an unpriced one, the per-case summaries, ADK's efficiency metrics as budgets, and the
figures shown in the scorecard, the Prefect summary and the report page."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.agents import LiteLLMAgent
from agentflow_eval.criteria.registry import validation_context
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.report.markdown import cases_table, summary_markdown
from agentflow_eval.report.scorecard import format_scorecard
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

EVALSET = EvalSet.model_validate(
    {
        "eval_set_id": "spend",
        "eval_cases": [
            {
                "eval_id": "say-hi",
                "conversation": [{"user_content": "Say hi."}],
                "expectations": ["completes"],
            }
        ],
    }
)

# gpt-4o-mini in LiteLLM's price map: $0.15 per million tokens in, $0.60 out
IN, OUT = 0.15e-6, 0.6e-6


async def _run(
    server: ScriptedOpenAIServer, model: str, tmp_path: Path, criteria: dict[str, object]
) -> RunResult:
    # three trials, one after another: 110, 220 and 330 tokens
    server.push(
        *(
            Reply.text("hi", prompt_tokens=100 * n, completion_tokens=10 * n, delay_s=0.01 * n)
            for n in (1, 2, 3)
        )
    )
    config = EvalConfig.model_validate({"criteria": criteria}, context=validation_context())
    return await evaluate(
        LiteLLMAgent(model, api_base=server.url, api_key="test"),
        EVALSET,
        config,
        output_dir=tmp_path,
        runs=3,
        max_concurrency=1,
    )


async def test_a_priced_model_costs_its_tokens_at_list_price(server, tmp_path):
    run = await _run(server, "openai/gpt-4o-mini", tmp_path, {"completes": {}})
    (case,) = run.cases
    costs = [f.cost_usd for f in case.trial_figures]
    assert costs == pytest.approx([n * (100 * IN + 10 * OUT) for n in (1, 2, 3)])
    assert run.totals.usage.known_cost_usd == pytest.approx(6 * (100 * IN + 10 * OUT))
    summary = case.efficiency
    assert summary is not None and summary.cost_usd is not None
    assert summary.cost_usd.median == pytest.approx(2 * (100 * IN + 10 * OUT))
    assert summary.total_tokens.median == 220
    assert summary.total_tokens.p90 == pytest.approx(308)  # 220 + 0.8 * (330 - 220)
    assert (summary.model_calls.median, summary.tool_calls.max) == (1, 0)
    latencies = sorted(f.latency_ms for f in case.trial_figures)
    assert summary.latency_ms.median == latencies[1]
    assert run.totals.trial_latency_ms is not None
    assert run.totals.trial_latency_ms.median == latencies[1]
    lines = format_scorecard(run).splitlines()
    line = next(ln.strip() for ln in lines if ln.strip().startswith("spend: "))
    assert line.startswith(f"spend: agent ${run.totals.usage.cost_usd:.4f} · tokens 660 · ")
    assert "median trial" in line and "(p90 " in line


async def test_an_unpriced_model_costs_unknown_everywhere(server, tmp_path):
    run = await _run(server, "openai/scripted", tmp_path, {"completes": {}})
    (case,) = run.cases
    assert [f.cost_usd for f in case.trial_figures] == [None, None, None]
    assert case.efficiency is not None and case.efficiency.cost_usd is None
    assert (run.totals.usage.unpriced_calls, run.totals.usage.known_cost_usd) == (3, None)
    assert "spend: agent unknown · tokens 660" in format_scorecard(run)
    assert "- Cost: agent unknown, judge – · tokens 660" in summary_markdown(run)
    (row,) = cases_table(run)
    assert (row["cost (median, p90)"], row["tokens (median, p90)"]) == ("unknown", "220 (p90 308)")
    stored = RunResult.model_validate_json(next(tmp_path.rglob("results.json")).read_text())
    assert stored.totals.usage.unpriced_calls == 3
    assert stored.cases[0].efficiency == case.efficiency
    page = next(tmp_path.rglob("report.html")).read_text(encoding="utf-8")
    assert "660 · unknown" in page
    assert "<i>cost</i> unknown" in page


async def test_adk_efficiency_metrics_record_or_gate(server, tmp_path):
    criteria = {
        "token_usage_v1": {"max": 250},
        "inference_call_count_v1": {},
        "within_budget": {"max_cost_usd": 1.0},
    }
    run = await _run(server, "openai/gpt-4o-mini", tmp_path, criteria)
    by_trial = {
        result.trial.trial_index: {c.criterion: c for c in result.criteria} for result in run.trials
    }
    gated = [by_trial[i]["token_usage_v1"].status for i in range(3)]
    assert gated == ["passed", "passed", "failed"]
    assert by_trial[2]["token_usage_v1"].reason == "turn 1: tokens 330 > 250"
    assert by_trial[2]["token_usage_v1"].details["value"] == 330
    informational = [by_trial[i]["inference_call_count_v1"] for i in range(3)]
    assert [c.status for c in informational] == ["passed"] * 3
    assert [c.details["value"] for c in informational] == [1, 1, 1]
    assert all(by_trial[i]["within_budget"].passed for i in range(3))
    assert (run.cases[0].passed, run.cases[0].failed) == (2, 1)


async def test_a_cost_budget_on_an_unpriced_model_gives_no_verdict(server, tmp_path):
    run = await _run(server, "openai/scripted", tmp_path, {"within_budget": {"max_cost_usd": 1}})
    assert {t.status for t in run.trials} == {"not_evaluated"}
    assert run.trials[0].criteria[0].reason == "cost unknown: 1 model call(s) have no known price"
