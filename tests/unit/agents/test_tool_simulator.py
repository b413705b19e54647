"""Simulated stateful tools: a mock whose ``simulate`` has a model answer each call, given
the tool's description and the trial's simulated state, through the project's scripted
OpenAI-compatible server (its handler plays a seat-booking service by the state it is
shown, as a model would be asked to)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.criteria.config_files import config_from_data
from agentflow_eval.criteria.judges.cache import StoreJudgeCache
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.end_state import EndStateCheck
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import RecordedToolCall, RunResult
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.run.inputs import RunInputs
from agentflow_eval.run.simulation_check import check_agent_simulates
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

RAN: list[str] = []
"""Calls that reached a real tool body (none may)."""

SEATS = {"12A": "free", "12B": "free"}


def book_seat(seat: str) -> dict[str, Any]:
    """Books a seat on the flight.

    Args:
        seat: The seat, e.g. "12A".
    """
    RAN.append(seat)
    return {"booked": seat}


def _section(prompt: str, title: str) -> Any:
    found = re.search(re.escape(title) + r" \(JSON\):\n(.*)\n", prompt)
    assert found is not None, prompt
    return json.loads(found.group(1))


def booking_service(request: dict[str, Any]) -> Reply:
    """Plays the tool from what the simulator's prompt shows: the state and the call."""
    prompt = request["messages"][-1]["content"]
    if "You are simulating a tool" not in prompt:  # the agent's own model (LiteLLM test)
        if any(m["role"] == "tool" for m in request["messages"]):
            return Reply.text("done")
        return Reply.tools(("book_seat", {"seat": "12A"}), ("book_seat", {"seat": "12A"}))
    state = _section(prompt, "The state of the world before this call")
    args = _section(prompt, "This call's arguments")
    seats = dict(state["seats"])
    if seats.get(args["seat"]) != "free":
        result: dict[str, Any] = {"error": f"seat {args['seat']} is taken"}
    else:
        seats[args["seat"]] = "taken"
        result = {"booked": args["seat"]}
    return Reply.text(json.dumps({"result": result, "state": {**state, "seats": seats}}))


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    RAN.clear()
    monkeypatch.setenv("SIMULATOR_KEY", "test")


def simulated(server: ScriptedOpenAIServer, **extra: Any) -> dict[str, Any]:
    return {
        "tool": "book_seat",
        "simulate": {
            "description": "Books a seat if it is free; says so if it is taken.",
            "model": "openai/simulator",
            "api_base": server.url,
            "api_key_env": "SIMULATOR_KEY",
            "state": {"seats": SEATS},
            "seed": 7,
            **extra,
        },
    }


def one_case(mocks: list[dict[str, Any]]) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "sim",
            "eval_cases": [
                {
                    "eval_id": "book",
                    "conversation": [{"user_content": "Book 12A twice"}],
                    "tool_mocks": mocks,
                }
            ],
        }
    )


def calls(run: RunResult) -> list[list[RecordedToolCall]]:
    ordered = sorted(run.trials, key=lambda j: j.trial.trial_index)
    return [judged.trial.tool_calls for judged in ordered]


async def books_twice(message: str, recorder: TrajectoryRecorder) -> str:
    first = await recorder.acall_tool(book_seat, seat="12A")
    second = await recorder.acall_tool(book_seat, seat="12A")
    return f"{first} then {second}"


def books_twice_sync(message: str, recorder: TrajectoryRecorder) -> str:
    first = recorder.call_tool(book_seat, seat="12A")
    second = recorder.call_tool(book_seat, seat="12A")
    return f"{first} then {second}"


@pytest.mark.parametrize("agent", [books_twice, books_twice_sync], ids=["async", "sync"])
async def test_the_simulated_world_keeps_its_state_between_calls(
    tmp_path: Path, agent: Any
) -> None:
    with ScriptedOpenAIServer(handler=booking_service) as server:
        run = await evaluate(
            PythonAgent(agent), one_case([simulated(server)]), runs=3, output_dir=tmp_path
        )
        sent = list(server.requests)
    for trial_calls in calls(run):
        first, second = trial_calls
        assert (first.result, first.served_by) == ({"booked": "12A"}, "mock")
        assert second.result == {"error": "seat 12A is taken"}  # the first call's state
    for judged in run.trials:
        assert judged.trial.simulated_state == {"seats": {"12A": "taken", "12B": "free"}}
    assert RAN == []  # the real tool never ran
    # seeded, and cached like a judge: the 2nd and 3rd trials' calls met the same state
    # with the same arguments, and were answered from the first trial's replies
    assert len(sent) == 2
    assert {(r["seed"], r["temperature"]) for r in sent} == {(7, 0.0)}
    # the second prompt showed the model the first call and the state it left
    assert _section(sent[1]["messages"][0]["content"], "The calls made so far, in order") == [
        {"tool": "book_seat", "args": {"seat": "12A"}, "result": {"booked": "12A"}}
    ]


