"""The ``regression`` flow: a suite of eval sets, each evaluated by its own ``evaluate``
flow run and compared with its baseline, then one verdict for the suite.

Each eval set becomes a flow run of the evaluate deployment (``evaluate_deployment``), all
started at once, so the work pool's workers share the suite; with no such deployment
(blank, or not found), they run as concurrent subflows in this flow run's process. The
suite then finds each eval set's published run by the label it gave it, reads its
``comparison.json``, and writes, publishes, shows and announces the suite's summary.

Its parameters are top-level, so the Prefect UI renders a form; their types, titles and
descriptions are in :mod:`agentflow_eval.models.regression`, and
:class:`~agentflow_eval.models.regression.RegressionParams` holds them together. Call it
with ``regression(**params.flow_parameters())``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID, uuid4

from prefect import flow, get_run_logger
from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectNotFound
from prefect.runtime import flow_run

from agentflow_eval.compare.suite import SuiteSummary
from agentflow_eval.compare.suite_outcomes import FlowRunEnd, eval_set_identity
from agentflow_eval.errors import RunStopped
from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models import defaults
from agentflow_eval.models.regression import (
    DEFAULT_EVALUATE_DEPLOYMENT,
    CrashRetries,
    Evals,
    EvalTimeout,
    EvaluateDeployment,
    RegressionParams,
    Suite,
    SuiteBaseline,
    SuitePublishTo,
)
from agentflow_eval.models.request import (
    S3,
    AgentVersion,
    FailOnRegression,
    GitSha,
    Labels,
    MaxCostIncrease,
    MaxLatencyIncrease,
    MaxTokenIncrease,
    MaxToolCallIncrease,
    OutputDir,
    RunRequest,
    S3Options,
    Secrets,
)
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.report.suite_brief import suite_lines
from agentflow_eval.tasks.suite import collect_suite_task, publish_suite_task
from agentflow_eval.tasks.support.events import emit_suite
from agentflow_eval.tasks.support.secrets import load_secrets
from agentflow_eval.tasks.support.suite_artifacts import publish_suite_artifacts

__all__ = ["EVALUATE_POLL_S", "SuiteGateFailed", "regression"]

EVALUATE_POLL_S = 2.0
"""How often the suite asks the API whether an eval set's evaluate flow run finished."""

_NO_S3 = S3Options()

install_log_redaction()


