"""The offline demo model, called through litellm.acompletion like any hosted model."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import litellm
import pytest

from agentflow_eval.demo import model as demo_model
from agentflow_eval.demo.model import (
    DEMO_PROVIDER,
    SIMULATED_LABEL,
    install,
    is_demo_model,
)
from agentflow_eval.llm.client import ModelClient

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_local_time",
        "description": "The local time in a timezone or city.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
}
TWO_ARG_TOOL = {
    "type": "function",
    "function": {
        "name": "book_flight",
        "description": "Book a flight between two cities.",
        "parameters": {
            "type": "object",
            "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
            "required": ["origin", "destination"],
        },
    },
}


@pytest.fixture(autouse=True)
def _registered() -> None:
    install()


@pytest.fixture
def perfect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the demo model's imperfections off, to test its heuristics exactly."""
    for rate in ("P_SKIP_ENTITY", "P_SWAP_ORDER", "P_REWORD", "P_OMIT_TEMPERATURE", "P_ANNOUNCE"):
        monkeypatch.setattr(demo_model, rate, 0.0)


async def complete(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **kw: Any
) -> Any:
    request: dict[str, Any] = {"model": f"{DEMO_PROVIDER}/test", "messages": messages, **kw}
    if tools:
        request.update(tools=tools, _skip_mcp_handler=True)
    return await litellm.acompletion(**request)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": text}]


def planned(response: Any) -> list[tuple[str, dict[str, Any]]]:
    calls = response.choices[0].message.tool_calls or []
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls]


def test_registration_is_idempotent() -> None:
    install()
    install()
    entries = [i for i in litellm.custom_provider_map if i["provider"] == DEMO_PROVIDER]
    assert len(entries) == 1
    assert is_demo_model("agentflow-demo/weather")
    assert not is_demo_model("openai/gpt-4o") and not is_demo_model(None)
    assert "SIMULATED" in SIMULATED_LABEL


@pytest.mark.usefixtures("perfect")
async def test_it_calls_the_tool_once_per_named_place() -> None:
    response = await complete(user("Compare the weather in Tokyo and London"), [WEATHER_TOOL])
    assert planned(response) == [
        ("get_weather", {"location": "Tokyo"}),
        ("get_weather", {"location": "London"}),
    ]
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.model == "agentflow-demo/test (simulated)"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


@pytest.mark.usefixtures("perfect")
@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("What's the weather in New York?", ["New York"]),
        ("Is it foggy in San Francisco today?", ["San Francisco"]),
        ("Weather for Paris, Sydney and Berlin please", ["Paris", "Sydney", "Berlin"]),
        ("How's Tokyo's weather on Monday? And London's?", ["Tokyo", "London"]),
        ("I'd like the weather in Rio de Janeiro", ["Rio de Janeiro"]),
    ],
)
async def test_place_names_are_pulled_from_the_message(text: str, places: list[str]) -> None:
    response = await complete(user(text), [WEATHER_TOOL])
    assert [args["location"] for _, args in planned(response)] == places


@pytest.mark.usefixtures("perfect")
async def test_it_asks_back_when_no_place_is_named() -> None:
    response = await complete(user("What's the weather like?"), [WEATHER_TOOL])
    assert planned(response) == []
    assert response.choices[0].message.content == "Which location should I look up?"


@pytest.mark.usefixtures("perfect")
async def test_it_picks_the_single_string_tool_that_fits_the_message() -> None:
    tools = [TWO_ARG_TOOL, WEATHER_TOOL, TIME_TOOL]
    time = await complete(user("What is the local time in Tokyo?"), tools)
    weather = await complete(user("And the weather in Tokyo?"), tools)
    assert planned(time) == [("get_local_time", {"zone": "Tokyo"})]
    assert planned(weather) == [("get_weather", {"location": "Tokyo"})]
    only_two_args = await complete(user("Fly me from Paris to Rome"), [TWO_ARG_TOOL])
    assert planned(only_two_args) == []
    assert "don't have a tool" in only_two_args.choices[0].message.content


def with_results(question: str, results: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"location": place})},
        }
        for i, (place, _) in enumerate(results)
    ]
    return [
        *user(question),
        {"role": "assistant", "content": None, "tool_calls": calls},
        *(
            {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(result)}
            for i, (_, result) in enumerate(results)
        ),
    ]


@pytest.mark.usefixtures("perfect")
async def test_the_final_answer_is_written_from_the_tool_results() -> None:
    tokyo = {"location": "Tokyo", "condition": "sunny", "temperature": 75, "unit": "°F"}
    london = {"location": "London", "condition": "cloudy", "temperature": 55, "unit": "°F"}
    both = await complete(with_results("Compare", [("Tokyo", tokyo), ("London", london)]))
    one = await complete(with_results("Tokyo?", [("Tokyo", tokyo)]))
    failed = await complete(with_results("Atlantis?", [("Atlantis", {"error": "no data"})]))
    assert both.choices[0].message.content == (
        "Tokyo is sunny at 75°F while London is cloudy at 55°F."
    )
    assert one.choices[0].message.content == (
        "The weather in Tokyo is currently sunny with a temperature of 75°F."
    )
    assert failed.choices[0].message.content == "I couldn't get the weather for Atlantis: no data."
    assert both.choices[0].finish_reason == "stop"


