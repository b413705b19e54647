"""Tool mocks and injected faults: one gate for every tool call of a trial, through the
LiteLLM loop and a Python agent's tools, with what served each call recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from scipy.stats import binomtest

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.http import HttpAgent
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.agents.tool_gate import MockBypassed, ToolCallFailed, TrialTools
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.matching import json_subset
from agentflow_eval.models.results import RunResult
from agentflow_eval.models.tool_mocks import ToolMock
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

RAN: list[dict[str, Any]] = []
"""The calls that reached a real tool body."""


def get_weather(location: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        location: The city.
    """
    RAN.append({"location": location})
    return {"location": location, "condition": "real weather"}


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    RAN.clear()


def mock(**fields: Any) -> ToolMock:
    return ToolMock.model_validate(fields)


def one_case(conversation: list[dict[str, Any]], **case: Any) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "mocks",
            "eval_cases": [{"eval_id": "c", "conversation": conversation, **case}],
        }
    )


def calls_of(result: RunResult) -> list[Any]:
    return [
        call for judged in result.trials for turn in judged.trial.turns for call in turn.tool_calls
    ]


# ----------------------------------------------------------------------------- the models


def test_a_mock_answers_one_way() -> None:
    with pytest.raises(ValidationError, match="one of result, results, error, simulate"):
        mock(tool="t", result=1, error="x")
    with pytest.raises(ValidationError, match="needs result, results, error, simulate or fault"):
        mock(tool="t")
    with pytest.raises(ValidationError, match="probability"):
        mock(tool="t", fault={"probability": 1.5})
    assert mock(tool="t", result=None).answers  # a null result is an answer
    assert not mock(tool="t", fault={"probability": 0.1}).answers


def test_args_are_matched_as_a_subset() -> None:
    assert json_subset({"location": "Tokyo"}, {"location": "Tokyo", "unit": "C"})
    assert json_subset({"q": {"city": "Oslo"}}, {"q": {"city": "Oslo", "days": 2}})
    assert json_subset({"n": 1}, {"n": 1.0})
    assert not json_subset({"location": "Tokyo"}, {"location": "Paris"})
    assert not json_subset({"location": "Tokyo"}, {})
    assert not json_subset({"q": {"city": "Oslo"}}, {"q": "Oslo"})


# ------------------------------------------------------------------------------- the gate


def test_the_turns_mocks_come_first_then_the_cases_then_the_configs() -> None:
    tools = TrialTools(
        config_mocks=[mock(tool="w", result="config"), mock(tool="other", result="o")],
        case_mocks=[mock(tool="w", args={"location": "Oslo"}, result="case")],
    )
    gate = tools.for_turn("t1", [mock(tool="w", args={"location": "Tokyo"}, result="turn")])
    assert gate.decide("w", {"location": "Tokyo"}).result == "turn"
    assert gate.decide("w", {"location": "Oslo"}).result == "case"
    assert gate.decide("w", {"location": "Rome"}).result == "config"
    assert gate.decide("unmocked", {}) is None  # the real tool runs


def test_a_sequence_answers_call_by_call_across_turns_and_its_last_repeats() -> None:
    tools = TrialTools(case_mocks=[mock(tool="next", results=[1, 2, 3])])
    first, second = tools.for_turn("t1"), tools.for_turn("t2")
    assert [first.decide("next", {}).result for _ in range(2)] == [1, 2]
    assert [second.decide("next", {}).result for _ in range(3)] == [3, 3, 3]


def test_the_fail_policy_names_the_tool_and_its_arguments() -> None:
    gate = TrialTools(unmocked="fail").for_turn("t1")
    stand_in = gate.decide("book_flight", {"to": "Oslo", "seats": 2})
    assert stand_in is not None and stand_in.served_by == "policy"
    assert stand_in.error == (
        'tool \'book_flight\' called with {"seats": 2, "to": "Oslo"} has no mock, and '
        "unmocked tools fail in this run (unmocked_tools: fail)"
    )


