"""Single-step cases through the command as a user runs it (in-process, against the test
Prefect API): an intent classifier judged on 20 labelled inputs with repeated trials and
compared with an earlier, worse classifier; and a seeded-history case, judged on the
LiteLLM loop's next step against a scripted model."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from support.report_page import case_details

from agentflow_eval.cli import main
from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.report.case_details import NEXT_STEP_ONLY
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

LABELLED = {
    "weather": [
        "Will it rain tomorrow?",
        "What's the forecast for Oslo?",
        "Is it sunny in Rome?",
        "How cold is it outside?",
        "Weather in Lima please",
    ],
    "booking": [
        "Book a table for two",
        "Reserve a flight to Paris",
        "I need a hotel room",
        "Can you book me a taxi?",
        "Make a reservation at 8",
    ],
    "billing": [
        "Why was I charged twice?",
        "Send me my invoice",
        "Refund my last payment",
        "Update my credit card",
        "What do I owe?",
    ],
    "greeting": ["Hello there", "Hi!", "Good morning", "Hey, how are you?", "Greetings"],
}

CLASSIFIER = """\
KEYWORDS = {keywords!r}


def classify(text: str) -> str:
    lowered = text.lower()
    for label, words in KEYWORDS.items():
        if any(word in lowered for word in words):
            return label
    return "unknown"
"""
# 17 of the 20 right: "How cold is it outside?", "I need a hotel room" and "Greetings" not
BETTER = {
    "weather": ["rain", "forecast", "sunny", "weather"],
    "booking": ["book", "reserve", "reservation"],
    "billing": ["charged", "invoice", "refund", "card", "owe"],
    "greeting": ["hello", "hi!", "morning", "hey"],
}
# the earlier one misses the forecast, the sun and the reservation as well: 14 right
WORSE = {**BETTER, "weather": ["rain", "weather"], "booking": ["book", "reserve"]}
WRONG_NOW = {"weather_4", "booking_3", "greeting_5"}
FIXED_SINCE = {"weather_2", "weather_3", "booking_5"}


def write_classifier(folder: Path, keywords: dict[str, list[str]]) -> None:
    folder.mkdir()
    (folder / "classifier.py").write_text(CLASSIFIER.format(keywords=keywords))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_an_intent_classifier_on_20_labelled_inputs_with_a_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        # relative to the current directory, as agent specs are: each version from its folder
        {"eval_id": f"{label}_{n}", "component": "classifier.py:classify", "input": text}
        | {"expected_output": label}
        for label, texts in LABELLED.items()
        for n, text in enumerate(texts, 1)
    ]
    evalset = tmp_path / "intents.evalset.json"
    evalset.write_text(json.dumps({"eval_set_id": "intents", "eval_cases": cases}))
    write_classifier(tmp_path / "v1", WORSE)
    write_classifier(tmp_path / "v2", BETTER)
    out = tmp_path / "out"

    monkeypatch.chdir(tmp_path / "v1")
    assert main(["run", str(evalset), "--runs", "3", "--output", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("overall: 42/60  (70%, 95% CI 57%–80%)\n")
    (earlier,) = list((out / "intents").iterdir())

    monkeypatch.chdir(tmp_path / "v2")
    # a file in the current directory imports as its module ("classifier"), once per
    # process: the second run is a new process for the user, so forget the first's
    monkeypatch.delitem(sys.modules, "classifier")
    code = main(
        ["run", str(evalset), "--runs", "3", "--output", str(out), "--baseline", str(earlier)]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "overall: 51/60  (85%, 95% CI 74%–92%)" in printed.splitlines()
    assert re.search(
        r"baseline: run \w{8} .*\n  Overall \(20 case\(s\) paired\): mean pass rate 70\.0% -> "
        r"85\.0%",
        printed,
    )
    (run_dir,) = [path for path in (out / "intents").iterdir() if path != earlier]
    results = read_json(run_dir / "results.json")
    rates = {case["case_id"]: (case["passed"], case["runs"]) for case in results["cases"]}
    assert rates == {
        case["eval_id"]: (0 if case["eval_id"] in WRONG_NOW else 3, 3) for case in cases
    }
    assert results["agent"] == "classifier.py:classify"
    assert {c["criterion"] for case in results["cases"] for c in case["criteria"]} == {
        "output_matches"
    }
    # the comparison names the cases that changed since the earlier classifier
    compared = read_json(run_dir / "comparison.json")["comparison"]["cases"]
    changed = {
        case["case_id"]: (case["baseline"]["passed"], case["candidate"]["passed"])
        for case in compared
        if case["baseline"]["passed"] != case["candidate"]["passed"]
    }
    assert changed == {case_id: (0, 3) for case_id in FIXED_SINCE}
    # each trial recorded what the classifier returned
    trials = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    wrong = next(t for t in trials if t["case_id"] == "greeting_5")
    assert wrong["turns"][0]["output"] == "unknown"


SEARCHED = [
    {"role": "user", "content": "Find me a flight to Paris tomorrow"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "search_flights", "args": {"to": "Paris"}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "AF123 at 09:00, 180 EUR"},
    {"role": "assistant", "content": "AF123 leaves at 09:00 for 180 EUR. Shall I book it?"},
]

AGENT = """\
from agentflow_eval.agents.litellm_agent import LiteLLMAgent


