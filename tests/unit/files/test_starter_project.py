"""The starter project ``agentflow-eval init`` writes: every file, loadable as the run
will load it (an agent spec, an eval set with a case of each kind, its config beside
it); and nothing written when any of its files is already there."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.loader import load_agent
from agentflow_eval.files.loading import find_config_for, load_config, load_evalset
from agentflow_eval.files.starter_project import STARTER_FILES, StarterExists, write_starter


def test_the_starter_project_loads_as_a_run_loads_it(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "project"
    written = write_starter(folder)
    assert sorted(p.relative_to(folder).as_posix() for p in written) == sorted(
        item.path for item in STARTER_FILES
    )
    agent = load_agent(f"{folder / 'agent.py'}:agent")
    assert isinstance(agent, LiteLLMAgent) and agent.name == "starter_agent"
    assert agent.model.startswith("agentflow-demo/")  # offline by default
    evalset = folder / "evals" / "starter.evalset.json"
    cases = {case.eval_id: case for case in load_evalset(evalset).eval_set.eval_cases}
    answer, trajectory, turns = cases["final_answer"], cases["tool_trajectory"], cases["multi_turn"]
    assert answer.conversation[0].expected_final_response is not None
    assert len(trajectory.conversation[0].expected_tool_trajectory) == 2
    assert len(turns.conversation) == 2
    config_path = find_config_for(evalset)
    assert config_path == folder / "evals" / "test_config.json"
    config = load_config(config_path)
    assert set(config.criteria) == {"tool_trajectory_avg_score", "response_match_score"}
    assert "pytest.mark.agentflow" in (folder / "tests" / "test_starter_agent.py").read_text()


@pytest.mark.parametrize("existing", [item.path for item in STARTER_FILES])
def test_an_existing_file_is_never_overwritten_and_nothing_is_written(
    tmp_path: Path, existing: str
) -> None:
    mine = tmp_path / existing
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("mine", encoding="utf-8")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(StarterExists, match=f"{mine}: already exists") as caught:
        write_starter(tmp_path)
    assert "\n" not in str(caught.value)
    assert mine.read_text(encoding="utf-8") == "mine"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
