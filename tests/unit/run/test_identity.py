"""What a run records about the agent: from the caller, else from the CI variables of the
environment the front door passes."""

from __future__ import annotations

from agentflow_eval.run.identity import RunIdentity


def test_identity_from_the_caller_else_the_environment() -> None:
    env = {"AGENTFLOW_AGENT_VERSION": "1.2", "GITHUB_SHA": "abc", "CI_COMMIT_SHA": "zzz"}
    identity = RunIdentity.of(env, labels={"env": "ci"})
    assert (identity.agent_version, identity.git_sha, dict(identity.labels)) == (
        "1.2",
        "abc",
        {"env": "ci"},
    )
    given = RunIdentity.of(env, agent_version="2.0", git_sha="def")
    assert (given.agent_version, given.git_sha) == ("2.0", "def")
    assert RunIdentity.of({}).agent_version is None
    assert RunIdentity.of({"AGENTFLOW_GIT_SHA": " ", "GIT_COMMIT": "c0ffee"}).git_sha == "c0ffee"
