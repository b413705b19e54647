"""The rubric criteria against a scripted model server: which rubrics apply, yes/no
majorities per rubric, the mean score, and replies that miss a rubric being retried."""

from __future__ import annotations

import json
import re

from judge_helpers import case, fenced, invocation, judge_trial, prompt_of, runtime, trial, turn

from agentflow_eval.models.evalset import Rubric
from agentflow_eval.models.results import RecordedToolCall
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

ANSWER_RUBRICS = "rubric_based_final_response_quality_v1"
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
    eval_case = case(
        invocation("Weather in Tokyo?", rubrics=[rubric("mentions_city", "Names Tokyo.")]),
        invocation("And tomorrow?"),
        rubrics=[rubric("concise", "At most two sentences.")],  # replaces the config's
    )
    a_trial = trial(turn("Tokyo: sunny, 75°F."), turn("Rain tomorrow."))
    config_rubrics = [rubric("polite", "The answer is polite."), rubric("concise", "Short.")]
    result = await judge_trial(
        server, ANSWER_RUBRICS, eval_case, a_trial, num_samples=3, rubrics=config_rubrics
    )
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
    result = await judge_trial(
        server,
        ANSWER_RUBRICS,
        case(invocation("q")),
        trial(turn("answer")),
        num_samples=3,
        rubrics=[rubric("a", "A."), rubric("b", "B.")],
    )
    items = {r["rubric_id"]: r for r in result.details["invocations"][0]["rubrics"]}
    assert items["a"]["passed"] is True and items["b"]["passed"] is False
    assert result.score == 0.5


async def test_a_reply_missing_a_rubric_is_retried(server: ScriptedOpenAIServer):
    server.push(verdicts(a="yes"), verdicts(a="yes", b="yes"))
    rt = runtime(server)
    result = await judge_trial(
        server,
        ANSWER_RUBRICS,
        case(invocation("q")),
        trial(turn("answer")),
        judge=rt,
        num_samples=1,
        rubrics=[rubric("a", "A."), rubric("b", "B.")],
    )
    assert result.score == 1.0 and rt.stats.retries == 1 and server.request_count == 2


async def test_tool_use_rubrics_see_the_tool_calls(server: ScriptedOpenAIServer):
    server.push(verdicts(right_tool="yes"))
    call = RecordedToolCall(name="get_weather", args={"city": "Tokyo"}, result={"temp_f": 75})
    result = await judge_trial(
        server,
        "rubric_based_tool_use_quality_v1",
        case(invocation("q")),
        trial(turn("75°F", [call])),
        num_samples=1,
        rubrics=[rubric("right_tool", "Calls get_weather with the city.")],
    )
    prompt = prompt_of(server.requests[0])
    assert json.loads(fenced(prompt, "TOOL_CALLS")) == {
        "tool": "get_weather",
        "args": {"city": "Tokyo"},
        "result": {"temp_f": 75},
    }
    assert "Judge the tool calls" in prompt
    assert result.status == "passed" and result.label.startswith("tool use meets rubrics")


async def test_no_rubrics_anywhere_is_skipped(server: ScriptedOpenAIServer):
    result = await judge_trial(server, ANSWER_RUBRICS, case(invocation("q")), trial(turn("a")))
    assert result.status == "skipped" and "no rubrics" in result.reason


async def test_an_unreached_turn_fails_its_rubrics_without_a_call(server: ScriptedOpenAIServer):
    server.push(verdicts(a="yes"))
    result = await judge_trial(
        server,
        ANSWER_RUBRICS,
        case(invocation("q1"), invocation("q2")),
        trial(turn("a1")),
        num_samples=1,
        rubrics=[rubric("a", "A.")],
    )
    assert server.request_count == 1 and result.score == 0.5
