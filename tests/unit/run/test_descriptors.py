"""A run's concurrency against the file-descriptor limit: the soft limit is raised to
what the trials and judge calls in flight need, as far as the hard limit allows, and the
trials lowered to what fits beyond it — said in one line."""

from __future__ import annotations

import resource

import pytest

from agentflow_eval.run.descriptors import (
    FDS_PER_JUDGE_CALL,
    FDS_PER_TRIAL,
    PROCESS_FDS,
    descriptor_budget,
    fit_descriptors,
)


def test_enough_changes_nothing() -> None:
    budget = descriptor_budget(16, 8, soft=1024, hard=4096)
    assert budget.needed == PROCESS_FDS + 16 * FDS_PER_TRIAL + 8 * FDS_PER_JUDGE_CALL
    assert budget.raise_soft_to is None and budget.max_concurrency == 16
    assert budget.warning is None


def test_the_soft_limit_is_raised_to_what_is_needed() -> None:
    budget = descriptor_budget(1024, 8, soft=1024, hard=1_048_576)
    assert budget.raise_soft_to == budget.needed == PROCESS_FDS + 1024 * 4 + 8 * 2
    assert budget.max_concurrency == 1024
    assert budget.warning == (
        f"raised the soft file-descriptor limit from 1024 to {budget.needed}: 1024 trials in "
        f"flight need about {budget.needed} descriptors (4 per trial, 2 per judge call in "
        "flight, 256 for the process)"
    )


def test_beyond_the_hard_limit_the_concurrency_is_lowered() -> None:
    budget = descriptor_budget(1024, 8, soft=1024, hard=2048)
    assert budget.raise_soft_to == 2048
    assert budget.max_concurrency == (2048 - PROCESS_FDS - 8 * 2) // FDS_PER_TRIAL
    warning = budget.warning
    assert warning is not None and "\n" not in warning
    assert warning.startswith(
        f"raised the soft file-descriptor limit from 1024 to 2048 and lowered max "
        f"concurrency from 1024 to {budget.max_concurrency} trials"
    )


def test_a_hard_limit_already_reached_only_lowers() -> None:
    budget = descriptor_budget(1024, 8, soft=1024, hard=1024)
    assert budget.raise_soft_to is None and budget.max_concurrency == (1024 - 256 - 16) // 4
    assert budget.warning is not None and budget.warning.startswith("lowered max concurrency")


def test_this_process_limit_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        budget = fit_descriptors(400, 8)
        assert budget.raise_soft_to == budget.needed > 1024
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == budget.needed
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
