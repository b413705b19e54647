"""Conversations read from where they were kept: an ADK session as ADK 2.13 saved it (read
as ADK's own "add session to eval set" reads it), an OTLP JSON trace written by the
OpenTelemetry SDK, a chat transcript, a run's trial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.files.sessions import SessionSourceError, read_session

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ADK = FIXTURES / "adk213" / "sessions"


@pytest.mark.parametrize("name", ["weather_session.json", "weather_session_snake.json"])
def test_an_adk_session_reads_as_adks_own_conversion_does(name: str) -> None:
    conversation = read_session(str(ADK / name))
    adk = json.loads((ADK / "adk_reads.json").read_text())
    assert [t.user_text for t in conversation.turns] == [
        inv["user_content"]["parts"][0]["text"] for inv in adk
    ]
    assert [t.final_response for t in conversation.turns] == [
        inv["final_response"]["parts"][0]["text"] for inv in adk
    ]
    adk_calls = [
        [
            (part["function_call"]["name"], part["function_call"]["args"])
            for event in inv["intermediate_data"]["invocation_events"]
            for part in event.get("content", {}).get("parts", [])
            if "function_call" in part
        ]
        for inv in adk
    ]
    assert [[(c.name, c.args) for c in t.tool_calls] for t in conversation.turns] == adk_calls
    first, second = conversation.turns
    assert first.tool_calls[1].result == {"city": "Paris", "weather": "sunny, 21°C"}
    # what ADK's conversion drops is kept: who acted, the transfer, each response's usage
    assert [n.name for n in first.nodes] == ["root_agent", "weather_agent"]
    assert [(h.source, h.target) for h in first.handoffs] == [("root_agent", "weather_agent")]
    assert first.usage.calls == 3 and first.usage.total_tokens == 45
    assert conversation.final_state == {"units": "metric", "last_city": "Oslo"}
    assert conversation.session_input is not None
    assert conversation.session_input.state == {"units": "metric"}  # before the tool's write
    assert (conversation.session_input.app_name, conversation.session_input.user_id) == (
        "weather_app",
        "ana",
    )
    assert [n.name for n in second.nodes] == ["weather_agent"]


def test_an_otlp_export_of_an_instrumented_agent_reads_by_the_genai_conventions() -> None:
    conversation = read_session(str(FIXTURES / "otlp" / "weather_trace.otlp.json"))
    first, second = conversation.turns
    assert (first.user_text, second.user_text) == ("What's the weather in Paris?", "And in Oslo?")
    assert [(c.name, c.args, c.result) for c in first.tool_calls] == [
        ("get_weather", {"city": "Paris"}, {"city": "Paris", "weather": "sunny, 21°C"})
    ]
    assert first.final_response == "It is sunny in Paris, 21°C."
    assert second.final_response == "Oslo has snow, -3°C."
    assert first.usage.calls == 2 and first.usage.prompt_tokens == 20
    assert [n.name for n in first.nodes] == ["weather_agent"]
    kinds = [e.kind for e in first.events]
    assert kinds == ["node", "model_call", "tool_call", "model_call"]
    assert first.intermediate_responses == []  # the answer is not said on the way


def test_a_chat_transcript_reads_turn_by_turn(tmp_path: Path) -> None:
    transcript = tmp_path / "chat.json"
    transcript.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "system", "content": "You are helpful."},
                    {"role": "user", "content": "Order A-1?"},
                    {
                        "role": "assistant",
                        "content": "Checking.",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"id": "A-1"}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
                    {"role": "assistant", "content": "It shipped."},
                    {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
                    {"role": "assistant", "content": "You're welcome."},
                ]
            }
        )
    )
    conversation = read_session(str(transcript))
    first, second = conversation.turns
    assert [(c.name, c.args, c.result) for c in first.tool_calls] == [
        ("lookup", {"id": "A-1"}, {"status": "shipped"})
    ]
    assert first.intermediate_responses == ["Checking."] and first.final_response == "It shipped."
    assert (second.user_text, second.final_response) == ("Thanks!", "You're welcome.")
    assert conversation.notes == ["the system prompt is the agent's: left out of the case"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"messages": [{"role": "assistant", "content": "hi"}]}', "before any user message"),
        (
            '[{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "z"}]',
            "no assistant message made",
        ),
        ('{"resourceSpans": []}', "no agent turn in the trace export"),
        ('{"hello": 1}', "not a conversation this reads"),
    ],
)
def test_a_source_that_is_no_conversation_is_one_line(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(SessionSourceError, match=says) as caught:
        read_session(str(path))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_source_says_what_a_source_is(tmp_path: Path) -> None:
    with pytest.raises(SessionSourceError, match="a run's trial"):
        read_session(str(tmp_path / "nope.json"))
    with pytest.raises(SessionSourceError, match="not a run folder"):
        read_session(f"{tmp_path}#case/1")
