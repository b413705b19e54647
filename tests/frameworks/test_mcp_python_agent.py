"""A hand-written Python agent calls the MCP servers' tools itself: through
``recorder.acall_tool``, each trial on its own server, a mock answering for one tool as
for any other. The order-desk example does so with its shipping server
(``examples/order_desk/mcp_config.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval import PythonAgent, SessionContext
from agentflow_eval.agents.base import TrajectoryRecorder
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.criteria.config_files import config_from_data
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.evaluate import evaluate
from examples.order_desk import EVALSET, FOLDER
from tests.support.mcp_processes import server_command, server_pids

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="processes are read from /proc")


async def refunds_through_the_server(
    message: str, recorder: TrajectoryRecorder, session: SessionContext
) -> str:
    lookup = session.mcp_tool("lookup_order")
    refund = session.mcp_tool("refund_order")
    assert lookup is not None and refund is not None, "the trial's server serves both"
    order = await recorder.acall_tool(lookup, order_id="A-1")
    done = await recorder.acall_tool(refund, order_id="A-1", reason="broken")
    return f"{order['status']}; {done}"


def sync_caller(message: str, recorder: TrajectoryRecorder, session: SessionContext) -> str:
    tool = session.mcp_tool("lookup_order")
    assert tool is not None
    return str(recorder.call_tool(tool, order_id="A-1"))  # type: ignore[arg-type]


def orders_set() -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "mcp_orders",
            "eval_cases": [
                {"eval_id": "refund", "conversation": [{"user_content": "Refund order A-1."}]}
            ],
        }
    )


def config(**extra: Any) -> Any:
    return config_from_data(
        {
            "criteria": {"completes": 1.0},
            "mcp_servers": [{"name": "orders", "command": server_command()}],
            **extra,
        }
    )


async def test_a_python_agent_calls_each_trials_own_server(tmp_path: Path) -> None:
    run = await evaluate(
        PythonAgent(refunds_through_the_server), orders_set(), config(), runs=2, output_dir=tmp_path
    )
    assert [t.status for t in run.trials] == ["passed", "passed"]
    pids = set()
    for result in run.trials:
        [turn] = result.trial.turns
        lookup, refund = turn.tool_calls
        assert (lookup.name, lookup.served_by, lookup.result["calls"]) == (
            "lookup_order",
            "tool",
            1,
        )
        assert (refund.name, refund.result) == ("refund_order", "refunded A-1: 42.0")
        pids.add(lookup.result["pid"])
    assert len(pids) == 2  # a server per trial
    assert server_pids() == []


async def test_a_mock_answers_for_the_mcp_tool_a_python_agent_calls(tmp_path: Path) -> None:
    mocked = {"id": "A-1", "status": "lost in transit"}
    run = await evaluate(
        PythonAgent(refunds_through_the_server),
        orders_set(),
        config(tool_mocks=[{"tool": "lookup_order", "result": mocked}]),
        runs=1,
        output_dir=tmp_path,
    )
    [turn] = run.trials[0].trial.turns
    lookup, refund = turn.tool_calls
    assert (lookup.served_by, lookup.result) == ("mock", mocked)
    assert refund.served_by == "tool"
    assert turn.final_response == "lost in transit; refunded A-1: 42.0"


async def test_calling_an_mcp_tool_synchronously_says_how_to_call_it(tmp_path: Path) -> None:
    run = await evaluate(PythonAgent(sync_caller), orders_set(), config(), output_dir=tmp_path)
    error = run.trials[0].trial.error
    assert error is not None and "await recorder.acall_tool" in error.message
    assert server_pids() == []


async def test_the_order_desk_asks_each_trials_shipping_server(tmp_path: Path) -> None:
    run = await evaluate(
        load_agent("examples.order_desk.agent:agent"),
        EVALSET,
        FOLDER / "mcp_config.json",
        cases=["order_status", "refund_delivered_order"],
        output_dir=tmp_path,
    )
    tracked = [
        call
        for result in run.trials
        if result.trial.case_id == "order_status"
        for turn in result.trial.turns
        for call in turn.tool_calls
        if call.name == "track_shipment"
    ]
    assert len(tracked) == 5 and {c.served_by for c in tracked} == {"tool"}
    assert {c.result["carrier"] for c in tracked} == {"UPS"}  # from the trial's database
    answers = {
        r.trial.turns[0].final_response for r in run.trials if r.trial.case_id == "order_status"
    }
    assert answers == {
        "Order A-1002 (office chair) is shipped: UPS says in transit, at the Leipzig hub, "
        "due 2026-12-02."
    }
    # the server changes no verdict of the example: its cases pass as without it (README)
    passed = Counter(r.trial.case_id for r in run.trials if r.passed)
    assert passed == {"order_status": 5, "refund_delivered_order": 2}
    assert server_pids("examples.order_desk.shipping_server") == []
