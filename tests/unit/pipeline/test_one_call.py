"""The one call every front door ends in: the demo model installed whatever door starts
the run, the request's gates decided once, what the direct runtime refuses, and a
re-judge's request completed from its source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentflow_eval import AgentEvaluator, evaluate
from agentflow_eval.demo.names import DEMO_PROVIDER
from agentflow_eval.errors import InputError
from agentflow_eval.llm import litellm_compat
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.execute import NeedsPrefect, RunObjects, Runtime, execute
from agentflow_eval.pipeline.gates import gate_verdict

ROOT = Path(__file__).resolve().parents[3]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
CONFIG = str(ROOT / "examples/weather/eval_config.json")
AGENT = "examples.weather.agent:agent"


@pytest.fixture
def no_demo_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteLLM as a fresh process has it: the offline demo model not registered."""
    import litellm

    monkeypatch.setattr(
        litellm,
        "custom_provider_map",
        [p for p in litellm.custom_provider_map if p.get("provider") != DEMO_PROVIDER],
    )
    assert not litellm_compat.has_custom_provider(DEMO_PROVIDER)


@pytest.mark.usefixtures("no_demo_model")
async def test_evaluate_runs_the_shipped_example_as_agent_evaluator_does(tmp_path: Path) -> None:
    """The public evaluate() installs the demo model the example names, as every door
    does: the shipped example's trials answer (none errored) and score as through
    AgentEvaluator, trial for trial (the demo model is seeded per trial)."""
    run = await evaluate(AGENT, EVALSET, CONFIG, runs=5, output_dir=tmp_path / "a")
    assert run.totals.errored == 0, [t.error for t in run.trials if t.error]
    through_evaluator = await AgentEvaluator(AGENT, CONFIG).evaluate(
        EVALSET, runs=5, output_dir=tmp_path / "b"
    )
    assert (run.totals.passed, run.totals.trials) == (
        through_evaluator.totals.passed,
        through_evaluator.totals.trials,
    )
    assert (run.totals.passed, run.totals.trials) == (6, 10)


async def test_the_gates_are_decided_once_on_the_outcome(tmp_path: Path) -> None:
    request = RunRequest(
        agent=AGENT, evalset=EVALSET, config=CONFIG, runs=2, output_dir=str(tmp_path),
        min_pass_rate=0.99,
    )  # fmt: skip
    outcome = await execute(request)
    gates = outcome.gates
    totals = outcome.run.totals
    assert gates.min_pass_rate == 0.99 and gates.failed
    assert gates.reasons() == [
        f"pass rate {totals.pass_rate:.0%} ({totals.passed} of {totals.rated_trials} trials) "
        "is below min_pass_rate 99%"
    ]
    # a request without gates has nothing to fail, whatever the pass rate
    assert not gate_verdict(request.updated(min_pass_rate=None), outcome.run, None).failed
    # 0 is no gate, as the form's default says
    assert not gate_verdict(request.updated(min_pass_rate=0), outcome.run, None).failed


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"secrets": {"OPENAI_API_KEY": "openai"}}, "secrets"),
        ({"shards": 2}, "shards=2"),
        ({"shared_storage": "s3-bucket/x"}, "shared_storage"),
        ({"s3": {"credentials_secret": "creds"}}, "s3.credentials_secret"),
        ({"review_sample": 20}, "review_sample=20"),
    ],
)
async def test_the_direct_runtime_refuses_what_only_the_flow_reads(
    tmp_path: Path, extra: dict, named: str
) -> None:
    request = RunRequest(agent=AGENT, evalset=EVALSET, output_dir=str(tmp_path), **extra)
    with pytest.raises(NeedsPrefect, match=named):
        await execute(request)
    assert not any(tmp_path.iterdir()), "nothing is written for a refused request"


async def test_a_request_without_an_eval_set_needs_one_handed_over(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="evalset: the eval set to run is required"):
        await execute(RunRequest(agent=AGENT, output_dir=str(tmp_path)))


async def test_a_rejudge_takes_what_its_request_leaves_out_from_its_source(
    tmp_path: Path,
) -> None:
    source = await execute(
        RunRequest(agent=AGENT, evalset=EVALSET, config=CONFIG, runs=1, output_dir=str(tmp_path))
    )
    again = await execute(
        RunRequest(rejudge_from=str(source.run_dir), output_dir=str(tmp_path / "again"))
    )
    recorded = json.loads((again.run_dir / "run.json").read_text())["params"]
    assert (recorded["evalset"], recorded["config"]) == (EVALSET, CONFIG)
    assert again.run.totals.trials == source.run.totals.trials


async def test_objects_are_used_instead_of_what_the_request_names(tmp_path: Path) -> None:
    from agentflow_eval.files.loading import load_evalset

    eval_set = load_evalset(EVALSET).eval_set
    one_case = eval_set.model_copy(update={"eval_cases": eval_set.eval_cases[:1]})
    outcome = await execute(
        RunRequest(agent=AGENT, runs=1, output_dir=str(tmp_path)),
        Runtime(),
        objects=RunObjects(eval_set=one_case),
    )
    assert [case.case_id for case in outcome.run.cases] == [one_case.eval_cases[0].eval_id]
    # a run started from objects records no request to resume from
    assert "params" not in json.loads((outcome.run_dir / "run.json").read_text())


async def test_every_case_can_be_held_to_a_pass_rate(tmp_path: Path) -> None:
    """min_case_pass_rate: a run whose overall rate meets min_pass_rate still fails when a
    case falls below the floor, and says which; every door renders that line."""
    request = RunRequest(
        agent=AGENT, evalset=EVALSET, config=CONFIG, runs=5, output_dir=str(tmp_path),
        min_pass_rate=0.5, min_case_pass_rate=0.6,
    )  # fmt: skip
    outcome = await execute(request)
    rates = {case.case_id: case.pass_rate for case in outcome.run.cases}
    below = sorted(case for case, rate in rates.items() if rate < 0.6)
    assert outcome.run.totals.pass_rate >= 0.5 and below  # the demo agent: 6/10, 2/5 and 4/5
    assert outcome.gates.shortfalls == (
        f"{len(below)} case(s) below min_case_pass_rate 60%: "
        + ", ".join(f"{case} {rates[case]:.0%}" for case in below),
    )
    with pytest.raises(Exception, match="below min_case_pass_rate 60%"):
        await AgentEvaluator(AGENT, CONFIG).evaluate(
            EVALSET, runs=5, output_dir=str(tmp_path / "e"), min_case_pass_rate="60%"
        )
    held = gate_verdict(request.updated(min_case_pass_rate=0.4), outcome.run, None)
    assert not held.failed
