"""Labels given while a run is stopped survive its resume: the resumed run's aggregation
finds them beside it and measures the criterion against them (a deterministic criterion
records no content key, so its labels count for their own trials of this run)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet, Invocation, Message
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.runner import DirectStages, RunServices, run_pipeline
from agentflow_eval.pipeline.stages import AgreementOptions, judge_stage, trials_stage
from agentflow_eval.review.labels import Label, append_labels, read_labels
from agentflow_eval.run.plan import plan_request
from agentflow_eval.run.run_json import RunRecord

AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
EVAL_SET = EvalSet(
    eval_set_id="towns",
    eval_cases=[
        EvalCase(eval_id=f"town_{n}", conversation=[Invocation(user_content=Message.of(f"{n}?"))])
        for n in range(4)
    ],
)
CONFIG = EvalConfig(criteria={"final_contains": CriterionConfig.model_validate({"text": "3"})})


async def test_labels_given_while_stopped_count_after_the_resume(tmp_path: Path) -> None:
    agent = PythonAgent(lambda message: f"town {message}")
    request = RunRequest(output_dir=str(tmp_path / "runs"), runs=2)
    handle, _ = plan_request(request, agent=agent, eval_set=EVAL_SET, config=CONFIG)
    async with ModelClient() as models:
        with handle:  # stopped after judging, before its reports
            await trials_stage(handle.plan, agent, models)
            await judge_stage(handle.plan, models, None)
    folder = handle.paths.run_dir
    run_id = handle.plan.meta.run_id
    labels = [  # people disagree with the criterion on town_1's first trial
        Label(
            run_id=run_id,
            case_id=f"town_{n}",
            trial=0,
            criterion="final_contains",
            content_key=None,
            label="pass" if n in (1, 3) else "fail",
            reviewer="ana",
            labelled_at=AT,
        )
        for n in range(4)
    ]
    append_labels(folder, labels)

    resumed, _ = plan_request(
        request.updated(resume=str(folder)),
        agent=agent,
        eval_set=EVAL_SET,
        config=CONFIG,
        resume=RunRecord.read(folder),
    )
    async with ModelClient() as models:
        with resumed:
            outcome = await run_pipeline(
                resumed.plan,
                RunServices(agent, models, agreement=AgreementOptions(bank=None)),
                DirectStages(),
            )

    assert read_labels(folder) == labels
    [agreement] = outcome.run.judge_agreement
    assert agreement.criterion == "final_contains" and agreement.labelled_trials == 4
    assert agreement.agreement is not None and agreement.agreement.value == 0.75