@flow(name="regression")
async def regression(
    evals: Evals,
    publish_to: SuitePublishTo,
    suite: Suite = "nightly",
    baseline: SuiteBaseline = "latest",
    fail_on_regression: FailOnRegression = False,
    max_cost_increase: MaxCostIncrease = None,
    max_latency_increase: MaxLatencyIncrease = None,
    max_token_increase: MaxTokenIncrease = None,
    max_tool_call_increase: MaxToolCallIncrease = None,
    evaluate_deployment: EvaluateDeployment = DEFAULT_EVALUATE_DEPLOYMENT,
    eval_timeout_minutes: EvalTimeout = defaults.SUITE_EVAL_TIMEOUT_MINUTES,
    crash_retries: CrashRetries = defaults.SUITE_CRASH_RETRIES,
    s3: S3 = _NO_S3,
    output_dir: OutputDir = defaults.OUTPUT_DIR,
    agent_version: AgentVersion = None,
    git_sha: GitSha = None,
    labels: Labels = {},  # noqa: B006 (validated into a new dict; never mutated)
    secrets: Secrets = {},  # noqa: B006
) -> SuiteSummary:
    """Evaluate each eval set of the suite against its baseline, concurrently, and give
    the suite's verdict: a regression anywhere, an eval set without an evaluated run
    (incomplete), an improvement, or no significant change.

    The summary (summary.json and summary.html) is written under the output folder and
    published under `<publish_to>/regression/<suite>/`; a summary and a table artifact,
    the log and the `agentflow.eval.suite-completed` event (and `suite-regressed`,
    `suite-incomplete`, and `suite-publish-failed`) say how it went. With
    `fail_on_regression`, the run fails after all that when an eval set regressed, failed,
    or could not be compared with its baseline (a first run, with nothing to compare with
    yet, passes).

    The suite always ends: an evaluate run still going after `eval_timeout_minutes` is
    cancelled and its eval set reported incomplete, and one that crashed (its worker
    lost) is started again up to `crash_retries` times.
    """
    params = RegressionParams.from_flow_parameters(locals())
    logger = get_run_logger()
    started = datetime.now(UTC)
    run_id = str(flow_run.id or uuid4())
    run_name = flow_run.name if isinstance(flow_run.name, str) else None
    tags = [params.tag(run_id, index) for index in range(len(params.evals))]
    identities = await asyncio.to_thread(
        lambda: [eval_set_identity(entry.evalset) for entry in params.evals]
    )
    names = [
        f"{run_name or params.suite}-{index + 1}-{identity.eval_set_id}"[:100]
        for index, identity in enumerate(identities)
    ]
    children = [params.evaluate_params(index, tag) for index, tag in enumerate(tags)]

    limits = _ChildLimits(params.eval_timeout_minutes, params.crash_retries)
    deployment = await _deployment_id(params.evaluate_deployment)
    if deployment is not None:
        logger.info(
            "starting %d evaluate flow runs of deployment %s",
            len(children),
            params.evaluate_deployment,
        )
        ends = await asyncio.gather(
            *(
                _run_deployed(deployment, child, name, limits)
                for child, name in zip(children, names, strict=True)
            )
        )
    else:
        if params.evaluate_deployment.strip():
            logger.warning(
                "no deployment %r: the %d eval sets run as subflows in this process",
                params.evaluate_deployment,
                len(children),
            )
        # one process, one environment: the provider keys are set once for all subflows
        async with load_secrets(params.secrets):
            ends = await asyncio.gather(
                *(
                    _run_in_process(child.model_copy(update={"secrets": {}}), name, limits)
                    for child, name in zip(children, names, strict=True)
                )
            )

    summary = await collect_suite_task(
        params,
        identities,
        tags,
        list(ends),
        flow_run_id=run_id,
        flow_run_name=run_name,
        started_at=started,
        finished_at=datetime.now(UTC),
    )
    published = await publish_suite_task(summary, params)
    problem = None if published.published else published.message
    summary_url = published.summary_url
    await publish_suite_artifacts(summary, summary_url, problem)
    local_page = (published.local_dir / "summary.html").resolve().as_uri()
    text = "\n".join(suite_lines(summary, summary_url or local_page))
    (logger.warning if summary.regressed or summary.failed else logger.info)(text)
    emit_suite(
        summary, summary_url=summary_url, publish_problem=problem, local_dir=published.local_dir
    )
    if summary.gate_failed:
        raise SuiteGateFailed(summary)
    return summary


class SuiteGateFailed(RunStopped):
    """A suite run with ``fail_on_regression`` in which an eval set regressed, failed,
    or could not be compared with its baseline; its summary is written, published and
    announced all the same."""

    def __init__(self, summary: SuiteSummary) -> None:
        self.summary = summary
        failing = [o for o in summary.evals if o.fails_gate]
        named = ", ".join(f"{o.eval_set_id} ({o.status})" for o in failing)
        super().__init__(f"suite {summary.suite}: fail_on_regression: {named}")

    def __reduce__(self) -> tuple[type[SuiteGateFailed], tuple[SuiteSummary]]:
        return type(self), (self.summary,)


async def _deployment_id(name: str) -> UUID | None:
    """The id of deployment ``name`` (``flow/deployment``), or None when blank or absent."""
    name = name.strip()
    if not name:
        return None
    async with get_client() as client:
        try:
            return (await client.read_deployment_by_name(name)).id
        except (ObjectNotFound, ValueError):
            return None


