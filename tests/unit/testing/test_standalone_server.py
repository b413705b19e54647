"""The scripted server's standalone form reads its answers from JSON: each kind of
answer, and a file it cannot use refused in one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval.testing.__main__ import main, reply_of


def test_each_kind_of_answer_is_read() -> None:
    text = reply_of({"text": "hi", "prompt_tokens": 3, "completion_tokens": 1, "delay_s": 0.5})
    assert (text.content, text.prompt_tokens, text.completion_tokens, text.delay_s) == (
        "hi",
        3,
        1,
        0.5,
    )
    calls = reply_of({"tool_calls": [{"name": "get_weather", "args": {"location": "Oslo"}}]})
    assert calls.tool_calls == [{"name": "get_weather", "arguments": {"location": "Oslo"}}]
    failure = reply_of({"status": 429, "message": "slow down", "headers": {"retry-after": "1"}})
    assert (failure.status, failure.headers) == (429, {"retry-after": "1"})
    assert json.loads(failure.raw_body or "")["error"]["message"] == "slow down"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"text": "not a list"}', "expected a JSON list of answers"),
        ('[{"content": "hi"}]', "a reply needs 'text', 'tool_calls' or 'status'"),
        ("[{", "Expecting"),
    ],
)
def test_a_replies_file_it_cannot_use_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(content)
    assert main(["--replies", str(replies)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err and str(replies) in err
