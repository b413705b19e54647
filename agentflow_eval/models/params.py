"""The evaluate flow's parameters: one pydantic model, so the Prefect UI renders a form and
the CLI, pytest and deployments all describe a run the same way."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EvaluateParams", "S3Options"]


class S3Options(BaseModel):
    """How to reach an S3-compatible store. Credentials come from the standard AWS chain
    (environment, profile, instance role) unless a Prefect Secret block is named."""

    model_config = ConfigDict(extra="forbid")

    endpoint_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:8333")
    region: str | None = None
    path_style: bool = Field(default=False, description="path-style addressing (MinIO, SeaweedFS)")
    credentials_secret: str | None = Field(
        default=None,
        description="name of a Prefect Secret block holding "
        '{"aws_access_key_id": ..., "aws_secret_access_key": ...}',
    )


class EvaluateParams(BaseModel):
    """One evaluation: which agent, which eval set, how many trials, where results go."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(
        description="the agent under test: package.module:attr, path/to/file.py:attr, or an "
        "http(s):// URL of an OpenAI-compatible endpoint"
    )
    evalset: str = Field(description="eval-set file (JSON/YAML, native or Google ADK) or folder")
    config: str | None = Field(
        default=None, description="config file; default: test_config.json beside the eval set"
    )
    runs: int | None = Field(default=None, ge=1, description="trials per case (default 5)")
    cases: list[str] | None = Field(
        default=None,
        description="only the cases whose id matches one of these shell-style patterns "
        "(e.g. weather_*); default: every case",
    )
    limit: int | None = Field(
        default=None, ge=1, description="only the first N cases (after cases); default: all"
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, description="trials in flight at once (default 16)"
    )
    trial_timeout_s: float | None = Field(
        default=None, gt=0, description="seconds before a trial is failed as hung (default 120)"
    )
    model: str | None = Field(
        default=None, description="LiteLLM model for a LiteLLM agent, overriding its own"
    )
    judge_model: str | None = Field(default=None, description="LiteLLM model for LLM judges")
    output_dir: str = Field(default="eval-results", description="local folder for run folders")
    resume: str | None = Field(
        default=None, description="an earlier run folder to finish: finished trials are kept"
    )
    publish_to: str | None = Field(
        default=None, description="s3://bucket/prefix or a folder to publish the report to"
    )
    s3: S3Options = Field(default_factory=S3Options)
