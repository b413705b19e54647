"""Pieces of the Prefect tasks that need no server: artifact keys, shards,
the deploy-time project check, the secret mask."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentflow_eval.flows.support.deploy_steps import project_directory
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.pipeline.pairs import read_waves
from agentflow_eval.run.plan import RunPaths
from agentflow_eval.run.selection import shard_of
from agentflow_eval.tasks.support.artifacts import ArtifactScope, agent_key, artifact_keys
from agentflow_eval.tasks.support.secrets import MASK, SecretMask
from agentflow_eval.tasks.support.shards import finished_shards, merge_shards, shard_dir


def test_agent_keys_are_stable_across_folders_and_versions() -> None:
    assert agent_key("examples.weather.agent:agent") == "examples.weather.agent:agent"
    assert agent_key("/tmp/a/v2_agent.py:agent") == agent_key("/srv/b/v2_agent.py:agent")
    assert agent_key("https://agents.example.com/support/v1/") == "agents.example.com/support/v1"


def test_artifact_keys_separate_deployments_and_agents() -> None:
    nightly = artifact_keys("weather", ArtifactScope("weather-nightly", "pkg.weather:agent"))
    adhoc = artifact_keys("weather", ArtifactScope("adhoc", "pkg.weather:agent"))
    other = artifact_keys("weather", ArtifactScope("adhoc", "pkg.support:agent"))
    assert len({nightly.summary, adhoc.summary, other.summary}) == 3
    assert adhoc.summary == "adhoc-pkg-weather-agent-weather-summary"
    assert artifact_keys("weather").summary == "weather-summary"  # outside a deployment
    long = artifact_keys("x" * 90, ArtifactScope("d" * 90, "a"))
    other_long = artifact_keys("y" + "x" * 89, ArtifactScope("d" * 90, "a"))
    assert long.summary != other_long.summary and len(long.summary) <= 100


def _eval_set(count: int) -> EvalSet:
    return EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {"eval_id": f"c{i}", "conversation": [{"user_content": {"parts": [{"text": "q"}]}}]}
                for i in range(count)
            ],
        }
    )


def test_shards_split_every_case_exactly_once() -> None:
    eval_set = _eval_set(7)
    parts = [shard_of(eval_set, i, 3) for i in range(3)]
    ids = [c.eval_id for part in parts for c in part.eval_cases]
    assert sorted(ids) == sorted(c.eval_id for c in eval_set.eval_cases)
    assert [len(p.eval_cases) for p in parts] == [3, 2, 2]
    assert all(p.eval_set_id == "s" for p in parts)


def test_merging_shards_concatenates_their_lines(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    for index, lines in enumerate(['{"a": 1}\n', '{"b": 2}\n{"c": 3}']):
        folder = shard_dir(paths, index)
        folder.mkdir(parents=True)
        (folder / "trials.jsonl").write_text(lines)
        (folder / "judged.jsonl").write_text(lines)
    assert finished_shards(paths, 3) == {0, 1}
    with pytest.raises(FileNotFoundError, match=r"shards \[2\]"):
        merge_shards(paths, 3)
    assert merge_shards(paths, 2) == {"trials.jsonl": 3, "judged.jsonl": 3}
    assert (paths.run_dir / "judged.jsonl").read_text().splitlines() == [
        '{"a": 1}',
        '{"b": 2}',
        '{"c": 3}',
    ]


def test_merging_paired_shards_merges_both_sides_and_their_waves(tmp_path: Path) -> None:
    """Each paired shard hands back both sides and its waves: the baseline side's lines go
    to the run's against/ folder, the waves to one waves.jsonl, numbered anew, each
    marked with its shard (a shard without waves hands back an empty file)."""
    paths = RunPaths(tmp_path / "run")
    waves = [
        '{"wave": 1, "pairs": [["c0", 5]]}\n{"wave": 2, "pairs": [["c0", 6], ["c0", 7]]}\n',
        "",
    ]
    for index, case in enumerate(["c0", "c1"]):
        folder = shard_dir(paths, index)
        for side in (folder, folder / "against"):
            side.mkdir(parents=True)
            (side / "trials.jsonl").write_text(f'{{"case": "{case}"}}\n')
            (side / "judged.jsonl").write_text(f'{{"case": "{case}"}}\n')
        (folder / "waves.jsonl").write_text(waves[index])
    assert finished_shards(paths, 2, paired=True) == {0, 1}
    (shard_dir(paths, 1) / "waves.jsonl").unlink()
    assert finished_shards(paths, 2, paired=True) == {0}  # a shard counts with all its files
    assert finished_shards(paths, 2) == {0, 1}
    (shard_dir(paths, 1) / "waves.jsonl").write_text("")
    assert merge_shards(paths, 2, paired=True) == {
        "trials.jsonl": 2,
        "judged.jsonl": 2,
        "against/trials.jsonl": 2,
        "against/judged.jsonl": 2,
        "waves.jsonl": 2,
    }
    assert (paths.run_dir / "against" / "judged.jsonl").read_text().splitlines() == [
        '{"case": "c0"}',
        '{"case": "c1"}',
    ]
    assert read_waves(paths.run_dir) == [[("c0", 5)], [("c0", 6), ("c0", 7)]]
    lines = [json.loads(line) for line in (paths.run_dir / "waves.jsonl").read_text().splitlines()]
    assert [(line["wave"], line["shard"]) for line in lines] == [(1, 0), (2, 0)]


def test_the_project_folder_is_checked_at_deploy_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "evaluate.py").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTFLOW_EVAL_PROJECT_DIR", raising=False)
    assert project_directory() == {"directory": str(tmp_path.resolve())}
    monkeypatch.setenv("AGENTFLOW_EVAL_PROJECT_DIR", str(tmp_path / "gone"))
    with pytest.raises(ValueError, match="does not exist"):
        project_directory()
    monkeypatch.setenv("AGENTFLOW_EVAL_PROJECT_DIR", str(tmp_path / "flows"))
    with pytest.raises(ValueError, match=r"has no flows/evaluate\.py"):
        project_directory()


def test_the_secret_mask_hides_values_in_messages_and_tracebacks() -> None:
    mask = SecretMask(["sk-live-123", "sk-live-123456"])
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "key %s used", ("sk-live-123456",), None
    )
    assert mask.filter(record) and record.getMessage() == f"key {MASK} used"
    try:
        raise RuntimeError("bad key sk-live-123")
    except RuntimeError:
        import sys

        error = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    mask.filter(error)
    assert error.exc_info is None and "sk-live-123" not in (error.exc_text or "")
    assert MASK in (error.exc_text or "")
