"""ADK's remaining judges against a scripted model server: ``response_evaluation_score``
(1 to 5), the whole-conversation ``multi_turn_*`` metrics,
``rubric_based_multi_turn_trajectory_quality_v1`` and
``per_turn_user_simulator_quality_v1`` — what each shows the judge, how the votes become
a score, and what each records for a person checking it (the content key, whether the
samples disagreed)."""

from __future__ import annotations

import json

import pytest
from judge_helpers import case, fenced, invocation, judge_trial, prompt_of, trial, turn

from agentflow_eval.criteria.config_files import config_from_data
from agentflow_eval.models.evalset import ConversationScenario, EvalCase, Rubric
from agentflow_eval.models.results import RecordedToolCall, Turn
from agentflow_eval.testing import Reply, ScriptedOpenAIServer


def rating(value: int) -> Reply:
    return Reply.text(json.dumps({"reasoning": "r", "rating": value}))


def properties(*verdicts: str) -> Reply:
    return Reply.text(
        json.dumps(
            {
                "properties": [
                    {"property": f"p{i}", "reasoning": "r", "verdict": v}
                    for i, v in enumerate(verdicts)
                ]
            }
        )
    )


def valid(is_valid: bool | str) -> Reply:
    return Reply.text(json.dumps({"reasoning": "r", "is_valid": is_valid}))


# ------------------------------------------------------------- response_evaluation_score


async def test_coherence_is_the_mean_of_each_turns_median_rating_on_adks_scale(
    server: ScriptedOpenAIServer,
):
    ratings = {"Sunny.": [5, 4, 5], "Rain rain rain maybe.": [2, 3, 2]}

    def judge(body: dict) -> Reply:
        answer = fenced(prompt_of(body), "AGENT_ANSWER")
        return rating(ratings[answer].pop(0))

    server.handler = judge
    result = await judge_trial(
        server,
        "response_evaluation_score",
        case(invocation("Weather?"), invocation("Tomorrow?")),
        trial(turn("Sunny."), turn("Rain rain rain maybe.")),
        num_samples=3,
        threshold=3.5,
    )
    assert server.request_count == 6
    assert result.score == pytest.approx((5 + 2) / 2)  # medians 5 and 2
    assert result.status == "passed" and result.threshold == 3.5
    assert result.details["score_range"] == [1.0, 5.0]
    assert result.details["samples_disagree"] is True  # 5, 4, 5 are not one verdict


async def test_coherence_rates_a_turn_without_answer_lowest_without_asking(
    server: ScriptedOpenAIServer,
):
    result = await judge_trial(
        server, "response_evaluation_score", case(invocation("Weather?")), trial(turn(None))
    )
    assert server.request_count == 0
    assert result.score == 1.0 and result.status == "failed"  # default threshold 4
    assert result.details["samples_disagree"] is False


def test_coherence_takes_a_threshold_on_its_own_scale():
    config = config_from_data({"criteria": {"response_evaluation_score": 4.5}})
    assert config.criteria["response_evaluation_score"].threshold == 4.5
    with pytest.raises(ValueError, match="less than or equal to 5"):
        config_from_data({"criteria": {"response_evaluation_score": 6}})
    with pytest.raises(ValueError, match="less than or equal to 1"):
        config_from_data({"criteria": {"response_match_score": 4.5}})


# ------------------------------------------------------------------- multi_turn_*


def two_turns_with_tools() -> list[Turn]:
    search = RecordedToolCall(name="search", args={"q": "Rome"}, result=["AF123"])
    book = RecordedToolCall(name="book", args={"flight": "AF123"}, error="sold out")
    return [
        turn("Found AF123.", [search], question="Find me a flight to Rome."),
        turn("Sorry, it sold out.", [book], question="Book it."),
    ]


