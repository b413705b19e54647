"""The ``evaluate-traces`` flow: production traces scored, by the one call every front
door of it ends in (:func:`agentflow_eval.pipeline.score_traces.score_traces`) with the
flow's runtime (:class:`~agentflow_eval.flows.support.traces_runtime.
PrefectTracesRuntime`): read-traces (the source's new objects claimed through the cursor,
sampled, recorded per agent version), then a run of the ``evaluate`` flow per version
(its trials copied from the recording and judged; its report, artifacts and events as any
run's), then the failing traces added to the candidates eval set.

Its parameters are the traces request's fields, top-level, so the Prefect UI renders them
as a form (:mod:`agentflow_eval.models.traces_request`). A retry of a flow run goes on
with the batch it started (the batch is named after the flow run). Started on a schedule
over the prefix, or by an event when new traces land (deployments in ``prefect.yaml``).
"""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import acreate_markdown_artifact
from prefect.runtime import flow_run

from agentflow_eval.flows.support.trace_markdown import traces_markdown
from agentflow_eval.flows.support.traces_runtime import PrefectTracesRuntime
from agentflow_eval.flows.support.trigger import trigger_track
from agentflow_eval.models import defaults
from agentflow_eval.models.request import (
    S3,
    Alpha,
    JudgeModel,
    Labels,
    OutputDir,
    PublishTo,
    RunTimeout,
    S3Options,
    Track,
)
from agentflow_eval.models.traces_request import (
    DEFAULT_TRACE_FILES,
    CandidatesTo,
    CaseAttribute,
    Include,
    MaxObjects,
    ResumeBatch,
    SampleRate,
    Strata,
    TraceConfig,
    TraceMaxFileMb,
    TracesEvalSetId,
    TraceSource,
    TracesRequest,
    VersionAttribute,
)
from agentflow_eval.pipeline.score_traces import TracesOutcome, score_traces
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.tasks.support.artifacts import ArtifactScope
from agentflow_eval.tasks.support.events import emit_comparison

__all__ = ["evaluate_traces"]

_NO_S3 = S3Options()

install_log_redaction()


@flow(name="evaluate-traces")
async def evaluate_traces(
    source: TraceSource,
    *,
    config: TraceConfig,
    eval_set_id: TracesEvalSetId = None,
    case_attribute: CaseAttribute = None,
    version_attribute: VersionAttribute = defaults.TRACE_VERSION_ATTRIBUTE,
    sample_rate: SampleRate = 1.0,
    strata: Strata = [],  # noqa: B006 (validated into a new list)
    max_objects: MaxObjects = None,
    include: Include = list(DEFAULT_TRACE_FILES),  # noqa: B006 (validated into a new list)
    candidates_to: CandidatesTo = None,
    judge_model: JudgeModel = None,
    output_dir: OutputDir = defaults.OUTPUT_DIR,
    publish_to: PublishTo = None,
    s3: S3 = _NO_S3,
    labels: Labels = {},  # noqa: B006
    track: Track = None,
    timeout_minutes: RunTimeout = defaults.RUN_TIMEOUT_MINUTES,
    max_file_mb: TraceMaxFileMb = defaults.TRACE_MAX_MB,
    alpha: Alpha = 0.05,
    resume: ResumeBatch = None,
) -> TracesOutcome:
    """Score the production traces of `source` no earlier run read.

    Each agent version's traces are scored in a run of the `evaluate` flow (their
    results, report and events as any run's, with the version, the traces' window and
    the share scored in each result); traces that failed are added to the candidates
    eval set. A version whose pass rate dropped significantly from the version before it
    emits `agentflow.eval.regressed`. Unreadable, truncated or hostile traces are
    counted, named and skipped: they never fail the run. Bad input (a config whose
    criteria need references, a source that cannot be listed) fails it before anything
    is read.
    """
    request = TracesRequest.from_flow_parameters(locals())
    if request.track is None:
        request = request.updated(track=await trigger_track())
    outcome = await score_traces(request, PrefectTracesRuntime(), batch_id=_batch_id())
    for scored in outcome.versions:
        if scored.comparison is not None:  # a drop from the version before it
            run = scored.outcome.run
            emit_comparison(
                run,
                scored.comparison,
                report_url=scored.outcome.report_url
                or (scored.outcome.run_dir / "report.html").as_uri(),
                run_dir=scored.outcome.run_dir,
                scope=ArtifactScope.current(run.track),
            )
    await acreate_markdown_artifact(
        markdown=traces_markdown(outcome),
        key="traces-scored",
        description=f"production traces of {request.source}",
    )
    return outcome


def _batch_id() -> str | None:
    """The flow run's id: a retry of this flow run resumes the batch it started."""
    run_id = flow_run.id
    return f"flow-run-{run_id}" if run_id else None
