"""An ADK ``test_config.json`` naming each of ADK's remaining judge metrics, read as ADK
writes it, runs a whole evaluation against a scripted judge and simulated user (one
scripted OpenAI-compatible server, reached as ADK users reach any OpenAI-compatible
endpoint: ``OPENAI_BASE_URL``), and every score lies in the range ADK documents for its
metric, both ends reached where the judge says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_helpers import fenced, prompt_of

from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.user_turns import FINISHED
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

ADK_RANGES = {
    # google.adk.evaluation.metric_info_providers (2.13): each metric's MetricValueInfo
    "response_evaluation_score": (1.0, 5.0),
    "multi_turn_task_success_v1": (0.0, 1.0),
    "multi_turn_trajectory_quality_v1": (0.0, 1.0),
    "multi_turn_tool_use_quality_v1": (0.0, 1.0),
    "rubric_based_multi_turn_trajectory_quality_v1": (0.0, 1.0),
    "per_turn_user_simulator_quality_v1": (0.0, 1.0),
}

JUDGE = {"judge_model": "openai/judge", "num_samples": 1}

CONFIG = {
    "criteria": {
        "response_evaluation_score": {"threshold": 3.5, "judge_model_options": JUDGE},
        "multi_turn_task_success_v1": {"threshold": 0.8, "judge_model_options": JUDGE},
        "multi_turn_trajectory_quality_v1": {"threshold": 0.8, "judgeModelOptions": JUDGE},
        "multi_turn_tool_use_quality_v1": {"threshold": 0.8, "judge_model_options": JUDGE},
        "rubric_based_multi_turn_trajectory_quality_v1": {
            "threshold": 0.5,
            "judge_model_options": JUDGE,
            "rubrics": [
                {
                    "rubric_id": "names_the_city",
                    "rubric_content": {"text_property": "The agent names the city it checked."},
                    "type": "TRAJECTORY_QUALITY",
                }
            ],
        },
        "per_turn_user_simulator_quality_v1": {
            "threshold": 0.8,
            "judge_model_options": JUDGE,
            "stop_signal": FINISHED,
        },
    },
    "user_simulator_config": {
        "type": "llm_backed",
        "model": "openai/user",
        "max_allowed_invocations": 3,
    },
}

EVALSET = {
    "eval_set_id": "adk_judges",
    "eval_cases": [
        {
            "eval_id": "scripted",
            "conversation": [
                {
                    "invocation_id": "t1",
                    "user_content": {"role": "user", "parts": [{"text": "Weather in Rome?"}]},
                },
                {
                    "invocation_id": "t2",
                    "user_content": {"role": "user", "parts": [{"text": "And tomorrow?"}]},
                },
            ],
        },
        {
            "eval_id": "simulated",
            "conversation_scenario": {
                "starting_prompt": "Weather in Rome?",
                "conversation_plan": "Ask for the weather in Rome, then stop.",
            },
        },
    ],
}


class WeatherAgent:
    """Clear in even trials; muddled, with a failing tool, in odd ones."""

    name = "weather"

    async def start_session(self, context):
        self.clear = context.trial_index % 2 == 0
        return self

    async def respond(self, message, recorder):
        with recorder.tool("get_weather", {"city": "Rome"}) as call:
            if self.clear:
                call.result = {"sky": "sunny"}
            else:
                call.error = "weather service down"
        return "It is sunny in Rome." if self.clear else "Rain. Rain. Maybe rain."

    async def aclose(self):
        pass


def answer(body: dict) -> Reply:
    """The scripted judge and simulated user: good marks wherever the agent was clear."""
    if body["model"] == "user":
        last = body["messages"][-1]["content"]
        return Reply.text(FINISHED if "sunny" in last else "Sorry, what?")
    prompt = prompt_of(body)
    if "SIMULATED_USER_MESSAGE" in prompt:
        said = fenced(prompt, "SIMULATED_USER_MESSAGE")
        return Reply.text(json.dumps({"reasoning": "r", "is_valid": said != "Sorry, what?"}))
    if "CONVERSATION " in prompt and "Rubrics" in prompt:
        clear = "sunny" in fenced(prompt, "CONVERSATION")
        verdict = {"rubric_id": "names_the_city", "verdict": "yes" if clear else "no"}
        return Reply.text(json.dumps({"verdicts": [verdict]}))
    if "USER_GOAL" in prompt:
        clear = "sunny" in fenced(prompt, "CONVERSATION")
        verdicts = [{"property": f"p{i}", "verdict": "yes" if clear else "no"} for i in range(3)]
        return Reply.text(json.dumps({"properties": verdicts}))
    clear = "sunny" in fenced(prompt, "AGENT_ANSWER")
    return Reply.text(json.dumps({"reasoning": "r", "rating": 5 if clear else 1}))


async def test_an_adk_config_of_every_remaining_judge_scores_in_adks_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "judges.evalset.json").write_text(json.dumps(EVALSET), "utf-8")
    (tmp_path / "test_config.json").write_text(json.dumps(CONFIG), "utf-8")
    with ScriptedOpenAIServer() as server:
        server.handler = answer
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        run = await evaluate(
            WeatherAgent(),
            tmp_path / "judges.evalset.json",  # its test_config.json beside it, as ADK
            runs=4,
            output_dir=str(tmp_path / "out"),
        )
    scores: dict[str, list[float]] = {}
    for result in run.trials:
        for verdict in result.criteria:
            if verdict.status in ("passed", "failed"):
                assert verdict.score is not None
                scores.setdefault(verdict.criterion, []).append(verdict.score)
    assert set(scores) == set(ADK_RANGES)
    for metric, (low, high) in ADK_RANGES.items():
        assert all(low <= score <= high for score in scores[metric]), (metric, scores[metric])
    # both ends, where the judge gave the best and the worst marks
    for metric in set(ADK_RANGES) - {"per_turn_user_simulator_quality_v1"}:
        assert min(scores[metric]) == ADK_RANGES[metric][0], metric
        assert max(scores[metric]) == ADK_RANGES[metric][1], metric
    # the simulated user's first turn is its starting prompt, so a third of the worst
    # conversation (3 turns) stays valid, as in ADK
    assert sorted(set(scores["per_turn_user_simulator_quality_v1"])) == [pytest.approx(1 / 3), 1.0]
    # the 1-to-5 scale reaches the summaries and the threshold as ADK's config wrote it
    coherence = next(c for c in run.criteria if c.criterion == "response_evaluation_score")
    assert coherence.threshold == 3.5 and coherence.mean_score == pytest.approx(3.0)