@pytest.mark.parametrize(
    "metric",
    [
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    ],
)
async def test_a_multi_turn_metric_judges_the_whole_conversation_once(
    server: ScriptedOpenAIServer, metric: str
):
    bodies: list[dict] = []

    def judge(body: dict) -> Reply:
        bodies.append(body)
        return properties("yes", "yes", "no", "yes")

    server.handler = judge
    result = await judge_trial(
        server,
        metric,
        case(invocation("Find me a flight to Rome."), invocation("Book it.")),
        trial(*two_turns_with_tools()),
    )
    (body,) = bodies  # one sample, one prompt for both turns
    lines = [json.loads(line) for line in fenced(prompt_of(body), "CONVERSATION").splitlines()]
    assert lines[0] == {"turn": 1, "role": "user", "text": "Find me a flight to Rome."}
    assert {"turn": 1, "tool_call": "search", "args": {"q": "Rome"}, "result": ["AF123"]} in lines
    assert {
        "turn": 2,
        "tool_call": "book",
        "args": {"flight": "AF123"},
        "error": "sold out",
    } in lines
    assert lines[-1] == {"turn": 2, "role": "agent", "text": "Sorry, it sold out."}
    assert "the user's messages" in fenced(prompt_of(body), "USER_GOAL")
    assert result.score == 0.75 and result.status == "failed"  # default threshold 0.8
    (row,) = result.details["invocations"]
    assert row["turns"] == 2 and row["samples"][0]["score"] == 0.75
    assert result.reason == "not met: p2"


async def test_a_scenarios_plan_is_the_users_goal_and_samples_average(
    server: ScriptedOpenAIServer,
):
    replies = [properties("yes", "yes"), properties("yes", "no")]
    goals: list[str] = []

    def judge(body: dict) -> Reply:
        goals.append(fenced(prompt_of(body), "USER_GOAL"))
        return replies.pop(0)

    server.handler = judge
    scenario = EvalCase(
        eval_id="sim",
        conversation_scenario=ConversationScenario(
            starting_prompt="Hi", conversation_plan="Book a flight to Rome."
        ),
    )
    result = await judge_trial(
        server,
        "multi_turn_task_success_v1",
        scenario,
        trial(*two_turns_with_tools()),
        num_samples=2,
        threshold=0.6,
    )
    assert goals == ["Book a flight to Rome."] * 2
    assert result.score == pytest.approx(0.75) and result.status == "passed"
    assert result.details["samples_disagree"] is True  # 1.0 passes, 0.5 does not


async def test_a_reply_without_properties_is_malformed_and_retried(server: ScriptedOpenAIServer):
    server.push(Reply.text('{"properties": []}'), properties("yes"))
    result = await judge_trial(
        server, "multi_turn_tool_use_quality_v1", case(invocation("q")), trial(turn("a"))
    )
    assert server.request_count == 2 and result.score == 1.0


# --------------------------------------- rubric_based_multi_turn_trajectory_quality_v1


def rubric(rubric_id: str, content: str, kind: str | None = None) -> Rubric:
    return Rubric(rubric_id=rubric_id, rubric_content=content, type=kind)


async def test_conversation_rubrics_are_judged_once_over_every_turn(server: ScriptedOpenAIServer):
    seen: list[str] = []

    def judge(body: dict) -> Reply:
        prompt = prompt_of(body)
        seen.append(prompt)
        verdict = {"confirms": "yes", "apologises": "no", "polite": "yes"}
        ids = [line.split("]")[0][3:] for line in prompt.splitlines() if line.startswith("- [")]
        return Reply.text(
            json.dumps(
                {
                    "verdicts": [
                        {"rubric_id": i, "verdict": verdict[i], "reasoning": "r"} for i in ids
                    ]
                }
            )
        )

    server.handler = judge
    eval_case = case(
        invocation("Find me a flight to Rome."),
        invocation(
            "Book it.",
            rubrics=[
                rubric("apologises", "Apologises when a booking fails.", "TRAJECTORY_QUALITY"),
                rubric("short", "Answers in one sentence.", "FINAL_RESPONSE_QUALITY"),
            ],
        ),
        rubrics=[rubric("confirms", "Confirms before booking.")],
    )
    result = await judge_trial(
        server,
        "rubric_based_multi_turn_trajectory_quality_v1",
        eval_case,
        trial(*two_turns_with_tools()),
        num_samples=3,
        rubrics=[rubric("polite", "Is polite.")],
    )
    assert len(seen) == 3 and "Find me a flight to Rome." in seen[0] and "sold out" in seen[0]
    (row,) = result.details["invocations"]
    assert [item["rubric_id"] for item in row["rubrics"]] == ["polite", "confirms", "apologises"]
    assert result.score == pytest.approx(2 / 3)
    assert result.reason == "rubrics not met: apologises"