@pytest.mark.usefixtures("perfect")
async def test_other_single_string_tools_work_too() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "lookup_stock_price",
            "description": "Latest stock price for a company.",
            "parameters": {"type": "object", "properties": {"company": {"type": "string"}}},
        },
    }
    plan = await complete(user("What's the stock price of Acme?"), [tool])
    assert planned(plan) == [("lookup_stock_price", {"company": "Acme"})]
    messages = [
        *user("What's the stock price of Acme?"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "x",
                    "type": "function",
                    "function": {"name": "lookup_stock_price", "arguments": '{"company": "Acme"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "x", "content": '{"price": 12.5, "currency": "USD"}'},
    ]
    answer = await complete(messages, [tool])
    assert answer.choices[0].message.content == (
        "The stock price for Acme: price 12.5, currency USD."
    )


async def plans_over_trials(trials: range, **kw: Any) -> list[Any]:
    """Plans for the same request made for trials ``trials`` of one case: each call tagged
    with its trial by a trial's view of the run's model client."""
    models = ModelClient()
    plans = []
    for index in trials:
        response = await models.tagged(case="compare", trial=str(index)).complete(
            model=f"{DEMO_PROVIDER}/test",
            messages=user("Compare the weather in Tokyo and London"),
            tools=[WEATHER_TOOL],
            **kw,
        )
        message = response.choices[0].message
        plans.append((message.content, tuple(args["location"] for _, args in planned(response))))
    return plans


async def test_the_same_trial_gets_the_same_answer() -> None:
    first = await plans_over_trials(range(30))
    again = await plans_over_trials(range(30))
    assert first == again


async def test_trials_differ_and_the_base_seed_changes_them() -> None:
    plans = await plans_over_trials(range(40))
    reseeded = await plans_over_trials(range(40), seed=1)
    locations = Counter(p[1] for p in plans)
    assert locations.most_common(1)[0][0] == ("Tokyo", "London")
    assert len(locations) > 1  # some trials skip or swap a city
    assert plans != reseeded


async def test_imperfection_rates_are_roughly_as_documented() -> None:
    plans = await plans_over_trials(range(300))
    complete_in_order = sum(p[1] == ("Tokyo", "London") for p in plans) / len(plans)
    skipped = sum(len(p[1]) < 2 for p in plans) / len(plans)
    assert 0.08 <= skipped <= 0.24
    assert 0.6 <= complete_in_order <= 0.85


async def test_a_foreign_request_for_a_json_verdict_is_refused_clearly() -> None:
    messages = [
        {"role": "system", "content": 'Grade the answer. Reply in JSON: {"verdict": "yes"}'},
        {"role": "user", "content": "Answer: Paris"},
    ]
    with pytest.raises(litellm.BadRequestError, match="judges only for agentflow-eval's own"):
        await complete(messages)


async def test_a_judge_call_is_answered_by_the_judge_of_its_criterion() -> None:
    def prompt(answer: str) -> str:
        fence = "0123456789ab"
        return (
            f"<<<BEGIN REFERENCE_ANSWER {fence}>>>\nTokyo is sunny at 75°F.\n"
            f"<<<END REFERENCE_ANSWER {fence}>>>\n"
            f"<<<BEGIN AGENT_ANSWER {fence}>>>\n{answer}\n<<<END AGENT_ANSWER {fence}>>>"
        )

    models = ModelClient()
    judge = models.tagged(criterion="final_response_match_v2")
    verdicts = []
    for answer in ("It is 75°F and sunny in Tokyo.", "It is 60°F in Tokyo."):
        reply = await judge.complete(
            model=f"{DEMO_PROVIDER}/judge", messages=[{"role": "user", "content": prompt(answer)}]
        )
        verdicts.append(json.loads(reply.choices[0].message.content)["verdict"])
    assert verdicts == ["valid", "invalid"]
    # a criterion it has no judge for is the request's fault: refused at once, not retried
    # as if the provider were down (that would end in ProviderUnavailable)
    with pytest.raises(litellm.BadRequestError, match="has no judge for criterion 'my_own_judge'"):
        await models.tagged(criterion="my_own_judge").complete(
            model=f"{DEMO_PROVIDER}/judge", messages=[{"role": "user", "content": prompt("x")}]
        )


async def test_without_tools_it_answers_in_text() -> None:
    response = await complete(user("Thanks a lot!"))
    assert response.choices[0].message.content == "You're welcome!"
    assert planned(response) == []
