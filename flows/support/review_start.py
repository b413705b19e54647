"""A run that asks for its judges to be reviewed (``review_sample``): once it is
reported, a flow run of the review deployment is started for its folder, and the run goes
on to its end without waiting for the review (people may take days to answer).

What happened is one line for the run's summary: the review flow run started, or why
none was (no review deployment on this Prefect server, or the API refused it), with
what to do instead."""

from __future__ import annotations

from pathlib import Path

from prefect.deployments import arun_deployment
from prefect.exceptions import ObjectNotFound

from agentflow_eval.models.review_params import REVIEW_DEPLOYMENT, ReviewParams

__all__ = ["start_review"]


async def start_review(run_dir: Path, run_id: str, sample: int) -> str:
    """Start the review deployment on ``sample`` judged trials of the run at ``run_dir``
    (the trials whose judge's samples disagreed first); the line that says what came of
    it. Never waits for the review, and never starts two for one run."""
    params = ReviewParams(run=str(run_dir), size=sample, disagreeing_first=True)
    elsewhere = f"label it at a terminal instead: agentflow-eval review {run_dir}"
    try:
        started = await arun_deployment(
            REVIEW_DEPLOYMENT,
            # nulls left out: the server refuses a null for a typed parameter with a default
            parameters=params.model_dump(mode="json", exclude_none=True),
            flow_run_name=f"review-{run_id}"[:100],
            idempotency_key=f"agentflow-review-{run_id}",
            timeout=0,
            as_subflow=False,
        )
    except ObjectNotFound:
        return (
            f"Review of {sample} judged trials not started: this Prefect server has no "
            f"deployment {REVIEW_DEPLOYMENT} (deploy it with `prefect deploy --name judges`); "
            + elsewhere
        )
    except Exception as exc:  # the API refused the flow run: the summary says why
        return f"Review of {sample} judged trials not started: {exc}; {elsewhere}"
    return (
        f"Review of {sample} judged trials started: flow run {started.name} of "
        f"{REVIEW_DEPLOYMENT} waits for a reviewer's answers in the Prefect UI (this run's "
        "result does not depend on it)"
    )