async def test_without_rubrics_the_conversation_rubric_criterion_is_skipped(
    server: ScriptedOpenAIServer,
):
    result = await judge_trial(
        server,
        "rubric_based_multi_turn_trajectory_quality_v1",
        case(invocation("q", rubrics=[rubric("x", "Short.", "FINAL_RESPONSE_QUALITY")])),
        trial(turn("a")),
    )
    assert result.status == "skipped" and server.request_count == 0


# ---------------------------------------------------- per_turn_user_simulator_quality_v1


def scenario_case() -> EvalCase:
    return EvalCase(
        eval_id="sim",
        conversation_scenario=ConversationScenario(
            starting_prompt="I need a flight.",
            conversation_plan="Ask for a flight to Rome, then book it.",
            user_persona="NOVICE",
        ),
    )


def simulated(*texts: str) -> list[Turn]:
    return [
        Turn(invocation_id=f"sim-{i}", user_text=text, final_response=f"answer {i}")
        for i, text in enumerate(texts, start=1)
    ]


async def test_each_simulated_turn_is_checked_against_the_plan_and_the_ending_too(
    server: ScriptedOpenAIServer,
):
    asked: dict[str, str] = {}  # the message judged -> the conversation shown before it

    def judge(body: dict) -> Reply:
        prompt = prompt_of(body)
        message = fenced(prompt, "SIMULATED_USER_MESSAGE")
        asked[message] = fenced(prompt, "CONVERSATION_HISTORY")
        return valid(message != "What about Paris?")

    server.handler = judge
    result = await judge_trial(
        server,
        "per_turn_user_simulator_quality_v1",
        scenario_case(),
        trial(*simulated("I need a flight.", "To Rome please.", "What about Paris?")),
        stop_signal="DONE",
    )
    assert sorted(asked) == ["DONE", "To Rome please.", "What about Paris?"]
    history = [json.loads(line) for line in asked["What about Paris?"].splitlines()]
    assert history == [
        {"turn": 1, "role": "user", "text": "I need a flight."},
        {"turn": 1, "role": "agent", "text": "answer 1"},
        {"turn": 2, "role": "user", "text": "To Rome please."},
        {"turn": 2, "role": "agent", "text": "answer 2"},
    ]
    assert result.score == pytest.approx(2 / 3)  # the first turn is the starting prompt
    assert result.details["ending_valid"] is True
    assert result.reason == "turns off the scenario: sim-3"


async def test_a_wrong_ending_fails_the_last_turn_and_a_wrong_start_the_first(
    server: ScriptedOpenAIServer,
):
    server.handler = lambda body: valid(
        fenced(prompt_of(body), "SIMULATED_USER_MESSAGE") != "</finished>"
    )
    result = await judge_trial(
        server,
        "per_turn_user_simulator_quality_v1",
        scenario_case(),
        trial(*simulated("Hello there.", "To Rome please.")),
    )
    assert result.score == 0.0  # start not the prompt; ending judged wrong
    rows = result.details["invocations"]
    assert [row["valid"] for row in rows] == [False, False, False]


async def test_a_scripted_case_has_no_simulated_user_to_check(server: ScriptedOpenAIServer):
    result = await judge_trial(
        server, "per_turn_user_simulator_quality_v1", case(invocation("q")), trial(turn("a"))
    )
    assert result.status == "skipped" and server.request_count == 0


# ------------------------------------------------------- what a reviewer's label keys on


async def test_the_content_key_follows_what_was_judged_not_the_judge(server: ScriptedOpenAIServer):
    server.handler = lambda body: rating(5)
    eval_case = case(invocation("Weather?"))

    async def key(answer: str, **options: object) -> str:
        result = await judge_trial(
            server, "response_evaluation_score", eval_case, trial(turn(answer)), **options
        )
        return str(result.details["content_key"])

    same = await key("Sunny.")
    assert same == await key("Sunny.", judge_model="openai/other-judge", num_samples=2)
    assert same != await key("Rainy.")
    assert same != await key("Sunny.", threshold=3.0)  # a pass means another thing
