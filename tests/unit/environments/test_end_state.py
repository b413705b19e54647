"""Verdicts on the end state: what the world holds when the agent is done, read before
its environment is torn down and kept in the trial, judged by ``end_state_match``
against the case's checks — never by what the agent says. A later ``rejudge`` judges
the kept end state again; the report shows each check's expected and found values."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from support.report_page import case_details

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.environments.environment import Environment
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.loading import load_evalset
from agentflow_eval.models.end_state import EndStateCheck
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.results import CriterionResult, TrialResult
from agentflow_eval.pipeline.evaluate import evaluate, evaluate_outcome, rejudge, with_trials
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from examples.order_desk import CONFIG, EVALSET
from examples.order_desk.tools import lookup_order, refund_order

REFUND_CASE = "refund_delivered_order"


def verdict(result: TrialResult, name: str = "end_state_match") -> CriterionResult:
    (found,) = [c for c in result.criteria if c.criterion == name]
    return found


def refund_case_only() -> EvalSet:
    eval_set = load_evalset(EVALSET).eval_set
    return eval_set.model_copy(update={"eval_cases": [eval_set.case(REFUND_CASE)]}, deep=True)


def refunds(message: str, recorder: Any, environment: Environment) -> str:
    with recorder.tool("refund_order", {"order_id": "A-1001", "reason": "broken"}) as call:
        call.result = refund_order("A-1001", "broken", environment)
    return "Order A-1001 has been refunded."


def only_says_so(message: str, environment: Environment) -> str:
    assert environment.database is not None  # it had the database, and left it alone
    return "Order A-1001 has been refunded."


@pytest.mark.parametrize(
    ("agent", "passes"), [(refunds, True), (only_says_so, False)], ids=["wrote", "said"]
)
async def test_saying_refunded_is_not_refunding(tmp_path: Path, agent: Any, passes: bool) -> None:
    run = await evaluate(
        PythonAgent(agent), refund_case_only(), load_config(CONFIG), runs=3, output_dir=tmp_path
    )
    for result in run.trials:
        assert verdict(result, "final_contains").passed  # both say the words
        judged = verdict(result)
        assert judged.passed is passes
        assert result.passed is passes
        state = result.trial.end_state
        assert state is not None and state.captured is not None
        refunded = [r for r in state.captured["refunds"] if r["order_id"] == "A-1001"]
        assert len(refunded) == (1 if passes else 0)
    if not passes:
        assert judged.reason is not None and "found []" in judged.reason


def desk_model(request: dict[str, Any]) -> Reply:
    """A scripted model: ``openai/honest`` refunds with the tool, then says so;
    ``openai/liar`` only says so."""
    messages = request["messages"]
    if messages[-1]["role"] == "tool":
        return Reply.text("Order A-1001 has been refunded.")
    if request["model"].endswith("honest"):
        return Reply.tools(("refund_order", {"order_id": "A-1001", "reason": "broken"}))
    return Reply.text("Order A-1001 has been refunded.")


@pytest.mark.parametrize(("model", "passes"), [("honest", True), ("liar", False)])
async def test_a_litellm_agents_tool_writes_the_trials_own_database(
    tmp_path: Path, model: str, passes: bool
) -> None:
    with ScriptedOpenAIServer(handler=desk_model) as server:
        agent = LiteLLMAgent(
            f"openai/{model}",
            tools=[lookup_order, refund_order],
            api_base=server.url,
            api_key="sk-test",
        )
        run = await evaluate(
            agent, refund_case_only(), load_config(CONFIG), runs=4, output_dir=tmp_path
        )
        for request in server.requests:  # the model never sees the injected parameter
            for tool in request.get("tools", []):
                assert "environment" not in tool["function"]["parameters"]["properties"]
    assert [r.passed for r in run.trials] == [passes] * 4
    calls = Counter(call.name for r in run.trials for call in r.trial.tool_calls)
    assert calls == ({"refund_order": 4} if passes else {})


async def test_the_order_desk_example_is_judged_by_its_database(tmp_path: Path) -> None:
    outcome = await evaluate_outcome(
        load_agent("examples.order_desk.agent:agent"), EVALSET, CONFIG, output_dir=tmp_path
    )
    run = with_trials(outcome)
    passed = Counter(r.trial.case_id for r in run.trials if r.passed)
    assert passed == {
        "refund_delivered_order": 2,
        "refuse_undelivered_order": 4,
        "no_second_refund": 5,
        "order_status": 5,
        "injected_note_in_lookup": 3,
    }
    # the agent obeys the note injected into A-1001's lookup in trials 0 and 4: the
    # injection criterion and the database agree on which
    for result in run.trials:
        if result.trial.case_id == "injected_note_in_lookup":
            obeyed = result.trial.trial_index in (0, 4)
            assert verdict(result, "injection_resisted").passed is not obeyed
            assert verdict(result).passed is not obeyed
    (injected,) = [case for case in run.cases if case.case_id == "injected_note_in_lookup"]
    assert injected.pass_rate == pytest.approx(0.6)
    for result in run.trials:
        if result.trial.case_id == REFUND_CASE and not result.passed:
            assert verdict(result, "final_contains").passed  # it said "refunded"
            assert not verdict(result).passed  # the database says otherwise
    by_case = {case.case_id: case for case in run.cases}
    assert by_case[REFUND_CASE].pass_hat_k == {"1": 0.4, "3": 0.0, "5": 0.0}
    assert by_case["order_status"].pass_hat_k["5"] == 1.0
    # the report shows each check's expected and found values
    page = (outcome.run_dir / "report.html").read_text(encoding="utf-8")
    details = case_details(page, REFUND_CASE)
    failing = next(t for t in details["trials"] if t["status"] == "failed")
    (shown,) = [v for v in failing["verdicts"] if v["label"] == "end state"]
    text = json.dumps(shown)
    assert "expected" in text and "found" in text and '[[\\"A-1001\\", 42.0]]' in text


async def test_rejudging_reads_the_kept_end_state_again(tmp_path: Path) -> None:
    first = await evaluate(
        load_agent("examples.order_desk.agent:agent"),
        refund_case_only(),
        load_config(CONFIG),
        output_dir=tmp_path / "first",
    )
    (run_dir,) = (tmp_path / "first" / "order_desk").iterdir()
    passed_before = [r.passed for r in first.trials]
    assert passed_before.count(True) == 2
    # the same checks, the other way round; one new captured-state check; one new query
    changed = refund_case_only()
    case = changed.eval_cases[0]
    case.end_state = [
        EndStateCheck(sql=case.end_state[1].sql, expect=[["delivered"]]),
        EndStateCheck(json_path="length(refunds)", expect=1),
    ]
    again = await rejudge(run_dir, eval_set=changed, output_dir=tmp_path / "again")
    assert [r.passed for r in again.trials] == [not p for p in passed_before]
    case.end_state.append(EndStateCheck(sql="SELECT COUNT(*) FROM orders", expect=[[3]]))
    unread = await rejudge(run_dir, eval_set=changed, output_dir=tmp_path / "unread")
    for result in unread.trials:
        judged = verdict(result)
        assert judged.status == "not_evaluated"
        assert judged.reason is not None and "SELECT COUNT(*) FROM orders" in judged.reason


def writes_files(message: str, workdir: Path) -> str:
    (workdir / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    (workdir / "state.json").write_text(json.dumps({"cart": [{"sku": "m1", "n": 2}]}))
    return "saved"


def has_milk(environment: Environment, *, word: str) -> bool:
    assert environment.folder is None and environment.database is None
    return False  # the default environment knows no folder: checks read the workdir


async def test_without_an_environment_checks_read_the_trials_working_directory(
    tmp_path: Path,
) -> None:
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "files",
            "eval_cases": [
                {
                    "eval_id": "writes",
                    "conversation": [{"user_content": "note it"}],
                    "end_state": [
                        {"file": "notes.txt", "expect": "milk", "match": "contains"},
                        {"file": "state.json", "json_path": "cart[0].n", "expect": 2},
                        {"file": "missing.txt", "expect": "x"},
                        {"sql": "SELECT 1", "expect": [[1]]},
                        {"check": "test_end_state:has_milk", "options": {"word": "milk"}},
                    ],
                }
            ],
        }
    )
    run = await evaluate(PythonAgent(writes_files), eval_set, None, runs=1, output_dir=tmp_path)
    (result,) = run.trials
    assert [c.criterion for c in result.criteria] == ["end_state_match"]  # no ADK defaults
    judged = verdict(result)
    assert judged.score == pytest.approx(2 / 5)
    holds = [row["holds"] for row in judged.details["checks"]]
    assert holds == [True, True, False, False, False]
    errors = [row.get("error", "") for row in judged.details["checks"]]
    assert errors[2].startswith("FileNotFoundError") and "no database to query" in errors[3]


async def test_a_check_function_that_cannot_load_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "bad",
            "eval_cases": [
                {
                    "eval_id": "c",
                    "conversation": [{"user_content": "hi"}],
                    "end_state": [{"check": "test_end_state:has_milk", "options": {"wrd": 1}}],
                }
            ],
        }
    )
    with pytest.raises(EvalFileError) as refused:
        await evaluate(PythonAgent(writes_files), eval_set, None, output_dir=tmp_path / "out")
    assert refused.value.field == "end_state[0].check" and refused.value.case_id == "c"
    assert "cannot be called with the trial's environment" in str(refused.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"sql": "SELECT 1"}, "needs 'expect'"),
        ({"sql": "SELECT 1", "file": "x", "expect": 1}, "reads one thing"),
        ({"expect": 1}, "reads 'sql', 'file', 'json_path' or 'check'"),
        ({"json_path": "a[", "expect": 1}, "is not a JMESPath expression"),
        ({"file": "x", "database": "y.db", "expect": 1}, "'database' is for an 'sql' check"),
        ({"check": "nocolon", "expect": 1}, "is not 'package.module:attr'"),
    ],
)
def test_a_malformed_check_is_refused_with_what_is_wrong(
    check: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        EndStateCheck.model_validate(check)


def test_a_check_function_expects_true_by_default() -> None:
    assert EndStateCheck(check="m:f").expect is True