def search_flights(to: str) -> str:
    \"\"\"Search flights.

    Args:
        to: The destination.
    \"\"\"
    return "AF123"


def book_flight(flight: str) -> str:
    \"\"\"Book a flight.

    Args:
        flight: The flight.
    \"\"\"
    return "booked"


def send_confirmation(flight: str) -> str:
    \"\"\"Mail the booking.

    Args:
        flight: The flight.
    \"\"\"
    return "sent"


agent = LiteLLMAgent(
    "openai/scripted",
    api_base={url!r},
    api_key="test",
    tools=[search_flights, book_flight, send_confirmation],
)
"""


def scripted_agent(request: dict[str, Any]) -> Reply:
    """Books the flight, then mails the booking, then answers: the next step is the
    booking, and the agent goes on past it."""
    results = sum(1 for message in request["messages"] if message["role"] == "tool")
    if results == 1:  # the seeded search result only
        return Reply.tools(("book_flight", {"flight": "AF123"}))
    if results == 2:
        return Reply.tools(("send_confirmation", {"flight": "AF123"}))
    return Reply.text("Booked AF123 and mailed you the confirmation.")


def test_a_seeded_history_case_judges_the_litellm_loops_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def next_step_case(eval_id: str, expected: dict[str, Any]) -> dict[str, Any]:
        return {
            "eval_id": eval_id,
            "history": SEARCHED,
            "next_step_only": True,
            "conversation": [
                {"user_content": "Yes, book it", "expected_tool_trajectory": [expected]}
            ],
            # hermetic: no real tool runs, whatever the model asks for
            "tool_mocks": [
                {"tool": "book_flight", "result": "booked"},
                {"tool": "send_confirmation", "result": "sent"},
            ],
            "unmocked_tools": "fail",
        }

    evalset = tmp_path / "booking.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "booking",
                "eval_cases": [
                    next_step_case(
                        "books_next", {"name": "book_flight", "args": {"flight": "AF123"}}
                    ),
                    next_step_case(
                        "mails_next", {"name": "send_confirmation", "args": {"flight": "AF123"}}
                    ),
                ],
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    with ScriptedOpenAIServer(handler=scripted_agent) as server:
        (tmp_path / "booking_agent.py").write_text(AGENT.format(url=server.url))
        code = main(
            [
                "run",
                "booking_agent.py:agent",
                str(evalset),
                "--runs",
                "2",
                "--output",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )
        first = server.requests[0]["messages"]
    assert code == 0
    assert capsys.readouterr().out.startswith("overall: 2/4  (50%, 95% CI 15%–85%)\n")
    # the model's first request is the seeded conversation, then the new user turn
    assert first == [
        {"role": "user", "content": "Find me a flight to Paris tomorrow"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_flights", "arguments": '{"to": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "AF123 at 09:00, 180 EUR"},
        {"role": "assistant", "content": "AF123 leaves at 09:00 for 180 EUR. Shall I book it?"},
        {"role": "user", "content": "Yes, book it"},
    ]
    (run_dir,) = list((tmp_path / "out" / "booking").iterdir())
    results = read_json(run_dir / "results.json")
    verdicts = {case["case_id"]: (case["passed"], case["runs"]) for case in results["cases"]}
    # right next call passes though the agent goes on; a wrong expected next call fails
    assert verdicts == {"books_next": (2, 2), "mails_next": (0, 2)}
    assert all(case["next_step_only"] for case in results["cases"])
    # the trials keep the whole trajectory; the report says what was judged
    trials = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    assert {tuple(call["name"] for call in t["turns"][0]["tool_calls"]) for t in trials} == {
        ("book_flight", "send_confirmation")
    }
    assert all(call["served_by"] == "mock" for t in trials for call in t["turns"][0]["tool_calls"])
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert NEXT_STEP_ONLY in case_details(page, "books_next")["facts"]


async def test_the_flow_plans_a_run_of_component_cases_without_an_agent(tmp_path: Path) -> None:
    module = tmp_path / "shout.py"
    module.write_text("async def shout(text):\n    return text.upper()\n")
    evalset = tmp_path / "shout.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "shout",
                "eval_cases": [
                    {"eval_id": "hi", "component": f"{module}:shout", "input": "hi"}
                    | {"expected_output": "HI"}
                ],
            }
        )
    )
    params = RunRequest(evalset=str(evalset), runs=2, output_dir=str(tmp_path / "out"))
    assert params.agent is None
    outcome = await evaluate(**params.flow_parameters())  # the flow's own load task plans it
    assert (outcome.run.totals.passed, outcome.run.totals.trials) == (2, 2)
    assert outcome.run.agent == f"{module}:shout"
