"""Tool mocks with the agent README teaches first: its tool call goes through the recorder
where a mock can answer. An agent whose own code runs a mocked tool (``recorder.tool``'s
block) fails its trial with the whole of why and what to do, folded over the
scorecard's lines rather than cut, with and without ``--verbose``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support.cli_in_process import CliResult
from tests.support.markdown_doc import blocks_of

ROOT = Path(__file__).resolve().parents[3]

BYPASSING_AGENT = """
def lookup_order(order_id: str) -> str:
    return "shipped"


def agent(message: str, recorder) -> str:
    with recorder.tool("lookup_order", {"order_id": "A-1001"}) as call:
        call.result = lookup_order("A-1001")
    return f"Order A-1001 is {call.result}."
"""


def _readme_agent() -> str:
    blocks = blocks_of((ROOT / "README.md").read_text())
    (block,) = [b for b in blocks if b.attrs.get("file") == "my_agent.py"]
    return block.text


def _mocked_evalset(path: Path) -> Path:
    path.write_text(
        json.dumps(
            {
                "eval_set_id": "orders",
                "eval_cases": [
                    {
                        "eval_id": "one_order",
                        "conversation": [
                            {
                                "user_content": "Where is order A-1001?",
                                "expected_tool_trajectory": [
                                    {"name": "lookup_order", "args": {"order_id": "A-1001"}}
                                ],
                            }
                        ],
                        "tool_mocks": [{"tool": "lookup_order", "result": "lost at sea"}],
                    }
                ],
            }
        )
    )
    return path


def _trials(out: Path) -> list[dict[str, object]]:
    (trials,) = out.rglob("trials.jsonl")
    return [json.loads(line) for line in trials.read_text().splitlines()]


def test_readmes_first_agent_takes_a_mock(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(_readme_agent())
    evalset = _mocked_evalset(tmp_path / "orders.evalset.json")
    out = tmp_path / "out"
    result = cli(
        "run", f"{tmp_path / 'my_agent.py'}:agent", str(evalset), "--runs", "2",
        "--no-prefect", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for trial in _trials(out):
        (turn,) = trial["turns"]  # type: ignore[misc]
        assert turn["final_response"] == "Order A-1001 is lost at sea."
        assert [call["served_by"] for call in turn["tool_calls"]] == ["mock"]


def test_a_mocked_tool_in_the_agents_own_code_says_the_whole_fix(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    (tmp_path / "bypass_agent.py").write_text(BYPASSING_AGENT)
    evalset = _mocked_evalset(tmp_path / "orders.evalset.json")
    for verbose in ((), ("--verbose",)):
        result = cli(
            "run", f"{tmp_path / 'bypass_agent.py'}:agent", str(evalset), "--runs", "1",
            "--no-prefect", "--output", str(tmp_path / f"out{len(verbose)}"), *verbose,
        )  # fmt: skip
        assert result.returncode == 4, result.stdout + result.stderr  # every trial errored
        assert "…" not in result.stdout
        lines = result.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if "errored ×1 (trial 1): " in line)
        said = lines[start].split("errored ×1 (trial 1): ", 1)[1]
        for line in lines[start + 1 :]:
            if not line.startswith(" " * 10):
                break
            said += " " + line.strip()
        assert said.endswith(
            "call it as recorder.call_tool(lookup_order, **args) (or await "
            "recorder.acall_tool(...)) so the mock answers instead"
        ), said
        assert max(len(line) for line in lines) < 200