def test_an_injected_fault_rate_is_its_probability_over_200_calls() -> None:
    faulty = mock(tool="w", result="fine", fault={"probability": 0.25, "seed": 7})
    gate = TrialTools(case_mocks=[faulty], seed_key="c#0").for_turn("t1")
    served = [gate.decide("w", {}).served_by for _ in range(200)]
    faults = served.count("fault")
    assert served.count("mock") == 200 - faults
    # the measured rate's 99% interval holds the configured probability
    interval = binomtest(faults, 200).proportion_ci(confidence_level=0.99)
    assert interval.low <= 0.25 <= interval.high, (faults, interval)

    # the same seed and trial draw the same calls; another trial draws others
    again = TrialTools(case_mocks=[faulty], seed_key="c#0").for_turn("t1")
    assert [again.decide("w", {}).served_by for _ in range(200)] == served
    other = TrialTools(case_mocks=[faulty], seed_key="c#1").for_turn("t1")
    assert [other.decide("w", {}).served_by for _ in range(200)] != served


def test_calls_a_fault_spares_go_on_to_the_next_mock_or_the_tool() -> None:
    flaky = mock(tool="w", fault={"kind": "timeout", "probability": 0.5})
    gate = TrialTools(case_mocks=[flaky]).for_turn("t1")
    outcomes = [gate.decide("w", {}) for _ in range(50)]
    timeouts = [o for o in outcomes if o is not None]
    assert timeouts and len(timeouts) < 50
    assert all(o.served_by == "fault" and o.timeout for o in timeouts)
    assert timeouts[0].error == "w timed out (injected fault)"


# ------------------------------------------------------------------ a Python agent's tools


def test_call_tool_lets_a_mock_answer_and_the_function_never_runs() -> None:
    recorder = TrajectoryRecorder(
        TrialTools(case_mocks=[mock(tool="get_weather", result={"condition": "mocked"})]).for_turn(
            "t"
        )
    )
    assert recorder.call_tool(get_weather, location="Tokyo") == {"condition": "mocked"}
    assert RAN == []
    [call] = recorder.tool_calls
    assert (call.served_by, call.result, call.args) == (
        "mock",
        {"condition": "mocked"},
        {"location": "Tokyo"},
    )


async def test_acall_tool_runs_the_real_tool_when_no_mock_matches() -> None:
    gate = TrialTools(case_mocks=[mock(tool="get_weather", args={"location": "Oslo"}, result=1)])
    recorder = TrajectoryRecorder(gate.for_turn("t"))
    assert (await recorder.acall_tool(get_weather, location="Tokyo"))["condition"] == "real weather"
    assert RAN == [{"location": "Tokyo"}]
    assert recorder.tool_calls[0].served_by == "tool"


def test_a_mocked_error_is_raised_and_recorded() -> None:
    gate = TrialTools(case_mocks=[mock(tool="get_weather", error="upstream 503")])
    recorder = TrajectoryRecorder(gate.for_turn("t"))
    with pytest.raises(ToolCallFailed, match="upstream 503"):
        recorder.call_tool(get_weather, location="Tokyo")
    [call] = recorder.tool_calls
    assert (call.error, call.served_by) == ("upstream 503", "mock")
    assert RAN == []


def test_a_mocked_tool_inside_recorder_tool_is_refused_before_its_block_runs() -> None:
    recorder = TrajectoryRecorder(
        TrialTools(case_mocks=[mock(tool="get_weather", result=1)]).for_turn("t")
    )
    with (
        pytest.raises(MockBypassed, match=r"recorder\.call_tool\(get_weather"),
        recorder.tool("get_weather", {"location": "Tokyo"}),
    ):
        get_weather("Tokyo")
    assert RAN == []


