"""What a regression suite run shows in the Prefect UI: a markdown summary (verdict, a line
per eval set, the links), a table of the eval sets, and a link to summary.html.

Keys come from the suite's name (``regression-<suite>-summary``, ``-evals``, ``-link``),
so each suite's nightly runs line up in the Artifacts page as one history."""

from __future__ import annotations

from dataclasses import dataclass

from prefect.artifacts import (
    acreate_link_artifact,
    acreate_markdown_artifact,
    acreate_table_artifact,
)

from agentflow_eval.compare.suite import SuiteSummary
from agentflow_eval.files.naming import artifact_key
from agentflow_eval.report.suite_brief import suite_markdown, suite_table

__all__ = ["SuiteArtifactKeys", "publish_suite_artifacts", "suite_artifact_keys"]


@dataclass(frozen=True)
class SuiteArtifactKeys:
    summary: str
    evals: str
    link: str


def suite_artifact_keys(suite: str) -> SuiteArtifactKeys:
    base = artifact_key(f"regression-{suite}")[:80].strip("-")
    return SuiteArtifactKeys(f"{base}-summary", f"{base}-evals", f"{base}-link")


async def publish_suite_artifacts(
    summary: SuiteSummary, summary_url: str | None, publish_problem: str | None
) -> SuiteArtifactKeys:
    """Create the suite's artifacts on the current flow run; return their keys."""
    keys = suite_artifact_keys(summary.suite)
    await acreate_markdown_artifact(
        suite_markdown(summary, summary_url, publish_problem),
        key=keys.summary,
        description=f"Regression suite {summary.suite}: {summary.verdict}",
    )
    await acreate_table_artifact(
        suite_table(summary),
        key=keys.evals,
        description=f"Regression suite {summary.suite}: each eval set against its baseline",
    )
    if summary_url:
        await acreate_link_artifact(
            summary_url,
            link_text=f"{summary.suite}: {summary.verdict}",
            key=keys.link,
            description="The suite's summary page",
        )
    return keys
