"""ADK's ``include_intermediate_responses_in_final`` on the LLM judges that read it, and
rubric ``type`` deciding which rubric criterion judges a case's rubric."""

from __future__ import annotations

import json
import re

from judge_helpers import case, fenced, judge_trial, prompt_of, trial, verdict

from agentflow_eval.models.evalset import Invocation, Rubric
from agentflow_eval.models.results import Turn
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

RUBRIC_LINE = re.compile(r"^- \[(?P<id>[^\]]+)\] ", re.MULTILINE)


def talking_invocation() -> Invocation:
    return Invocation.model_validate(
        {
            "user_content": "Book me a table for two.",
            "final_response": "Booked for 19:00.",
            "intermediate_data": {
                "intermediate_responses": [["booker", [{"text": "Checking availability."}]]]
            },
        }
    )


def talking_turn() -> Turn:
    return Turn(
        invocation_id="inv",
        user_text="Book me a table for two.",
        intermediate_responses=["Let me check availability."],
        final_response="Done: 19:00.",
    )


async def test_the_match_judge_sees_intermediate_responses_on_both_sides_when_asked(
    server: ScriptedOpenAIServer,
):
    server.push(verdict("valid"), verdict("valid"))
    judged = case(talking_invocation())
    plain = await judge_trial(
        server, "final_response_match_v2", judged, trial(talking_turn()), num_samples=1
    )
    both = await judge_trial(
        server,
        "final_response_match_v2",
        judged,
        trial(talking_turn()),
        num_samples=1,
        include_intermediate_responses_in_final=True,
    )
    first, second = (prompt_of(request) for request in server.requests)
    assert fenced(first, "AGENT_ANSWER") == "Done: 19:00."
    assert fenced(first, "REFERENCE_ANSWER") == "Booked for 19:00."
    assert fenced(second, "AGENT_ANSWER") == "Let me check availability.\nDone: 19:00."
    assert fenced(second, "REFERENCE_ANSWER") == "Checking availability.\nBooked for 19:00."
    assert plain.details["invocations"][0]["actual"] == "Done: 19:00."
    assert both.label == "answer with intermediate responses matches reference (LLM judge) >= 0.8"


async def test_the_answer_rubrics_see_intermediate_responses_when_asked(
    server: ScriptedOpenAIServer,
):
    reply = {"verdicts": [{"rubric_id": "polite", "verdict": "yes", "reasoning": "r"}]}
    server.push(Reply.text(json.dumps(reply)))
    await judge_trial(
        server,
        "rubric_based_final_response_quality_v1",
        case(talking_invocation()),
        trial(talking_turn()),
        num_samples=1,
        rubrics=[Rubric(rubric_id="polite", rubric_content="Is polite.")],
        include_intermediate_responses_in_final=True,
    )
    prompt = prompt_of(server.requests[0])
    assert "Let me check availability.\nDone: 19:00." in prompt


async def test_a_typed_rubric_is_judged_only_by_its_kind_of_criterion(
    server: ScriptedOpenAIServer,
):
    seen: list[list[str]] = []

    def judge(body: dict) -> Reply:
        ids = [m.group("id") for m in RUBRIC_LINE.finditer(prompt_of(body))]
        seen.append(ids)
        return Reply.text(
            json.dumps(
                {"verdicts": [{"rubric_id": i, "verdict": "yes", "reasoning": "r"} for i in ids]}
            )
        )

    server.handler = judge
    judged = case(
        talking_invocation(),
        rubrics=[
            Rubric(
                rubric_id="answer", rubric_content="Gives a time.", type="FINAL_RESPONSE_QUALITY"
            ),
            Rubric(rubric_id="tools", rubric_content="Checks first.", type="TOOL_USE_QUALITY"),
            Rubric(rubric_id="any", rubric_content="Is relevant."),
        ],
    )
    for criterion in ("rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1"):
        await judge_trial(server, criterion, judged, trial(talking_turn()), num_samples=1)
    assert [sorted(ids) for ids in seen] == [["answer", "any"], ["any", "tools"]]