async def test_a_python_agent_through_the_pipeline(tmp_path: Path) -> None:
    def agent(message: str, recorder: TrajectoryRecorder) -> str:
        first = recorder.call_tool(get_weather, location="Tokyo")
        second = recorder.call_tool(get_weather, location="Tokyo")
        return f"{first['condition']} then {second['condition']}"

    eval_set = one_case(
        [
            {
                "user_content": "Weather?",
                "tool_mocks": [
                    {
                        "tool": "get_weather",
                        "results": [{"condition": "rain"}, {"condition": "sun"}],
                    }
                ],
            }
        ]
    )
    result = await evaluate(
        PythonAgent(agent),
        eval_set,
        runs=2,
        output_dir=tmp_path,
    )
    answers = [judged.trial.turns[0].final_response for judged in result.trials]
    assert answers == ["rain then sun", "rain then sun"]  # each trial starts the sequence again
    assert {call.served_by for call in calls_of(result)} == {"mock"}
    assert RAN == []
    stored = (next(tmp_path.rglob("trials.jsonl"))).read_text()
    assert '"served_by":"mock"' in stored.replace(" ", "")


async def test_a_mocked_tool_the_agent_ran_itself_fails_the_trial(tmp_path: Path) -> None:
    """Reported after the fact (recorder.tool_call): the gate was never asked, so the
    tool's own code ran; the trial fails naming it rather than pass on a real call."""

    def agent(message: str, recorder: TrajectoryRecorder) -> str:
        result = get_weather("Tokyo")
        recorder.tool_call("get_weather", {"location": "Tokyo"}, result=result)
        return result["condition"]

    eval_set = one_case(
        [{"user_content": "Weather?"}], tool_mocks=[{"tool": "get_weather", "result": {}}]
    )
    result = await evaluate(PythonAgent(agent), eval_set, runs=1, output_dir=tmp_path)
    (judged,) = result.trials
    error = judged.trial.error
    assert error is not None and error.type == "MockNotReached"
    assert error.message.startswith("tool 'get_weather' ran where no mock could answer it")


# -------------------------------------------------------------------------- the LiteLLM loop


async def test_the_litellm_loop_takes_mocks_faults_and_the_fail_policy(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        server.push(
            Reply.tools(("get_weather", {"location": "Tokyo"})),
            Reply.tools(("get_weather", {"location": "Paris"})),
            Reply.tools(("book_trip", {"to": "Paris"})),
            Reply.text("done"),
        )

        def book_trip(to: str) -> str:
            """Books a trip.

            Args:
                to: Where.
            """
            RAN.append({"booked": to})
            return "booked"

        agent = LiteLLMAgent(
            "openai/scripted", api_base=server.url, api_key="test", tools=[get_weather, book_trip]
        )
        eval_set = one_case(
            [
                {
                    "user_content": "Plan it",
                    "tool_mocks": [
                        {
                            "tool": "get_weather",
                            "args": {"location": "Tokyo"},
                            "result": {"condition": "sunny"},
                        }
                    ],
                }
            ],
            tool_mocks=[{"tool": "get_weather", "error": "weather service down"}],
            unmocked_tools="fail",
        )
        result = await evaluate(
            agent,
            eval_set,
            runs=1,
            output_dir=tmp_path,
        )
        sent = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]

    tokyo, paris, trip = calls_of(result)
    assert (tokyo.served_by, tokyo.result) == ("mock", {"condition": "sunny"})
    assert (paris.served_by, paris.error) == ("mock", "weather service down")
    assert trip.served_by == "policy" and '\'book_trip\' called with {"to": "Paris"}' in trip.error
    assert RAN == []  # neither real tool ran
    # the model saw each answer as the tool's
    assert json.loads(sent[0]["content"]) == {"condition": "sunny"}
    assert sent[1]["content"] == "Error: weather service down"
    assert sent[2]["content"].startswith("Error: tool 'book_trip' called with")


# ------------------------------------------------------------------------------ HTTP agents


def test_an_http_agent_says_it_cannot_take_mocks() -> None:
    assert HttpAgent("http://127.0.0.1:9/v1").tool_mocks_supported is False
