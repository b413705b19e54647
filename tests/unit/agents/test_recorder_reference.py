"""docs/agents.md's reference of the recorder names every public member of
``TrajectoryRecorder``, and nothing it does not have."""

from __future__ import annotations

import re
from pathlib import Path

from agentflow_eval.agents.base import TrajectoryRecorder
from tests.support.markdown_doc import section

AGENTS_MD = Path(__file__).resolve().parents[3] / "docs" / "agents.md"

_ROW = re.compile(r"^\| `(?:await )?recorder\.(?P<name>\w+)", re.MULTILINE)


def test_the_recorder_reference_lists_every_public_member() -> None:
    documented = set(_ROW.findall(section(AGENTS_MD.read_text(), "## The recorder")))
    recorder = TrajectoryRecorder()
    public = {name for name in dir(recorder) if not name.startswith("_")}
    assert documented == public, (
        f"missing from docs/agents.md: {sorted(public - documented)}; "
        f"documented but not on the recorder: {sorted(documented - public)}"
    )
