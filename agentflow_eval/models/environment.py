"""The environment variables a front door reads into a run request. Only the doors read
them (the CLI, the flow on its worker, ``AgentEvaluator`` and ``evaluate()``), once, when
they build the request (:meth:`~agentflow_eval.models.request.RunRequest.with_environment`);
nothing deeper looks at the environment for a run setting."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["GIT_SHA_VARIABLES", "MAX_FILE_MB_ENV", "VERSION_VARIABLES", "first_set"]

VERSION_VARIABLES = ("AGENTFLOW_AGENT_VERSION",)
"""Where the agent's version comes from when the request does not say."""

GIT_SHA_VARIABLES = ("AGENTFLOW_GIT_SHA", "GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT")
"""Checked in order: this project's own, then GitHub Actions', GitLab CI's, Jenkins'."""

MAX_FILE_MB_ENV = "AGENTFLOW_MAX_FILE_MB"
"""The largest eval-set or config file read, in MiB, when the request does not say."""


def first_set(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that ``environ`` sets to something not blank."""
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None
