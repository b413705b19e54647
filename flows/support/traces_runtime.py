"""How the ``evaluate-traces`` flow carries out a traces request: the intake in its own
task run (``read-traces``), each agent version's recording scored in a run of the
``evaluate`` flow (its stages in their task runs, its artifacts and events), S3
credentials from a Secret block."""

from __future__ import annotations

from pathlib import Path

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.score_traces import TracesPlan, TracesRuntime
from agentflow_eval.publish.publisher import PublishOutcome
from agentflow_eval.storage.targets import S3Credentials, Target
from agentflow_eval.tasks.publish import credentials_from_secret, publish_task
from agentflow_eval.tasks.read_traces import read_traces_task
from agentflow_eval.traces.summary import IntakeSummary

__all__ = ["PrefectTracesRuntime"]


class PrefectTracesRuntime(TracesRuntime):
    """The traces request carried out inside the current flow run (see the module)."""

    async def s3_credentials(self, request: TracesRequest) -> S3Credentials | None:
        name = request.s3.credentials_secret
        return await credentials_from_secret(name) if name else None

    async def intake(self, plan: TracesPlan) -> IntakeSummary:
        summary: IntakeSummary = await read_traces_task(plan)
        return summary

    async def score(self, request: RunRequest) -> RunOutcome:
        outcome: RunOutcome = await evaluate(**request.flow_parameters())
        return outcome

    async def publish(self, run_dir: Path, target: Target) -> PublishOutcome:
        published: PublishOutcome = await publish_task(run_dir, target)
        return published