@dataclass(frozen=True)
class _ChildLimits:
    """How long the suite waits for an eval set's run, and how often a crashed one is
    started again."""

    timeout_minutes: float
    crash_retries: int

    @property
    def timeout_s(self) -> float:
        return self.timeout_minutes * 60

    def overdue(self) -> str:
        return f"did not finish within {self.timeout_minutes:g} min (eval_timeout_minutes)"


def _after_crashes(message: str | None, crashes: list[str]) -> str | None:
    """``message``, preceded by the crashed attempts before it, if any."""
    if not crashes:
        return message
    before = f"after {len(crashes)} crashed attempt(s) ({'; '.join(crashes)})"
    return f"{before}: {message}" if message else before


async def _run_deployed(
    deployment: UUID, params: RunRequest, name: str, limits: _ChildLimits
) -> FlowRunEnd:
    """A flow run of the evaluate deployment, shown under this flow run. Waits for it at
    most ``limits.timeout_minutes``, then cancels it; starts it again when it crashed (its
    worker lost), up to ``limits.crash_retries`` times."""
    from prefect.deployments import arun_deployment

    crashes: list[str] = []
    while True:
        run_name = name if not crashes else f"{name}-retry-{len(crashes)}"[-100:]
        try:
            child = await arun_deployment(
                deployment,
                # nulls left out: the server refuses a null for a typed parameter with a
                # default
                parameters=params.model_dump(mode="json", exclude_none=True),
                flow_run_name=run_name,
                # a request the API client repeats (its answer lost) returns this run
                idempotency_key=f"{flow_run.id}:{run_name}",
                as_subflow=True,
                timeout=limits.timeout_s,
                poll_interval=EVALUATE_POLL_S,
            )
        except Exception as exc:  # the API refused the run: the eval set has no run, stated
            why = f"could not be started: {exc}"
            return FlowRunEnd(name=run_name, state=None, message=_after_crashes(why, crashes))
        state = child.state
        if state is None or not state.is_final():
            await _cancel(child.id, limits.overdue())
            return FlowRunEnd(
                name=child.name,
                state=state.name if state else None,
                message=_after_crashes(f"{limits.overdue()}; cancelled", crashes),
            )
        if state.is_crashed() and len(crashes) < limits.crash_retries:
            crashes.append(f"{child.name}: {state.message or state.name}")
            get_run_logger().warning(
                "evaluate run %s crashed (%s): starting it again, retry %d of %d",
                child.name,
                state.message or "no message",
                len(crashes),
                limits.crash_retries,
            )
            continue
        return FlowRunEnd(
            name=child.name,
            state=state.name,
            message=_after_crashes(state.message, crashes),
            completed=state.is_completed(),
        )


async def _cancel(flow_run_id: UUID, why: str) -> None:
    """Ask for flow run ``flow_run_id`` to be cancelled (its worker, if still there,
    stops its process); the suite does not wait for it."""
    from prefect.states import Cancelling

    try:
        async with get_client() as client:
            await client.set_flow_run_state(flow_run_id, Cancelling(message=why), force=True)
    except Exception as exc:  # the suite ends all the same; its summary says why
        get_run_logger().warning("could not cancel flow run %s: %s", flow_run_id, exc)


async def _run_in_process(params: RunRequest, name: str, limits: _ChildLimits) -> FlowRunEnd:
    """The evaluate flow as a subflow of this flow run; its failure is its state. One
    still going after ``limits.timeout_minutes`` is cancelled (a crash cannot be retried
    here: it would have taken this process with it)."""
    try:
        state = await asyncio.wait_for(
            evaluate.with_options(flow_run_name=name)(
                **params.flow_parameters(), return_state=True
            ),
            timeout=limits.timeout_s,
        )
    except TimeoutError:
        return FlowRunEnd(name=name, state=None, message=f"{limits.overdue()}; cancelled")
    return FlowRunEnd(
        name=name,
        state=state.name,
        message=state.message,
        completed=state.is_completed(),
    )
