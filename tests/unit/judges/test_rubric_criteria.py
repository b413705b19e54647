"""The rubric criteria through real litellm: which rubrics apply, yes/no majorities per
rubric, the mean score, and replies that miss a rubric being retried."""

from __future__ import annotations

import json
import re

from judge_helpers import (
    build,
    case,
    context,
    eval_config,
    fenced,
    invocation,
    prompt_of,
    runtime,
    trial,
    turn,
)

from agentflow_eval.evalset import Rubric
from agentflow_eval.results import RecordedToolCall
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

RUBRIC_LINE = re.compile(r"^- \[(?P<id>[^\]]+)\] (?P<content>.+)$", re.MULTILINE)


def rubric(rubric_id: str, content: str) -> Rubric:
    return Rubric(rubric_id=rubric_id, rubric_content=content)


def rubric_ids(body: dict) -> list[str]:
    return [m.group("id") for m in RUBRIC_LINE.finditer(prompt_of(body))]


def verdicts(**by_id: str) -> Reply:
    return Reply.text(
        json.dumps(
            {
                "verdicts": [
                    {"rubric_id": k, "verdict": v, "reasoning": "r"} for k, v in by_id.items()
                ]
            }
        )
    )


async def test_rubrics_from_config_case_and_invocation_are_judged(server: ScriptedOpenAIServer):
    seen: list[list[str]] = []

    def judge(body: dict) -> Reply:
        ids = rubric_ids(body)
        seen.append(ids)
        # "concise" fails, everything else passes
        return verdicts(**{i: ("no" if i == "concise" else "yes") for i in ids})

    server.handler = judge
    config = eval_config(server)
    criterion = build(
        "rubric_based_final_response_quality_v1",
        config,
        num_samples=3,
        rubrics=[rubric("polite", "The answer is polite."), rubric("concise", "Short.")],
    )
    eval_case = case(
        invocation("Weather in Tokyo?", rubrics=[rubric("mentions_city", "Names Tokyo.")]),
        invocation("And tomorrow?"),
        rubrics=[rubric("concise", "At most two sentences.")],  # replaces the config's
    )
    a_trial = trial(turn("Tokyo: sunny, 75°F."), turn("Rain tomorrow."))
    result = await criterion.evaluate(context(eval_case, a_trial, config, runtime(server)))
    assert server.request_count == 6  # 2 turns × 3 samples
    assert sorted(map(sorted, seen)) == sorted(
        [["concise", "mentions_city", "polite"]] * 3 + [["concise", "polite"]] * 3
    )
    # (turn 1: polite yes, concise no, mentions_city yes) + (turn 2: polite yes, concise no)
    assert result.score == 3 / 5 and result.status == "failed"
    assert result.reason == "rubrics not met: concise"
    first = {r["rubric_id"]: r for r in result.details["invocations"][0]["rubrics"]}
    assert first["concise"]["rubric_content"] == "At most two sentences."
    assert first["polite"]["passed"] and first["polite"]["reason"] == "3 yes / 0 no votes"


async def test_each_rubric_takes_its_own_majority(server: ScriptedOpenAIServer):
    server.push(
        verdicts(a="yes", b="no"),
        verdicts(a="yes", b="yes"),
        verdicts(a="no", b="no"),
    )
    config = eval_config(server)
    criterion = build(
        "rubric_based_final_response_quality_v1",
        config,
        num_samples=3,
        rubrics=[rubric("a", "A."), rubric("b", "B.")],
    )
    result = await criterion.evaluate(
        context(case(invocation("q")), trial(turn("answer")), config, runtime(server))
    )
    items = {r["rubric_id"]: r for r in result.details["invocations"][0]["rubrics"]}
    assert items["a"]["passed"] is True and items["b"]["passed"] is False
    assert result.score == 0.5


async def test_a_reply_missing_a_rubric_is_retried(server: ScriptedOpenAIServer):
    server.push(verdicts(a="yes"), verdicts(a="yes", b="yes"))
    config = eval_config(server)
    criterion = build(
        "rubric_based_final_response_quality_v1",
        config,
        num_samples=1,
        rubrics=[rubric("a", "A."), rubric("b", "B.")],
    )
    rt = runtime(server)
    result = await criterion.evaluate(
        context(case(invocation("q")), trial(turn("answer")), config, rt)
    )
    assert result.score == 1.0 and rt.stats.retries == 1 and server.request_count == 2


async def test_tool_use_rubrics_see_the_tool_calls(server: ScriptedOpenAIServer):
    server.push(verdicts(right_tool="yes"))
    config = eval_config(server)
    criterion = build(
        "rubric_based_tool_use_quality_v1",
        config,
        num_samples=1,
        rubrics=[rubric("right_tool", "Calls get_weather with the city.")],
    )
    call = RecordedToolCall(name="get_weather", args={"city": "Tokyo"}, result={"temp_f": 75})
    result = await criterion.evaluate(
        context(case(invocation("q")), trial(turn("75°F", [call])), config, runtime(server))
    )
    prompt = prompt_of(server.requests[0])
    assert json.loads(fenced(prompt, "TOOL_CALLS")) == {
        "tool": "get_weather",
        "args": {"city": "Tokyo"},
        "result": {"temp_f": 75},
    }
    assert "agentflow-judge-subject: tool_use" in prompt
    assert result.status == "passed" and result.label.startswith("tool use meets rubrics")


async def test_no_rubrics_anywhere_is_skipped(server: ScriptedOpenAIServer):
    config = eval_config(server)
    criterion = build("rubric_based_final_response_quality_v1", config)
    result = await criterion.evaluate(
        context(case(invocation("q")), trial(turn("a")), config, runtime(server))
    )
    assert result.status == "skipped" and "no rubrics" in result.reason


async def test_an_unreached_turn_fails_its_rubrics_without_a_call(server: ScriptedOpenAIServer):
    server.push(verdicts(a="yes"))
    config = eval_config(server)
    criterion = build(
        "rubric_based_final_response_quality_v1", config, num_samples=1, rubrics=[rubric("a", "A.")]
    )
    result = await criterion.evaluate(
        context(
            case(invocation("q1"), invocation("q2")), trial(turn("a1")), config, runtime(server)
        )
    )
    assert server.request_count == 1 and result.score == 0.5
