"""Re-judging a finished run: its stored trials judged again with new or changed criteria,
in a new run folder that names its source, without one call to its agent.

The agent talks to a scripted OpenAI-compatible server and the judge is the offline demo
judge, so the server's request counter counts agent calls alone; and the other way round
(a Python agent, the judge on the server) to count judge calls, paid once across
re-judges through the judge cache."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.criteria.judges.cache import StoreJudgeCache
from agentflow_eval.demo import install as install_demo
from agentflow_eval.demo.judge import demo_judge_reply
from agentflow_eval.errors import InputError
from agentflow_eval.evaluator import AgentEvaluator, EvaluationFailed
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import CriterionConfig, EvalConfig, JudgeSettings
from agentflow_eval.models.evalset import EvalCase, EvalSet, Invocation, Message
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.evaluate import evaluate, rejudge
from agentflow_eval.pipeline.runner import DirectStages, RunServices, run_pipeline
from agentflow_eval.pipeline.stages import copy_trials_stage
from agentflow_eval.run.plan import plan_request
from agentflow_eval.run.run_json import RunRecord, read_run_json
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

KEY_ENV = "AGENTFLOW_TEST_REJUDGE_KEY"
ANSWER = "The weather in New York is sunny with a temperature of 72°F."


def _case(case_id: str, question: str, reference: str) -> EvalCase:
    return EvalCase(
        eval_id=case_id,
        conversation=[
            Invocation(
                user_content=Message.of(question),
                expected_final_response=Message.of(reference, role="model"),
            )
        ],
    )


EVAL_SET = EvalSet(
    eval_set_id="weather",
    eval_cases=[
        _case("new_york", "What's the weather in New York?", ANSWER),
        _case("london", "And in London?", "London is cloudy at 55°F."),
    ],
)
ROUGE = {"response_match_score": CriterionConfig(threshold=0.8)}
"""The source run's judging: the answer must overlap the reference (london's does not)."""


def _folder(run: RunResult, root: Path) -> Path:
    (folder,) = root.glob(f"*/*-{run.run_id}")
    return folder


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.fixture
def agent_server() -> Iterator[ScriptedOpenAIServer]:
    """The agent's model: every answer is the New York reference."""
    with ScriptedOpenAIServer(handler=lambda body: Reply.text(ANSWER)) as server:
        yield server


async def _finished_run(agent: AgentUnderTest, root: Path) -> Path:
    """The folder of a finished run of ``agent``, 2 runs per case, judged by ROUGE alone."""
    run = await evaluate(agent, EVAL_SET, EvalConfig(criteria=ROUGE), runs=2, output_dir=root)
    return _folder(run, root)


@pytest.fixture
async def source(agent_server: ScriptedOpenAIServer, tmp_path: Path) -> Path:
    """A finished run of the scripted agent."""
    agent = LiteLLMAgent("openai/scripted", api_base=agent_server.url, api_key="test")
    folder = await _finished_run(agent, tmp_path / "runs")
    assert agent_server.request_count == 4  # one model call per trial
    return folder


async def test_a_new_criterion_calls_no_agent_and_keeps_the_trials(
    source: Path, agent_server: ScriptedOpenAIServer
) -> None:
    install_demo()  # the demo judge answers final_response_match_v2 offline
    before = _snapshot(source)
    judged = CriterionConfig(threshold=0.5, judge_model="agentflow-demo/judge")
    config = EvalConfig(criteria={**ROUGE, "final_response_match_v2": judged})

    run = await rejudge(source, config, eval_set=EVAL_SET)

    assert agent_server.request_count == 4  # not one more: the agent was not called
    folder = _folder(run, source.parent.parent)
    assert folder.parent == source.parent and folder != source  # beside the source
    assert (folder / "trials.jsonl").read_bytes() == (source / "trials.jsonl").read_bytes()
    assert _snapshot(source) == before  # the source is only read
    assert {c.criterion for t in run.trials for c in t.criteria} == {
        "response_match_score",
        "final_response_match_v2",
    }
    assert run.totals.judge_calls > 0  # the new criterion was judged
    # the new run names its source: run.json, results.json, and a note the reports show
    source_run = json.loads((source / "results.json").read_text())
    named = {"run_id": source_run["run_id"], "run_dir": str(source)}
    assert read_run_json(folder)["rejudged_from"] == named
    results = json.loads((folder / "results.json").read_text())
    assert results["rejudged_from"] == named and results["run_id"] != named["run_id"]
    assert any(source_run["run_id"] in note and "re-judged" in note for note in run.notes)
    assert "re-judged from run" in (folder / "report.html").read_text()
    # what the trials were made by is the source's
    assert (run.agent, run.agent_model) == (source_run["agent"], "openai/scripted")


async def test_a_changed_threshold_changes_the_verdicts(source: Path) -> None:
    source_run = RunResult.model_validate_json((source / "results.json").read_text())
    assert source_run.totals.passed == 2  # london's answer is New York's: ROUGE fails it

    lenient = EvalConfig(criteria={"response_match_score": CriterionConfig(threshold=0.0)})
    run = await rejudge(source, lenient, eval_set=EVAL_SET)

    assert run.totals.passed == 4
    assert {c.threshold for t in run.trials for c in t.criteria} == {0.0}


