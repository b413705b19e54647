"""hallucinations_v1 and safety_v1 against a scripted model server: per-sentence labels and
what context the judge is shown; harm verdicts with their category."""

from __future__ import annotations

import json
import re

from judge_helpers import case, fenced, invocation, judge_trial, prompt_of, trial, turn

from agentflow_eval.models.evalset import SessionInput
from agentflow_eval.models.results import RecordedToolCall
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

SENTENCE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def labels(*items: str) -> Reply:
    return Reply.text(
        json.dumps(
            {"sentences": [{"index": i, "label": lab} for i, lab in enumerate(items, start=1)]}
        )
    )


async def test_each_sentence_is_labelled_against_the_context(server: ScriptedOpenAIServer):
    server.push(labels("supported", "contradictory", "not_applicable", "unsupported"))
    call = RecordedToolCall(name="get_weather", args={"city": "Tokyo"}, result={"temp_f": 75})
    eval_case = case(
        invocation("Weather in Tokyo?"),
        context="The user is in Japan.",
        session_input=SessionInput(state={"units": "F"}),
    )
    answer = "Tokyo is sunny at 75°F. It will snow at noon. Anything else? Dr. Sato agrees."
    a_trial = trial(turn(answer, [call], "Weather in Tokyo?"))
    result = await judge_trial(server, "hallucinations_v1", eval_case, a_trial, num_samples=1)
    prompt = prompt_of(server.requests[0])
    numbered = SENTENCE.findall(fenced(prompt, "ANSWER_SENTENCES"))
    assert [text for _, text in numbered] == [
        "Tokyo is sunny at 75°F.",
        "It will snow at noon.",
        "Anything else?",
        "Dr. Sato agrees.",
    ]
    assert fenced(prompt, "CASE_CONTEXT") == "The user is in Japan."
    assert json.loads(fenced(prompt, "SESSION_STATE")) == {"units": "F"}
    assert json.loads(fenced(prompt, "TOOL_CALLS"))["result"] == {"temp_f": 75}
    assert json.loads(fenced(prompt, "CONVERSATION")) == {
        "role": "user",
        "text": "Weather in Tokyo?",
    }
    assert result.score == 0.5 and result.status == "failed"
    assert result.details["label_counts"] == {
        "contradictory": 1,
        "unsupported": 1,
        "not_applicable": 1,
        "supported": 1,
    }
    assert result.reason == "2 of 4 sentences unsupported or contradictory"


async def test_labels_take_the_plurality_and_ties_go_to_the_worse(server: ScriptedOpenAIServer):
    server.push(
        labels("supported", "supported"),
        labels("supported", "unsupported"),
        labels("unsupported", "not_applicable"),
        labels("supported", "unsupported"),
    )
    a_trial = trial(turn("One fact. Another fact."))
    result = await judge_trial(
        server, "hallucinations_v1", case(invocation("q")), a_trial, num_samples=4
    )
    sentences = result.details["invocations"][0]["sentences"]
    assert sentences[0]["label"] == "supported"  # 3 of 4
    assert sentences[1]["label"] == "unsupported"  # 2 unsupported vs 1 + 1
    assert result.score == 0.5


async def test_later_turns_see_earlier_tool_results(server: ScriptedOpenAIServer):
    server.handler = lambda body: labels(
        *["supported"] * len(SENTENCE.findall(fenced(prompt_of(body), "ANSWER_SENTENCES")))
    )
    first = RecordedToolCall(name="get_weather", args={"city": "Tokyo"}, result="sunny")
    a_trial = trial(turn("Sunny in Tokyo.", [first], "Tokyo?"), turn("Still sunny.", [], "And?"))
    eval_case = case(invocation("Tokyo?"), invocation("And?"))
    result = await judge_trial(server, "hallucinations_v1", eval_case, a_trial, num_samples=1)
    second_prompt = next(prompt_of(b) for b in server.requests if "Still sunny" in prompt_of(b))
    assert "get_weather" in fenced(second_prompt, "TOOL_CALLS")
    assert '"Sunny in Tokyo."' in fenced(second_prompt, "CONVERSATION")
    assert result.score == 1.0


async def test_no_answer_text_is_not_evaluated(server: ScriptedOpenAIServer):
    result = await judge_trial(
        server, "hallucinations_v1", case(invocation("q")), trial(turn(None))
    )
    assert result.status == "not_evaluated" and server.request_count == 0


def safety(harmless: bool, category: str = "none") -> Reply:
    return Reply.text(json.dumps({"reasoning": "r", "harmless": harmless, "category": category}))


async def test_safety_scores_one_when_harmless(server: ScriptedOpenAIServer):
    server.push(safety(True))
    result = await judge_trial(
        server, "safety_v1", case(invocation("q")), trial(turn("Have a nice day."))
    )
    assert server.request_count == 1  # one sample by default
    assert result.status == "passed" and result.score == 1.0
    assert result.details["invocations"][0]["category"] == "none"


async def test_safety_reports_the_harm_category(server: ScriptedOpenAIServer):
    server.push(safety(False, "Dangerous"), safety(False, "dangerous"), safety(True))
    result = await judge_trial(
        server, "safety_v1", case(invocation("q")), trial(turn("Step 1: ...")), num_samples=3
    )
    assert result.status == "failed" and result.score == 0.0
    assert result.reason == "harmful: case-1 (dangerous)"
    row = result.details["invocations"][0]
    assert row["harmless"] is False and len(row["votes"]) == 3


async def test_a_harmful_verdict_without_a_category_is_other(server: ScriptedOpenAIServer):
    server.push(safety(False, "none"))
    result = await judge_trial(server, "safety_v1", case(invocation("q")), trial(turn("...")))
    assert result.details["invocations"][0]["category"] == "other"
