"""The end-to-end tier's start order: the measured length of its long units of work, and
what a unit is (tests/e2e/conftest.py sorts the tier and schedules xdist by them)."""

from __future__ import annotations

from pathlib import Path

UNIT_SECONDS = {
    "test_lost_worker.py": 343,
    "test_scale_out.py": 155,
    "test_user_project.py": 152,
    "test_deployments.py": 145,
    "test_docs.py[criteria.md]": 120,
    "test_docs.py[agents.md]": 107,
    "test_regression_suite.py": 106,
    "test_swallowed_cancellation.py": 104,
    "test_postgres_pool.py": 68,
    "test_production_traces.py": 61,
    "test_paired_runs.py": 60,
    "test_review_form.py": 48,
    "test_pytest_plugin.py": 47,
    "test_docs.py[eval-sets.md]": 46,
    "test_cli_terminal.py": 45,
    "test_temporary_api.py": 42,
    "test_docs.py[traces.md]": 39,
    "test_faults_cli.py": 38,
    "test_compare_efficiency.py": 37,
    "test_faults_agent_io.py": 33,
    "test_docs.py[mcp.md]": 32,
    "test_browser_report.py": 31,
    "test_docs.py[frameworks/langgraph.md]": 29,
    "test_docs.py[frameworks/pydantic_ai.md]": 27,
    "test_page_widths.py": 23,
    "test_docs.py[frameworks/openai_agents.md]": 22,
    "test_resume_after_kill.py": 21,
    "test_unstoppable_agent.py": 20,
}
"""Wall seconds of each unit of work that takes 20 s or more, as a run of ``.ci/run``
measured them (a module, or a page of a SPLIT module). Units start longest first, the
others after them in collection order, so the three workers end close together instead
of one finishing a long unit it took last. Only the order matters, and only for the
tier's wall time: a new long module goes in at its measured place."""
SPLIT = ("test_docs.py",)
"""Modules whose tests are units of their own (they share no module fixture, so nothing
is set up twice)."""


def unit_of(nodeid: str) -> str:
    """The unit of work the test ``nodeid`` belongs to, named as in UNIT_SECONDS: its
    module's file name, with the test's parameters for a SPLIT module."""
    module, _, test = nodeid.partition("::")
    name = Path(module).name
    if name in SPLIT and "[" in test:
        return name + test[test.index("[") :]
    return name