async def test_a_second_rejudge_pays_no_judge_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "test")

    def demo_judge(body: dict[str, Any]) -> Reply:
        reply = demo_judge_reply("final_response_match_v2", body["messages"])
        assert reply is not None
        return Reply.text(reply)

    source = await _finished_run(PythonAgent(lambda message: ANSWER), tmp_path / "runs")
    cache = StoreJudgeCache(LocalStore(tmp_path / "judge-cache"))
    with ScriptedOpenAIServer(handler=demo_judge) as judge_server:
        settings = JudgeSettings(
            model="openai/judge", api_base=judge_server.url, api_key_env=KEY_ENV
        )
        config = EvalConfig(
            criteria={"final_response_match_v2": CriterionConfig(num_samples=1)}, judge=settings
        )
        first = await rejudge(source, config, eval_set=EVAL_SET, judge_cache=cache)
        paid = judge_server.request_count
        second = await rejudge(source, config, eval_set=EVAL_SET, judge_cache=cache)

        # one call per case: both trials of a case gave the same answer (the same prompt)
        assert paid == first.totals.judge_calls == 2
        assert judge_server.request_count == paid  # the second paid nothing
    assert second.totals.judge_calls == 0 and second.totals.judge_cache_hits == 4
    assert [t.status for t in second.trials] == [t.status for t in first.trials]


async def test_the_eval_set_must_hold_every_case_of_the_run(source: Path) -> None:
    fewer = EVAL_SET.model_copy(update={"eval_cases": EVAL_SET.eval_cases[:1]})
    before = set(source.parent.iterdir())
    with pytest.raises(InputError, match=r"1 of the run's cases are not in it \('london'\)"):
        await rejudge(source, eval_set=fewer)
    assert set(source.parent.iterdir()) == before  # no run folder was made


async def test_more_cases_than_the_run_had_are_left_out(source: Path) -> None:
    more = EVAL_SET.model_copy(
        update={"eval_cases": [*EVAL_SET.eval_cases, _case("paris", "Paris?", "Rain.")]}
    )
    run = await rejudge(source, EvalConfig(criteria=ROUGE), eval_set=more)
    assert sorted(case.case_id for case in run.cases) == ["london", "new_york"]


async def test_only_a_finished_run_with_trials(source: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a run folder"):
        await rejudge(tmp_path, eval_set=EVAL_SET)
    (source / "results.json").unlink()  # as a run stopped before its reports
    with pytest.raises(InputError, match=r"did not finish .*agentflow-eval run --resume"):
        await rejudge(source, eval_set=EVAL_SET)
    (source / "trials.jsonl").write_text("")
    with pytest.raises(InputError, match="has no trials"):
        await rejudge(source, eval_set=EVAL_SET)


async def test_a_run_started_from_python_needs_its_eval_set_named(source: Path) -> None:
    with pytest.raises(InputError, match=r"started from Python.*name the eval set"):
        await rejudge(source, EvalConfig(criteria=ROUGE))


async def test_a_stopped_rejudge_resumes_from_its_folder(source: Path, tmp_path: Path) -> None:
    evalset = tmp_path / "weather.evalset.json"
    evalset.write_text(EVAL_SET.model_dump_json())
    params = RunRequest(
        evalset=str(evalset), output_dir=str(tmp_path / "again"), rejudge_from=str(source)
    )
    handle, agent = plan_request(params)
    with handle:  # stopped after its trial stage
        assert agent is None
        await copy_trials_stage(handle.plan)
    folder = handle.paths.run_dir

    record = RunRecord.read(folder)
    resumed, _ = plan_request(record.params(), resume=record)
    async with ModelClient() as models:
        with resumed:
            outcome = await run_pipeline(resumed.plan, RunServices(None, models), DirectStages())

    assert resumed.paths.run_dir == folder
    assert (folder / "trials.jsonl").read_bytes() == (source / "trials.jsonl").read_bytes()
    assert outcome.run.rejudged_from is not None
    assert outcome.run.rejudged_from.run_dir == str(source)
    assert outcome.run.totals.trials == 4


async def test_the_evaluator_rejudges_a_run_folder_as_rejudge_does(source: Path) -> None:
    lenient = {"criteria": {"response_match_score": 0.0}}
    run = await AgentEvaluator.rejudge(source, lenient, eval_set=EVAL_SET)

    assert run.totals.passed == 4 and len(run.trials) == 4
    folder = _folder(run, source.parent.parent)
    assert folder.parent == source.parent and folder != source
    assert run.rejudged_from is not None and run.rejudged_from.run_dir == str(source)
    # its own criteria, as evaluate(): london's answer is New York's, so ROUGE fails it
    with pytest.raises(EvaluationFailed, match="pass rate 50%"):
        await AgentEvaluator.rejudge(
            source, EvalConfig(criteria=ROUGE), eval_set=EVAL_SET, min_pass_rate=1.0
        )
