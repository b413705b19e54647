"""The ``review`` flow: people check a finished run's LLM judges in the Prefect UI.

It reads the run, draws the sample to review (:func:`agentflow_eval.review.sampling.
plan_review`: stratified by the judge's verdict, the trials whose judge's samples
disagreed first when asked), and pauses on each sampled trial for a reviewer's answer
(``pause_flow_run(wait_for_input=...)``): the UI's Resume dialog shows the trial — the
case, the conversation and its tool calls, the answer and the reference, the criterion,
the judge's verdict, score and reasoning — above a form taking the verdict (pass or fail,
or the rubric's scale), a note and the reviewer's name. Each answer is appended to the
run's labels as it is given, so a review stopped midway loses nothing, and a new review
of the run with the same sample goes on with the trials this reviewer has not labelled.
At the end, the judges' agreement with the labels is written beside the run and shown as
an artifact.

Its parameters are top-level, so the Prefect UI renders a form; their types, titles and
descriptions are in :mod:`agentflow_eval.models.review_params`.
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.artifacts import acreate_markdown_artifact
from prefect.flow_runs import apause_flow_run

from agentflow_eval.files.naming import artifact_key
from agentflow_eval.flows.support.review_form import answer_form
from agentflow_eval.models.review_params import (
    ReviewCriteria,
    ReviewDisagreeingFirst,
    Reviewer,
    ReviewParams,
    ReviewRun,
    ReviewSeed,
    ReviewSharedStorage,
    ReviewSize,
    ReviewWait,
    ReviewWidth,
)
from agentflow_eval.pipeline.review_session import open_review, verdict_choices
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.report.agreement_text import agreement_lines
from agentflow_eval.report.review_item import item_markdown, review_markdown
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.tasks.support.storage import BlockStore, resolve_shared_storage

__all__ = ["review"]

POLL_S = 2
"""How often a paused review looks for the reviewer's answer: the next trial's form
follows an answer within this."""

install_log_redaction()


@flow(name="review")
async def review(
    run: ReviewRun,
    *,
    size: ReviewSize = None,
    width: ReviewWidth = None,
    criteria: ReviewCriteria = [],  # noqa: B006 (validated into a new list)
    disagreeing_first: ReviewDisagreeingFirst = False,
    reviewer: Reviewer = None,
    wait_hours: ReviewWait = 24.0,
    shared_storage: ReviewSharedStorage = None,
    seed: ReviewSeed = 0,
) -> int:
    """Check a run's LLM judges: a reviewer's verdict on each sampled judged trial, given
    in the form of this flow run's Resume dialog, appended to the run's labels
    (labels.jsonl) as it is given; then the judges' agreement with the labels. Returns
    the number of labels given.

    A trial this reviewer labelled before is not asked again (with no reviewer named, a
    trial anyone labelled). With no answer within `wait_hours`, the review stops, Failed;
    every label given is kept.
    """
    params = ReviewParams.from_flow_parameters(locals())
    logger = get_run_logger()
    session = open_review(params)
    if params.shared_storage:
        storage = await resolve_shared_storage(params.shared_storage)
        session.bank = LabelBank(BlockStore(storage))
    logger.info(session.opening_line())
    for position, item in session.remaining():
        form = answer_form(
            item_markdown(item, position=position, total=session.total),
            verdict_choices(item),
            params.reviewer,
        )
        answer = await apause_flow_run(
            wait_for_input=form,
            timeout=max(1, round(params.wait_hours * 3600)),
            poll_interval=POLL_S,
        )
        session.answer(item, answer.verdict, note=answer.note, reviewer=answer.reviewer)
    run_result = session.finish()
    for line in [*session.notes, *agreement_lines(run_result)]:
        logger.info(line)
    await acreate_markdown_artifact(
        review_markdown(session.plan, session.labels, run_result),
        key=artifact_key(f"{session.run.eval_set_id}-review"),
        description=f"the judges of run {session.run_id} against people's labels",
    )
    return session.given