async def test_the_litellm_loop_gets_the_simulated_answers(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=booking_service) as server:
        agent = LiteLLMAgent("openai/agent", api_base=server.url, api_key="test", tools=[book_seat])
        run = await evaluate(agent, one_case([simulated(server)]), runs=1, output_dir=tmp_path)
        to_the_model = [
            m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"
        ]
    ((first, second),) = calls(run)
    assert second.result == {"error": "seat 12A is taken"}
    assert [json.loads(text) for text in to_the_model] == [first.result, second.result]
    assert RAN == []


async def test_a_reply_that_is_not_the_json_asked_for_is_asked_again_then_fails(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer([Reply.text("sure, booked!")] * 3) as server:
        run = await evaluate(
            PythonAgent(books_twice), one_case([simulated(server)]), runs=1, output_dir=tmp_path
        )
        asked = server.request_count
    (judged,) = run.trials
    assert asked == 3
    error = judged.trial.error
    assert error is not None and error.type == "SimulationFailed"
    assert "did not answer with" in error.message and "in 3 attempts" in error.message


def test_an_agent_that_cannot_have_tools_simulated_is_refused_in_one_line() -> None:
    class FrameworkAgent:
        name = "graph"

    eval_set = one_case([{"tool": "book_seat", "simulate": {"description": "Books."}}])
    with pytest.raises(EvalFileError) as raised:
        check_agent_simulates(FrameworkAgent(), RunInputs.of(eval_set))
    message = str(raised.value)
    assert "\n" not in message
    assert "case 'book': tool_mocks[0].simulate: agent 'graph' cannot have" in message


async def books_once(message: str, recorder: TrajectoryRecorder, session: Any) -> str:
    if session.trial_index == 0:  # the first trial books; the second only says it did
        await recorder.acall_tool(book_seat, seat="12A")
    return "Seat 12A is yours."


async def test_end_state_checks_judge_what_the_simulated_calls_left(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(handler=booking_service) as server:
        eval_set = one_case([simulated(server)])
        eval_set.eval_cases[0].end_state = [
            EndStateCheck(json_path='seats."12A"', expect="taken"),
        ]
        run = await evaluate(PythonAgent(books_once), eval_set, runs=2, output_dir=tmp_path)
    ordered = sorted(run.trials, key=lambda j: j.trial.trial_index)
    verdicts = [next(c for c in j.criteria if c.criterion == "end_state_match") for j in ordered]
    assert [v.status for v in verdicts] == ["passed", "failed"]
    assert verdicts[1].reason == (
        'captured state at seats."12A": expected "taken" (exact), found "free"'
    )


async def test_simulated_replies_are_kept_with_the_judges_for_the_next_run(tmp_path: Path) -> None:
    kept = StoreJudgeCache(LocalStore(tmp_path / "judge-cache"))
    with ScriptedOpenAIServer(handler=booking_service) as server:
        first = await evaluate(
            PythonAgent(books_twice),
            one_case([simulated(server)]),
            runs=2,
            output_dir=tmp_path / "first",
            judge_cache=kept,
        )
        paid = len(server.requests)
        again = await evaluate(
            PythonAgent(books_twice),
            one_case([simulated(server)]),
            runs=2,
            output_dir=tmp_path / "again",
            judge_cache=kept,
        )
        assert len(server.requests) == paid == 2  # the second run asked the model nothing
        # another seed is another world: asked again
        await evaluate(
            PythonAgent(books_twice),
            one_case([simulated(server, seed=8)]),
            runs=1,
            output_dir=tmp_path / "reseeded",
            judge_cache=kept,
        )
        assert len(server.requests) == paid + 2
    assert [[c.result for c in t] for t in calls(again)] == [
        [c.result for c in t] for t in calls(first)
    ]
    for judged in again.trials:
        assert judged.trial.simulated_state == {"seats": {"12A": "taken", "12B": "free"}}


async def test_a_refreshing_run_asks_again_and_keeps_the_new_replies(tmp_path: Path) -> None:
    kept = StoreJudgeCache(LocalStore(tmp_path / "judge-cache"))
    refreshing = config_from_data(
        {"criteria": {"completes": 1.0}, "judge": {"refresh_cache": True}}
    )
    with ScriptedOpenAIServer(handler=booking_service) as server:
        for name, config in (("first", None), ("refresh", refreshing), ("again", None)):
            await evaluate(
                PythonAgent(books_twice),
                one_case([simulated(server)]),
                config,
                runs=1,
                output_dir=tmp_path / name,
                judge_cache=kept,
            )
        # the first run asked twice, the refreshing run twice again, the last none
        assert len(server.requests) == 4
